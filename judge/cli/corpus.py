"""`judge grade --policy P CORPUS...` (a corpus report) and `judge corpus diff OLD NEW`: thin commands over
judge.suite.corpus and judge.suite.corpus_diff.

Exit codes: grading a corpus 0 once its report is written (a measurement: `judge corpus diff` is the
gate); `corpus diff` 0 when no safety-critical key's rate rose significantly, 1 when one did; both 2
on bad input or usage (one line) and 4 on an internal error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from judge.cli.common import console, refuse_overwriting_inputs, user_errors, write_output
from judge.errors import UsageError, require_extra


def grade_corpus_files(paths: list[Path], policy: str, *, judge: str | None, config: Path | None,
                       json_path: Path | None, html: Path | None, others: dict[str, Any], quiet: bool,
                       engine: str | None, jobs: int | None, sample: int, seed: int, tools: Path | None,
                       on_judge_error: str | None, allow_draft: bool, cache: bool = True) -> None:
    """`judge grade --policy` given a corpus (a folder, or a JSONL of many traces): write its report."""
    from judge.api import grade_corpus, parse_engine
    from judge.cli.progress import Activity
    from judge.cli.suite import _default_judge
    from judge.render import corpus_page, json_chunks, render_corpus

    given = [flag for flag, value in others.items() if value]
    if given:
        raise UsageError("a corpus writes a corpus report (--json, --html), not per-run reports", field=given[0])
    inputs = [*paths, *([tools] if tools else []), *([Path(policy)] if Path(policy).is_file() else [])]
    refuse_overwriting_inputs([json_path, html], inputs)
    with Activity(not quiet) as bar:
        report = grade_corpus(paths, policy, judge_name=_default_judge(judge, config), config_file=config, jobs=jobs,
                              engine=parse_engine(engine), tools=tools, on_judge_error=on_judge_error,
                              allow_draft=allow_draft, sample_size=sample, seed=seed, cache=cache,
                              progress=bar)
    if json_path:
        write_output(json_path, json_chunks(report), inputs)
    if html:
        write_output(html, corpus_page(report), inputs)
    if not quiet:
        render_corpus(report, console())
    raise typer.Exit(0)


@user_errors
def diff_command(
    old: Path = typer.Argument(..., help="The earlier corpus report (`judge grade --policy P CORPUS --json FILE`)."),
    new: Path = typer.Argument(..., help="The later corpus report."),
    alpha: float = typer.Option(0.05, "--alpha", min=0.0001, max=0.5, help="Family-wise error rate over the keys "
                                "(Holm's correction)."),
    json_path: Path | None = typer.Option(None, "--json",
                                          help="Write the diff (JSON, `judge schema corpus-diff`) here."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report; exit code only."),
) -> None:
    """Say which policy keys' violation rates moved between two corpus reports: a two-proportion z-test per key
    on the observed counts, Holm-corrected over the keys. Exit 0: no safety-critical rate rose significantly;
    1: one did; 2: bad input; 4: internal error."""
    require_extra("calibration", "judge corpus diff")
    from judge.api import diff_corpora, load_corpus_report
    from judge.render import json_chunks, render_corpus_diff

    refuse_overwriting_inputs([json_path], [old, new])
    diff = diff_corpora(load_corpus_report(old), load_corpus_report(new), alpha=alpha, old_name=str(old),
                        new_name=str(new))
    if json_path:
        write_output(json_path, json_chunks(diff), [old, new])
    if not quiet:
        render_corpus_diff(diff, console())
    raise typer.Exit(1 if diff.failed else 0)


def register(app: typer.Typer) -> None:
    """Add `corpus diff` to the `judge` typer app."""
    sub = typer.Typer(help="Corpora of production traces graded against one policy: compare their violation "
                           "rates (`judge grade --policy P CORPUS/ --json FILE` writes a corpus report).",
                      no_args_is_help=True)
    sub.command("diff")(diff_command)
    app.add_typer(sub, name="corpus")
