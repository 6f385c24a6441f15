"""`judge import NAME`: thin commands over the registered importers (judge.trace.importers, plug-ins).

Each prints the runs written and the event counts by kind (and what was skipped); bad input is one
line on stderr and exit 2.
"""

from __future__ import annotations

from pathlib import Path

import typer

from judge.cli.common import console, user_errors


def _report(summary, folder: Path, json_out: bool) -> None:
    out = console(soft_wrap=True)
    if json_out:
        import json

        out.print_json(json.dumps(summary.as_dict()))
        return
    from judge import render

    where = summary.files[0] if summary.runs == 1 else folder
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(summary.events.items())) or "none"
    table = render.table("what", show_header=False, note="detail")
    table.add_row("written", render.cell(f"{summary.runs} run{'s' if summary.runs != 1 else ''} -> {where}"))
    table.add_row("events", render.cell(f"{sum(summary.events.values())} ({kinds})"))
    if summary.skipped:
        table.add_row("skipped", render.cell(", ".join(f"{why} {n}" for why, n in sorted(summary.skipped.items()))))
    for warning in summary.warnings:
        table.add_row(render.cell("warning", "yellow"), render.cell(warning))
    render.render_table(out, table)


def _command(spec):
    """A typer command for one importer spec: SOURCE, -o OUT, the spec's options, --json."""
    import inspect

    def command(**given) -> None:
        source, out, json_out = given.pop("source"), given.pop("out"), given.pop("json_out")
        _report(spec.run(source, out, **given), out, json_out)

    params = [inspect.Parameter("source", inspect.Parameter.KEYWORD_ONLY, annotation=spec.source_type,
                                default=typer.Argument(..., help=spec.source_help, metavar=spec.source_metavar)),
              inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, annotation=Path,
                                default=typer.Option(..., "-o", "--out", help=spec.out_help))]
    for option in spec.options:
        kind = option.type | None if option.default is None and option.type is not bool else option.type
        params.append(inspect.Parameter(option.param, inspect.Parameter.KEYWORD_ONLY, annotation=kind,
                                        default=typer.Option(option.default, *option.flags, help=option.help)))
    params.append(inspect.Parameter("json_out", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                                    default=typer.Option(False, "--json", help="Print the summary as JSON.")))
    command.__signature__ = inspect.Signature(params)
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__doc__ = spec.help
    command.__name__ = f"import_{spec.name.replace('-', '_')}"
    return user_errors(command)


def register(app: typer.Typer) -> None:
    """Add the `import` sub-app to the main CLI: one sub-command per registered importer
    (judge.trace.importers and the `judge.importers` entry points), its example as its epilog."""
    from judge.cli.help import EXAMPLE_HEADING
    from judge.trace import IMPORTERS

    specs = IMPORTERS.specs()
    sub = typer.Typer(help="Import traces: " + ", ".join(spec.short for spec in specs.values()) + ".",
                      no_args_is_help=True)
    for name, spec in specs.items():
        epilog = f"{EXAMPLE_HEADING} " + " ; ".join(spec.examples) if spec.examples else None
        sub.command(name, epilog=epilog)(_command(spec))
    app.add_typer(sub, name="import")
