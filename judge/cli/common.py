"""What every command module of the CLI shares: the consoles, the one error printer (errors users
cause, and environment problems such as an unusable cache folder, become one line on stderr and
exit code 2; a bug becomes one line naming where its traceback was written and exit code 4, or the
traceback itself with `judge --debug` or JUDGE_DEBUG=1) and the output guard (nothing the user gave
is overwritten)."""

from __future__ import annotations

import enum
import functools
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from judge.errors import JudgeInputError

if TYPE_CHECKING:
    from rich.console import Console

    err: Console


@functools.cache
def stderr_console() -> Console:
    """The console of error lines and progress on stderr (`err`), made on first use: a command that
    ends well and prints nothing (`judge grade -q`) never imports rich."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, emoji=False, soft_wrap=True)


def __getattr__(name: str) -> Any:
    if name == "err":
        return stderr_console()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class OnJudgeError(str, enum.Enum):  # noqa: UP042 (StrEnum would change how members format)
    """`--on-judge-error`: what a key only a judge could decide does to its run when the judge gave
    no verdict (`[tool.judge].on_judge_error`)."""

    inconclusive = "inconclusive"
    ignore = "ignore"


def console(width: int | None = 140, *, soft_wrap: bool = False) -> Console:
    """Standard output. Reports are read in CI logs too: a readable width when it is not a terminal
    (`width=None`: rich's own choice, COLUMNS or 80). COLUMNS, when set, always wins."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=soft_wrap, emoji=False, width=report_width(width))


def report_width(default: int | None = 140) -> int | None:
    """The width of a report on stdout: COLUMNS when it is set (a terminal, or a CI job that says how
    wide its log is), the terminal's own width on a terminal, else `default` (a log or a pipe)."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return None if sys.stdout.isatty() else default


def error_line(message: str) -> None:
    """One line on stderr; the message is user data, never rich markup."""
    from rich.text import Text

    stderr_console().print(Text.assemble(("error: ", "red"), message))


def _is_user_error(exc: BaseException) -> bool:
    if isinstance(exc, JudgeInputError):
        return True
    from calibration.errors import CalibrationInputError

    return isinstance(exc, CalibrationInputError)


EXIT_INPUT, EXIT_INTERNAL = 2, 4  # as judge.grade.outcome: 2 input, usage, configuration; 4 a bug
DEBUG_ENV = "JUDGE_DEBUG"
_debug = {"on": False}


def set_debug(on: bool) -> None:
    """`judge --debug`: an internal error prints its traceback instead of one line."""
    _debug["on"] = on


def debugging() -> bool:
    return _debug["on"] or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _is_click_flow(exc: BaseException) -> bool:
    """typer.Exit, Abort and click's own usage errors: how a command ends, not a failure of ours.
    Every command ends in typer.Exit; click (which typer no longer uses: it carries its own copy) is
    asked only when something imported it, since none of its exceptions can exist before that, and
    importing it costs more than the rest of a short command."""
    if isinstance(exc, (typer.Exit, typer.Abort, getattr(typer, "TyperException", typer.Exit))):
        return True
    click = sys.modules.get("click")
    return click is not None and isinstance(
        exc, (click.exceptions.Exit, click.exceptions.Abort, click.exceptions.ClickException))


def _missing_extra(exc: BaseException, command: str) -> str | None:
    """An import of a module that only an extra brings (where no entry point checked first): one line
    naming the extra (judge.errors.missing_extra)."""
    from judge.errors import missing_extra

    needed = missing_extra(exc, f"judge {command}")
    return None if needed is None else str(needed)


def _environment_problem(exc: BaseException) -> str | None:
    """An OSError about a path (a folder that is a file, no permission, a full disk): one line."""
    if isinstance(exc, OSError) and getattr(exc, "filename", None):
        from judge.errors import one_line

        return one_line(f"{exc.filename}: {exc.strerror or exc} (check the path and its permissions)")
    return None


def internal_error(exc: BaseException, command: str) -> int:
    """One line on stderr saying what failed and where its full traceback was written (with
    --debug, the traceback itself); returns exit code 4."""
    import tempfile
    import traceback

    from judge.errors import one_line

    text = "".join(traceback.format_exception(exc))
    if debugging():
        sys.stderr.write(text)
    what = one_line(f"{type(exc).__name__}: {exc}")[:300]
    try:
        fd, path = tempfile.mkstemp(prefix="judge-error-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"judge {command}: internal error\n{text}")
        where = f"the full traceback is in {path}"
    except OSError as write_error:
        where = f"the traceback could not be written ({write_error.strerror}); rerun with --debug"
    from rich.text import Text

    stderr_console().print(Text.assemble(("internal error: ", "red"), f"judge {command} failed with {what}; {where}"))
    return EXIT_INTERNAL


def user_errors(fn):
    """Render an error the user caused (or an environment problem) as one line on stderr with exit
    code 2, and any other exception as one line and exit code 4 (`internal_error`)."""
    if getattr(fn, "_judge_guarded", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if _is_click_flow(exc):
                raise
            if _is_user_error(exc):
                error_line(str(exc))
                raise typer.Exit(EXIT_INPUT) from None
            command = fn.__name__.removesuffix("_command").removesuffix("_cmd").replace("_", "-")
            problem = _missing_extra(exc, command) or _environment_problem(exc)
            if problem is not None:
                if debugging():
                    import traceback

                    traceback.print_exception(exc, file=sys.stderr)
                error_line(problem)
                raise typer.Exit(EXIT_INPUT) from None
            raise typer.Exit(internal_error(exc, command)) from None
    wrapper._judge_guarded = True
    return wrapper


def guard_commands(app: typer.Typer) -> None:
    """Every command of `app` and of its sub-apps goes through `user_errors`, so no command can
    end in a traceback or in an exit code that means something else."""
    for command in app.registered_commands:
        if command.callback is not None:
            command.callback = user_errors(command.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            guard_commands(group.typer_instance)


# Files a command may read out of a folder it was given (a labels folder, a reports folder).
READ_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")


def refuse_overwriting_inputs(outputs: Iterable[Path | None], inputs: Iterable[Path | None]) -> None:
    """Nothing the user gave is overwritten: an output that is an input, by path or by inode (a
    hard link, a symlink), or an existing data file inside an input folder, is a usage error."""
    from judge.model import same_file

    given = [p for p in inputs if p is not None]
    for path in outputs:
        if path is None:
            continue
        for source in given:
            inside = source.is_dir() and path.suffix in READ_SUFFIXES and path.is_file() and \
                path.resolve().is_relative_to(source.resolve())
            if inside or same_file(path, source):
                raise JudgeInputError("refusing to write over an input file", file=str(path))


def write_output(path: Path, text: str | bytes | Iterable[str], inputs: Iterable[Path | None] = ()) -> None:
    """Write a report (creating its folder), never over an input file, atomically (a temporary file
    in the same folder, renamed into place: a kill or a full disk leaves the previous file whole)."""
    from judge.model import write_atomic

    refuse_overwriting_inputs([path], inputs)
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise JudgeInputError(f"cannot write: {exc.strerror}", file=str(path)) from None


def distinct_outputs(outputs: dict[str, Path | None]) -> None:
    """Two output options naming one file (`--json r.out --html r.out`: one would silently replace
    the other) are a usage error naming both options."""
    from judge.errors import UsageError
    from judge.model import same_file

    given = [(option, path) for option, path in outputs.items() if path is not None]
    for i, (option, path) in enumerate(given):
        for other, other_path in given[i + 1:]:
            if same_file(path, other_path):
                raise UsageError(f"{option} and {other} name the same file; give each its own path",
                                 file=str(path))


def offline_env() -> None:
    """Model libraries must not reach for a hub or print progress bars from the command line."""
    for key, value in (("HF_HUB_OFFLINE", "1"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                       ("TOKENIZERS_PARALLELISM", "false"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")):
        os.environ.setdefault(key, value)
