"""`judge import otel|openai|who-and-when`: thin commands over the importers in judge.trace.

Each prints the runs written and the event counts by kind (and what was skipped); bad input is one
line on stderr and exit 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judge.cli.common import console, user_errors


def _report(summary, folder: Path, json_out: bool) -> None:
    out = console(soft_wrap=True)
    if json_out:
        import json

        out.print_json(json.dumps(summary.as_dict()))
        return
    from judge.render import style

    where = summary.files[0] if summary.runs == 1 else folder
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(summary.events.items())) or "none"
    table = style.table("what", show_header=False, note="detail")
    table.add_row("written", style.cell(f"{summary.runs} run{'s' if summary.runs != 1 else ''} -> {where}"))
    table.add_row("events", style.cell(f"{sum(summary.events.values())} ({kinds})"))
    if summary.skipped:
        table.add_row("skipped", style.cell(", ".join(f"{why} {n}" for why, n in sorted(summary.skipped.items()))))
    for warning in summary.warnings:
        table.add_row(style.cell("warning", "yellow"), style.cell(warning))
    style.render(out, table)


_TURNS_HELP = ("Turn rule: `user` (a new turn at each user message) or `step` (also at each model "
               "call that follows a tool result).")


@user_errors
def otel_cmd(
    file: Path = typer.Argument(..., help="OTLP JSON: the collector's file exporter (JSONL) or an SDK export."),
    out: Path = typer.Option(..., "-o", "--out", help="Trace file (e.g. run.jsonl); a folder (one that "
                             "exists, or a name without a suffix) for one trace per trace id."),
    scenario: Optional[str] = typer.Option(None, "--scenario", help="Scenario id for the run header "
                                           "(default: the `judge.scenario` resource attribute)."),
    run_id: Optional[str] = typer.Option(None, "--run-id", help="Run id (default: gen_ai.conversation.id, else the trace id)."),
    trace_id: Optional[str] = typer.Option(None, "--trace-id", help="Import only this trace."),
    turns: str = typer.Option("user", "--turns", help=_TURNS_HELP),
    whole: bool = typer.Option(False, "--whole", help="Read the whole file before closing any trace "
                               "(for exports whose spans arrive after their root span)."),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Import OpenTelemetry GenAI spans (invoke_agent, chat, execute_tool) as a trace."""
    from judge.trace.otel import import_otel

    summary = import_otel(file, out, scenario=scenario, run_id=run_id, turns=turns, whole=whole,
                          trace_id=trace_id)
    _report(summary, out, json_out)


@user_errors
def openai_cmd(
    file: Path = typer.Argument(..., help="Chat-completions messages (one run), or a JSON list / "
                                "JSONL of runs (e.g. tau-bench trajectories)."),
    out: Path = typer.Option(..., "-o", "--out", help="Trace file for one run; a folder for many."),
    scenario: Optional[str] = typer.Option(None, "--scenario", help="Scenario id; may hold {task_id}, "
                                           "{trial}, {run_id}, {index}, {stem} (default: the run's own, "
                                           "else task-<task_id>, else the file name)."),
    turns: str = typer.Option("user", "--turns", help=_TURNS_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Import OpenAI chat-completions message lists (tool_calls, tool role) as traces."""
    from judge.trace.openai_import import import_openai

    summary = import_openai(file, out, scenario=scenario, turns=turns)
    _report(summary, out, json_out)


@user_errors
def who_and_when_cmd(
    src: Path = typer.Argument(..., help="The Who&When folder (Hand-Crafted/, Algorithm-Generated/) or one log."),
    out: Path = typer.Option(..., "-o", "--out", help="Output folder: <subset>/<n>.jsonl per log."),
    scenario: Optional[str] = typer.Option(None, "--scenario", help="Scenario id template: {subset}, "
                                           "{stem}, {run_id}, {question_id} (default ww-<subset>-<n>)."),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Import Who&When multi-agent logs; the human labels go to the run header's metadata."""
    from judge.trace.who_and_when import import_who_and_when

    summary = import_who_and_when(src, out, scenario=scenario)
    _report(summary, out, json_out)


def register(app: typer.Typer) -> None:
    """Add the `import` sub-app to the main CLI."""
    sub = typer.Typer(help="Import traces: OpenTelemetry GenAI spans, OpenAI messages, Who&When logs.",
                      no_args_is_help=True)
    sub.command("otel")(otel_cmd)
    sub.command("openai")(openai_cmd)
    sub.command("who-and-when")(who_and_when_cmd)
    app.add_typer(sub, name="import")
