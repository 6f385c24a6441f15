"""`judge import who-and-when`: Who&When multi-agent logs; the human labels go to the header's metadata."""

from __future__ import annotations

from pathlib import Path

from judge.trace.import_spec import ImporterSpec, ImportOption


def run(source: Path, out: Path, **options):
    from judge.trace.who_and_when import import_who_and_when

    return import_who_and_when(source, out, **options)


SPEC = ImporterSpec(
    name="who-and-when", short="Who&When logs", run=run, position=30,
    help="Import Who&When multi-agent logs; the human labels go to the run header's metadata.",
    source_help="The Who&When folder (Hand-Crafted/, Algorithm-Generated/) or one log.",
    out_help="Output folder: <subset>/<n>.jsonl per log.",
    source_metavar="SRC",
    examples=("judge import who-and-when Who_and_When/ -o traces/",),
    options=(
        ImportOption("scenario", ("--scenario",), "Scenario id template: {subset}, {stem}, {run_id}, {question_id} "
                     "(default ww-<subset>-<n>)."),
    ),
)
