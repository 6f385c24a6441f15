"""`judge runs list | diff`: the run log every `judge grade` keeps (judge.grade.history), and the
hook `judge grade` calls to add its report to it.

Exit codes: `list` 0; `diff` 1 when B regressed from A (a key newly fails, or an outcome got worse),
0 otherwise; both 2 on bad input (one line, no traceback).
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from judge.cli.common import console, err, user_errors

LOG_DIR_HELP = ("The run log folder (default: $JUDGE_LOG_DIR, else [tool.judge] log_dir, else .judge/runs "
                "beside the nearest pyproject.toml, else in the current folder).")
CONFIG_HELP = "A TOML file holding a [tool.judge] table (default: $JUDGE_CONFIG, else the nearest pyproject.toml)."


def _folder(directory: Path | None, config: Path | None) -> Path:
    from judge.config import run_log_dir

    return directory if directory is not None else run_log_dir(config_file=config)[0]


def log_run(report, config: Path | None, *, quiet: bool = False) -> Path | None:
    """Add a grade report to the run log. A log that cannot be written is a warning on stderr
    (unless `quiet`), never a failure of the grade."""
    from judge.errors import JudgeInputError
    from judge.grade import write_run

    try:
        return write_run(report, _folder(None, config))
    except (OSError, JudgeInputError) as exc:
        if not quiet:
            what = f"{exc.filename}: {exc.strerror}" if isinstance(exc, OSError) and exc.filename else str(exc)
            err.print(Text.assemble(("warning: ", "yellow"), f"run log not written: {what} (the grade stands; "
                                    "--no-log skips the log)"))
        return None


@user_errors
def list_cmd(
    directory: Path | None = typer.Option(None, "--dir", metavar="DIR", help=LOG_DIR_HELP),
    config: Path | None = typer.Option(None, "--config", metavar="FILE", help=CONFIG_HELP),
    limit: int | None = typer.Option(20, "--limit", "-n", min=1, metavar="N", help="Show the N newest runs."),
) -> None:
    """List the logged grades, newest first: when, id, outcome, quality, judge, scenario(s)."""
    from judge.grade import list_runs
    from judge.render import render_runs

    folder = _folder(directory, config)
    render_runs(list_runs(folder, limit=limit), str(folder), console())


@user_errors
def diff_cmd(
    a: str = typer.Argument(..., metavar="A", help="The earlier grade: a report file, a run id or id prefix "
                            "from `judge runs list`, `latest` or `previous`."),
    b: str = typer.Argument("latest", metavar="B", help="The later grade, named as A (default: latest)."),
    directory: Path | None = typer.Option(None, "--dir", metavar="DIR", help=LOG_DIR_HELP),
    config: Path | None = typer.Option(None, "--config", metavar="FILE", help=CONFIG_HELP),
) -> None:
    """Compare two grades, scenario by scenario: the keys that newly fail (key, event, rule), the
    keys fixed, and how quality and outcome changed. Exit 1 on a regression (a key newly fails or
    an outcome got worse), 0 otherwise, 2 on bad input."""
    from judge.grade import diff_reports, load_report, resolve_run
    from judge.render import render_runs_diff

    folder = _folder(directory, config)
    path_a, path_b = resolve_run(a, folder), resolve_run(b, folder)
    diff = diff_reports(load_report(path_a), load_report(path_b), name_a=str(path_a), name_b=str(path_b))
    render_runs_diff(diff, console())
    raise typer.Exit(1 if diff.regression else 0)


def register(app: typer.Typer) -> None:
    """Add the `runs` sub-app to the `judge` typer app."""
    sub = typer.Typer(help="The run log: every `judge grade` keeps its JSON report (.judge/runs/).",
                      no_args_is_help=True)
    sub.command("list", epilog="Example: judge runs list -n 5")(list_cmd)
    sub.command("diff", epilog="Example: judge runs diff previous latest")(diff_cmd)
    app.add_typer(sub, name="runs")
