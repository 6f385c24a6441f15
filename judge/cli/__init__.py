"""The `judge` command line: parse, call the library, render. One module per command group; each
adds its commands in `register(app)`. Errors users cause are one line and exit code 2."""

from __future__ import annotations

import typer

from judge.cli import calibration, draft, grade, imports, prompts, serve, suite, summary
from judge.cli.common import error_line, user_errors

__all__ = ["app", "error_line", "main", "user_errors"]

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Grade multi-turn agent runs for state drift against a reviewed ledger.")

for _group in (grade, draft, calibration, prompts, serve, suite, imports, summary):
    _group.register(app)


def main() -> None:
    app()
