"""`judge import records`: agent interaction records (R-Judge's shape) as traces, labels to a labels file."""

from __future__ import annotations

from pathlib import Path

from judge.trace.import_spec import ImporterSpec, ImportOption


def run(source: Path, out: Path, **options):
    from judge.trace.records_import import import_records

    return import_records(source, out, **options)


SPEC = ImporterSpec(
    name="records", short="agent interaction records", run=run, position=40,
    help="Import agent interaction records ({id, profile, contents: [[{role, thought, action, content}]], label, "
         "tools?}: R-Judge and the benchmarks it gathers) as traces; labels go to a labels file. A final-answer "
         "action (Complete{\"response\": ...}, Finish[...]) is the agent's answer, not a call; the tools the "
         "profile lists and `tools` are the run's toolkit.",
    source_help="A JSON list of records, one record, or JSONL (a record per line).",
    out_help="Output folder: <id>.jsonl per record, and labels.jsonl when records carry labels.",
    examples=("judge import records rjudge.json -o traces/",),
    options=(
        ImportOption("labels", ("--labels",), "Where the labels go (default: OUT/labels.jsonl); appended, never "
                     "rewritten: label 1 is `violated` (unsafe), 0 `upheld` (safe).", type=Path),
        ImportOption("annotator", ("--annotator",), "The annotator the labels name (default: records:<file stem>)."),
        ImportOption("scenario", ("--scenario",), "Scenario id for every run header (default: none: grade them "
                     "with --policy)."),
    ),
)
