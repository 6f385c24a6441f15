"""What every command module of the CLI shares: the consoles, the one error printer (errors users
cause become one line on stderr and exit code 2; bugs keep their tracebacks) and the output guard
(nothing the user gave is overwritten)."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Iterable, Optional

import typer
from rich.console import Console
from rich.text import Text

from judge.errors import JudgeInputError

err = Console(stderr=True, highlight=False, emoji=False, soft_wrap=True)


def console(width: int | None = 140, *, soft_wrap: bool = False) -> Console:
    """Standard output. Reports are read in CI logs too: a readable width when it is not a terminal
    (`width=None`: rich's own choice, COLUMNS or 80)."""
    return Console(highlight=False, soft_wrap=soft_wrap, emoji=False, width=None if sys.stdout.isatty() else width)


def error_line(message: str) -> None:
    """One line on stderr; the message is user data, never rich markup."""
    err.print(Text.assemble(("error: ", "red"), message))


def _is_user_error(exc: BaseException) -> bool:
    if isinstance(exc, JudgeInputError):
        return True
    from calibration.errors import CalibrationInputError

    return isinstance(exc, CalibrationInputError)


def user_errors(fn):
    """Render an error the user caused as one line on stderr with exit code 2 (bugs keep tracebacks)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if not _is_user_error(exc):
                raise
            error_line(str(exc))
            raise typer.Exit(2) from None
    return wrapper


# Files a command may read out of a folder it was given (a labels folder, a reports folder).
READ_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")


def refuse_overwriting_inputs(outputs: Iterable[Optional[Path]], inputs: Iterable[Optional[Path]]) -> None:
    """Nothing the user gave is overwritten: an output that is an input, by path or by inode (a
    hard link, a symlink), or an existing data file inside an input folder, is a usage error."""
    from judge.model.limits import same_file

    given = [p for p in inputs if p is not None]
    for path in outputs:
        if path is None:
            continue
        for source in given:
            inside = source.is_dir() and path.suffix in READ_SUFFIXES and path.is_file() and \
                path.resolve().is_relative_to(source.resolve())
            if inside or same_file(path, source):
                raise JudgeInputError("refusing to write over an input file", file=str(path))


def write_output(path: Path, text: str, inputs: Iterable[Optional[Path]] = ()) -> None:
    """Write a report (creating its folder), never over an input file."""
    refuse_overwriting_inputs([path], inputs)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise JudgeInputError(f"cannot write: {exc.strerror}", file=str(path)) from None


def offline_env() -> None:
    """Model libraries must not reach for a hub or print progress bars from the command line."""
    for key, value in (("HF_HUB_OFFLINE", "1"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                       ("TOKENIZERS_PARALLELISM", "false"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")):
        os.environ.setdefault(key, value)
