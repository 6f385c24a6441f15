"""`judge grade --policy P CORPUS...` (a corpus report) and `judge corpus diff OLD NEW`: thin commands over
judge.suite.corpus and judge.suite.corpus_diff.

Exit codes: grading a corpus 0 once its report is written (a measurement: `judge corpus diff` is the
gate); `corpus diff` 0 when no safety-critical key's rate rose significantly, 1 when one did; both 2
on bad input or usage (one line) and 4 on an internal error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from pydantic import ValidationError

from judge.cli.common import console, refuse_overwriting_inputs, user_errors, write_output
from judge.errors import JudgeInputError, UsageError


def grade_corpus_files(paths: list[Path], policy: str, *, judge: Optional[str], config: Optional[Path],
                       json_path: Optional[Path], html: Optional[Path], others: dict[str, Any], quiet: bool,
                       engine: Optional[str], jobs: Optional[int], sample: int, seed: int, tools: Optional[Path],
                       on_judge_error: Optional[str], allow_draft: bool) -> None:
    """`judge grade --policy` given a corpus (a folder, or a JSONL of many traces): write its report."""
    from judge.cli.progress import Activity
    from judge.cli.suite import _default_judge
    from judge.render import corpus as render
    from judge.suite.corpus import grade_corpus
    from judge.suite.engine import parse_engine

    given = [flag for flag, value in others.items() if value]
    if given:
        raise UsageError("a corpus writes a corpus report (--json, --html), not per-run reports", field=given[0])
    inputs = [*paths, *([tools] if tools else []), *([Path(policy)] if Path(policy).is_file() else [])]
    refuse_overwriting_inputs([json_path, html], inputs)
    with Activity(not quiet) as bar:
        report = grade_corpus(paths, policy, judge_name=_default_judge(judge, config), config_file=config, jobs=jobs,
                              engine=parse_engine(engine), tools=tools, on_judge_error=on_judge_error,
                              allow_draft=allow_draft, sample_size=sample, seed=seed, progress=bar)
    if json_path:
        write_output(json_path, render.to_json(report), inputs)
    if html:
        from judge.render.html import corpus_page

        write_output(html, corpus_page(report), inputs)
    if not quiet:
        render.render_terminal(report, console())
    raise typer.Exit(0)


def load_corpus_report(path: Path):
    """A corpus report file (`judge grade --policy P CORPUS --json FILE`), validated; else a one-line error."""
    from judge.model.corpus import CorpusReport
    from judge.model.limits import read_json_file

    data = read_json_file(path, "a JSON corpus report")
    if not isinstance(data, dict) or data.get("kind") != "corpus-report":
        raise JudgeInputError("not a corpus report (written by `judge grade --policy P CORPUS --json FILE`)",
                              file=str(path), field="kind")
    try:
        return CorpusReport.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        message = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
        raise JudgeInputError(message, file=str(path), field=".".join(str(p) for p in err["loc"])) from None


@user_errors
def diff_command(
    old: Path = typer.Argument(..., help="The earlier corpus report (`judge grade --policy P CORPUS --json FILE`)."),
    new: Path = typer.Argument(..., help="The later corpus report."),
    alpha: float = typer.Option(0.05, "--alpha", min=0.0001, max=0.5, help="Family-wise error rate over the keys "
                                "(Holm's correction)."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Write the diff (JSON, `judge schema corpus-diff`) here."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report; exit code only."),
) -> None:
    """Say which policy keys' violation rates moved between two corpus reports: a two-proportion z-test per key
    on the observed counts, Holm-corrected over the keys. Exit 0: no safety-critical rate rose significantly;
    1: one did; 2: bad input; 4: internal error."""
    from judge.render import corpus as render
    from judge.suite.corpus_diff import diff_corpora

    refuse_overwriting_inputs([json_path], [old, new])
    diff = diff_corpora(load_corpus_report(old), load_corpus_report(new), alpha=alpha, old_name=str(old),
                        new_name=str(new))
    if json_path:
        write_output(json_path, render.to_json(diff), [old, new])
    if not quiet:
        render.render_diff(diff, console())
    raise typer.Exit(1 if diff.failed else 0)


def register(app: typer.Typer) -> None:
    """Add `corpus diff` to the `judge` typer app."""
    sub = typer.Typer(help="Corpora of production traces graded against one policy: compare their violation "
                           "rates (`judge grade --policy P CORPUS/ --json FILE` writes a corpus report).",
                      no_args_is_help=True)
    sub.command("diff")(diff_command)
    app.add_typer(sub, name="corpus")
