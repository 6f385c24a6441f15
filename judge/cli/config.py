"""`judge config show | check | backends`: the configuration in effect and where each value comes
from; every configured judge built (no model called) and checked; the registered judge backends.

Exit codes: `show` 0; `check` 0 when every judge can grade, 2 when one cannot (a bad table, an
unknown or edited prompt, an unset API key variable, a stale calibration where `stale = "error"`,
with --probe a request that got no valid answer).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from judge.cli.common import console, user_errors

CONFIG_HELP = "A TOML file holding a [tool.judge] table (default: $JUDGE_CONFIG, else the nearest pyproject.toml)."


@user_errors
def show_cmd(
    config: Path | None = typer.Option(None, "--config", metavar="FILE", help=CONFIG_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (a list of key, value, source) instead of a table."),
) -> None:
    """Print every setting in effect with where it comes from (a file, an environment variable, a
    built-in judge or the built-in default). Secrets are masked: an API key shows only as set or not."""
    from judge.config import effective_settings
    from judge.render import render_settings

    settings = effective_settings(config_file=config)
    if as_json:
        typer.echo(json.dumps([s.model_dump(mode="json") for s in settings], indent=2, ensure_ascii=False))
        return
    render_settings(settings, console())


@user_errors
def check_cmd(
    config: Path | None = typer.Option(None, "--config", metavar="FILE", help=CONFIG_HELP),
    probe: bool = typer.Option(False, "--probe", help=(
        "Also send each llm judge one real request (a small checkpoint, no cache) and show the structured-output "
        "form that answered, the forms the endpoint refused, the latency and the tokens.")),
) -> None:
    """Build every configured judge as `judge grade` would, calling no model: the table is valid, the
    prompt matches its lock, the API key's variable is set; show each calibration record's status.
    With --probe, each llm judge is sent one request. Exit 0: every judge can grade; 2: one cannot."""
    from judge.api import check_judges
    from judge.render import render_checks

    checks = check_judges(config_file=config, probe=probe)
    render_checks(checks, console())
    raise typer.Exit(0 if all(c.ok for c in checks) else 2)


@user_errors
def backends_cmd(as_json: bool = typer.Option(False, "--json", help="Print the backends as JSON.")) -> None:
    """List the judge backends a `[tool.judge.judges.NAME]` table may name (`backend = "..."`): the
    built-in ones and plug-ins of the `judge.backends` entry-point group, with what each can do."""
    from judge import render
    from judge.config import BACKENDS

    rows = [{"backend": name, "origin": BACKENDS.origin(name), "audits_while_grading": spec.audits_while_grading,
             "prompted": spec.prompted, "description": spec.description} for name, spec in BACKENDS.specs().items()]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = render.table("backend", "origin", "can also", note="what it is")
    for row in rows:
        also = ", ".join(filter(None, ["audit summaries while grading" if row["audits_while_grading"] else "",
                                       "audit summaries, draft scenarios" if row["prompted"] else ""])) or "-"
        table.add_row(*(render.cell(c) for c in (row["backend"], row["origin"], also, row["description"])))
    render.render_table(console(), table)


def register(app: typer.Typer) -> None:
    """Add the `config` sub-app to the `judge` typer app."""
    sub = typer.Typer(help="The [tool.judge] configuration: show what is in effect, check every judge, list "
                           "the judge backends.", no_args_is_help=True)
    sub.command("show", epilog="Example: judge config show --config judge.toml")(show_cmd)
    sub.command("check", epilog="Example: judge config check --probe")(check_cmd)
    sub.command("backends", epilog="Example: judge config backends")(backends_cmd)
    app.add_typer(sub, name="config")
