"""What every command module of the CLI shares: errors users cause become one line, exit code 2."""

from __future__ import annotations

import functools

import typer
from rich.console import Console
from rich.text import Text

from judge.errors import JudgeInputError

err = Console(stderr=True, highlight=False, emoji=False, soft_wrap=True)


def error_line(message: str) -> None:
    """One line on stderr; the message is user data, never rich markup."""
    err.print(Text.assemble(("error: ", "red"), message))


def user_errors(fn):
    """Render a JudgeInputError as one line on stderr with exit code 2 (bugs keep tracebacks)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except JudgeInputError as exc:
            error_line(str(exc))
            raise typer.Exit(2) from None
    return wrapper
