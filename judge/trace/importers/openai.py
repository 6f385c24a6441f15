"""`judge import openai`: OpenAI chat-completions message lists (tool_calls, tool role) as traces."""

from __future__ import annotations

from pathlib import Path

from judge.trace.import_spec import ImporterSpec, ImportOption
from judge.trace.importers.otel import TURNS_HELP


def run(source: Path, out: Path, **options):
    from judge.trace.openai_import import import_openai

    return import_openai(source, out, **options)


SPEC = ImporterSpec(
    name="openai", short="OpenAI messages", run=run, position=20,
    help="Import OpenAI chat-completions message lists (tool_calls, tool role) as traces.",
    source_help="Chat-completions messages (one run), or a JSON list / JSONL of runs (e.g. tau-bench trajectories).",
    out_help="Trace file for one run; a folder for many.",
    examples=("judge import openai docs/tour/chat.json -o run.jsonl",),
    options=(
        ImportOption("scenario", ("--scenario",), "Scenario id; may hold {task_id}, {trial}, {run_id}, {index}, "
                     "{stem} (default: the run's own, else task-<task_id>, else the file name)."),
        ImportOption("turns", ("--turns",), TURNS_HELP, default="user"),
    ),
)
