"""`judge suite --shard K/N --out PART` and `judge suite merge PARTS...`: a suite graded in shards
(one CI job each), then merged into the one report and release decision an unsharded run gives.

Exit codes: a shard 0 once its part is written (the release is decided by the merge), 2 on bad
input; `merge` as `suite`: 0 the release rules pass, 1 they fail, 3 inconclusive, 2 bad input or
parts that do not belong together (one line naming the part and the field), 4 internal error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from judge.cli.common import console as _out
from judge.cli.common import distinct_outputs, refuse_overwriting_inputs, user_errors
from judge.cli.common import write_output as _write
from judge.cli.help import JudgeCommand, apply_conventions
from judge.errors import UsageError
from judge.model import read_json_file

MERGE_EPILOG = ("Example:\n"
                "judge suite examples/suite/suite.yaml --judge none --shard 1/2 --out part-1.json\n"
                "judge suite examples/suite/suite.yaml --judge none --shard 2/2 --out part-2.json\n"
                "judge suite merge part-1.json part-2.json --junit suite.xml --json suite.json")


def grade_shard(manifest: Path, shard: str | None, out: Path | None, others: dict[str, Any], quiet: bool,
                **grade: Any) -> None:
    """Grade one shard and write its part; `others`: the report options, which a shard refuses."""
    from judge.suite import grade_part, parse_shard

    if shard is None:
        raise UsageError("writes a shard's part: give --shard K/N too", field="--out")
    k_n = parse_shard(shard)
    given = [flag for flag, value in others.items() if value]
    if given:
        raise UsageError("a shard writes only its part (--out); the reports come from `judge suite merge`",
                         field=given[0])
    if out is None:
        raise UsageError("--shard needs --out FILE: where to write the shard's part", field="--out")
    refuse_overwriting_inputs([out], [manifest])  # before grading, not after
    part, _ = grade_part(manifest, shard=k_n, **grade)
    _write(out, part.model_dump_json(indent=2, by_alias=True) + "\n",
           [manifest] + [Path(r.result.trace) for r in part.runs if r.result.trace])
    if not quiet:
        counts: dict[str, int] = {}
        for r in part.runs:
            counts[r.result.status] = counts.get(r.result.status, 0) + 1
        total = sum(s.traces for s in part.scenarios)
        _out().print(f"shard {part.shard}/{part.shards} of suite {part.suite}: {len(part.runs)} of {total} run(s) "
                     f"graded ({', '.join(f'{n} {s}' for s, n in sorted(counts.items())) or 'none'}); "
                     f"part written to {out}", highlight=False)
    raise typer.Exit(0)


@user_errors
def merge_command(
    parts: list[Path] = typer.Argument(..., help="The parts of every shard (`judge suite --shard K/N --out`)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the JSON report here."),
    junit: Path | None = typer.Option(None, "--junit", help="Write a JUnit XML report here."),
    md: Path | None = typer.Option(None, "--md", help="Write a Markdown report here."),
    compare: Path | None = typer.Option(None, "--compare", help="An older suite JSON report: show the "
                                           "failure signatures that appeared or vanished since."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report."),
) -> None:
    """Merge the parts of a suite graded in shards into the report and release decision an unsharded
    run gives. Parts from another manifest, set of runs, judge, settings or shard count, and shards
    missing or given twice, are refused. Exit 0: the release rules pass; 1: they fail; 2: bad input
    or parts that do not belong together; 3: no rule failed but a run was inconclusive; 4: internal error."""

    from judge.render import json_chunks, render_suite, suite_to_junit, suite_to_markdown
    from judge.suite import compare_reports, exit_code, merge_suite

    distinct_outputs({"--json": json_path, "--junit": junit, "--md": md})
    report = merge_suite([*parts])  # a list[str | Path]
    if compare is not None:
        old = read_json_file(compare, "a JSON suite report")
        report.compare = compare_reports(report, old, str(compare))
    inputs = [*parts, *([compare] if compare else [])]
    for path, render in ((json_path, json_chunks), (junit, suite_to_junit), (md, suite_to_markdown)):
        if path:
            _write(path, render(report), inputs)
    if not quiet:
        render_suite(report, _out())
    raise typer.Exit(exit_code(report))


class SuiteCommand(JudgeCommand):
    """`judge suite MANIFEST ...` grades; `judge suite merge PARTS...` merges (a manifest named
    `merge` is given as ./merge)."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        if args and args[0] == "merge":
            from typer.core import TyperCommand

            merge = typer.main.get_command(_merge_app())
            # A parent without this command's arguments, so usage reads `judge suite merge ...`.
            suite = typer.Context(TyperCommand(info_name), info_name=info_name, parent=parent)
            return merge.make_context("merge", args[1:], parent=suite)
        return super().make_context(info_name, args, parent=parent, **extra)


def _merge_app() -> typer.Typer:
    app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
    app.command("merge", epilog=MERGE_EPILOG)(merge_command)
    apply_conventions(app, "suite ")
    return app
