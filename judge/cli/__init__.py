"""The `judge` command line: parse, call the library, render. One module per command group; each
adds its commands in `register(app)`; `guard_commands` then puts every command behind the one error
printer (judge.cli.common): errors users cause are one line and exit code 2, a bug one line and 4.
A command's module is imported when that command runs (judge.cli.lazy): `judge grade` loads neither
the prompt registry nor the calibration, drafting or service commands."""

from __future__ import annotations

import typer

from judge.cli.common import error_line, set_debug, user_errors
from judge.cli.help import apply_conventions
from judge.cli.lazy import APP_SETTINGS, LazyGroup

__all__ = ["app", "error_line", "main", "user_errors"]

app = typer.Typer(**APP_SETTINGS, cls=LazyGroup, no_args_is_help=True,
                  help="Grade multi-turn agent runs for state drift against a reviewed ledger. Exit codes: "
                       "0 pass, 1 fail, 2 bad input, usage or configuration, 3 inconclusive, 4 internal error.")


def _version(value: bool) -> None:
    if value:
        from judge import __version__

        typer.echo(f"judge {__version__}")
        raise typer.Exit(0)


@app.callback()
def _options(debug: bool = typer.Option(False, "--debug", help="Print the traceback of an internal error "
                                        "(exit code 4) instead of one line (also: JUDGE_DEBUG=1)."),
             version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                          help="Print judge's version and exit.")) -> None:
    set_debug(debug)


apply_conventions(app)


def main() -> None:
    app()
