"""`judge rules`: every rule kind a scenario may use, the plug-ins' included."""

from __future__ import annotations

import json

import typer

from judge.cli.common import console, user_errors


@user_errors
def rules_cmd(
    markdown: bool = typer.Option(False, "--markdown", help="Print the rule table of docs/scenarios.md (Markdown)."),
    json_out: bool = typer.Option(False, "--json", help="Print the kinds as JSON."),
) -> None:
    """List the rule kinds: the fields each takes and when it is violated (built-in and plug-ins of
    the `judge.rules` entry-point group)."""
    from judge import render
    from judge.checks import origin, specs

    rows = render.kind_rows(specs(), origin)
    out = console(soft_wrap=True)
    if json_out:
        out.print_json(json.dumps(rows))
        return
    if markdown:
        out.print("\n".join(render.kinds_markdown(rows)), markup=False, highlight=False)
        return
    table = render.table("check", "fields", "origin", note="violated when")
    for row in rows:
        table.add_row(*(render.cell(row[name]) for name in ("check", "fields", "origin", "violated_when")))
    render.render_table(console(), table)


def register(app: typer.Typer) -> None:
    """Add `rules` to the `judge` typer app."""
    app.command("rules")(rules_cmd)
