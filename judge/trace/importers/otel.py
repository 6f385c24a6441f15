"""`judge import otel`: OpenTelemetry GenAI spans (invoke_agent, chat, execute_tool) as a trace."""

from __future__ import annotations

from pathlib import Path

from judge.trace.import_spec import ImporterSpec, ImportOption

TURNS_HELP = ("Turn rule: `user` (a new turn at each user message) or `step` (also at each model "
              "call that follows a tool result).")


def run(source: Path, out: Path, **options):
    from judge.trace.otel import import_otel

    return import_otel(source, out, **options)


SPEC = ImporterSpec(
    name="otel", short="OpenTelemetry GenAI spans", run=run, position=10,
    help="Import OpenTelemetry GenAI spans (invoke_agent, chat, execute_tool) as a trace.",
    source_help="OTLP JSON: the collector's file exporter (JSONL) or an SDK export.",
    out_help="Trace file (e.g. run.jsonl); a folder (one that exists, or a name without a suffix) for one "
             "trace per trace id.",
    examples=("judge import otel spans.json -o run.jsonl --scenario checkout-firefox",),
    options=(
        ImportOption("scenario", ("--scenario",), "Scenario id for the run header (default: the `judge.scenario` "
                     "resource attribute)."),
        ImportOption("run_id", ("--run-id",), "Run id (default: gen_ai.conversation.id, else the trace id)."),
        ImportOption("trace_id", ("--trace-id",), "Import only this trace."),
        ImportOption("turns", ("--turns",), TURNS_HELP, default="user"),
        ImportOption("whole", ("--whole",), "Read the whole file before closing any trace (for exports whose spans "
                     "arrive after their root span).", type=bool, default=False),
    ),
)
