"""The library's front door: load and lint a scenario, grade traces, audit summaries, decide the exit
code. Never prints, never exits; the CLI and the service are renderings of what it returns.

    from judge import api
    session = api.GradeSession.open("none")            # or a judge name, or None for the default
    report = session.grade_files("scenario.yaml", ["run.jsonl"])
    api.exit_code(report)                               # 0 passed, 1 failed, 3 inconclusive
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.grade import GradeSession, SliceResult, exit_code, grade_trace, write_slice
from judge.judges.base import Judge
from judge.ledger import ExpectedLedger, LintIssue, load_ledger, policy_ledger
from judge.model import GradeReport
from judge.plugins import lazy_exports
from judge.trace.toolkit import Toolkit, read_toolkit

if TYPE_CHECKING:
    from judge.grade.judges_check import JudgeCheck, check_judges
    from judge.suite.corpus import grade_corpus, is_corpus
    from judge.suite.corpus_diff import diff_corpora, load_corpus_report
    from judge.suite.engine import Engine, parse_engine
    from judge.summaries.audit import SummaryAuditor, audit_summary, audit_summary_events

# Loaded on first use: a grade of one run needs none of the corpus, suite, summary-audit or
# judge-check code (nor what they import).
_EXPORTS = {
    "JudgeCheck": "judge.grade.judges_check", "check_judges": "judge.grade.judges_check",
    "grade_corpus": "judge.suite.corpus", "is_corpus": "judge.suite.corpus",
    "diff_corpora": "judge.suite.corpus_diff", "load_corpus_report": "judge.suite.corpus_diff",
    "Engine": "judge.suite.engine", "parse_engine": "judge.suite.engine",
    "SummaryAuditor": "judge.summaries.audit", "audit_summary": "judge.summaries.audit",
    "audit_summary_events": "judge.summaries.audit",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["Engine", "ExpectedLedger", "GradeSession", "JudgeCheck", "LintIssue", "SliceResult", "SummaryAuditor",
           "Toolkit", "audit_summary", "audit_summary_events", "check_judges", "diff_corpora", "exit_code",
           "format_schemas", "grade_corpus", "grade_paths", "grade_trace", "is_corpus", "lint_file",
           "load_corpus_report", "load_ledger", "parse_engine", "policy_ledger", "read_toolkit", "write_slice"]


def lint_file(scenario: str | Path, traces: Iterable[str | Path] = (), *,
              tools: str | Path | Toolkit | None = None, policy: bool = False) -> list[LintIssue]:
    """Every format and fixture error and warning of a scenario file (and whether its `pair` exists).
    With traces or `tools` (a `--tools FILE` or a Toolkit), also a warning for each rule whose tool
    or argument they do not know (with the nearest name), for a rule that needs a toolkit none
    declares, and for a trace outside the session its header names; with traces, for each
    `authorised` rule whose confirm phrase sits in the user message that stated its key (it never
    counts as the confirmation). Each trace is read once for the targets. With `policy`, `scenario`
    is a policy (a name or a file). A FixtureError when the file cannot be read, a JudgeInputError
    for an unreadable trace or tools file."""
    from judge.checks.kinds.authorised import lint_confirmations
    from judge.checks.targets import lint_targets
    from judge.ledger import lint_path

    toolkit = read_toolkit(tools) if isinstance(tools, (str, Path)) else tools
    ledger, lines, issues = lint_path(scenario, policy=policy)
    traces = list(traces)
    if ledger is not None and not any(i.level == "error" for i in issues):
        issues += lint_targets(ledger, traces, toolkit, lines)
        if traces:
            issues += lint_confirmations(ledger, traces, lines)
    return issues


def grade_paths(scenario: str | Path | None, traces: Iterable[str | Path | Any], *, judge: Judge | None = None,
                floor: float = 1.0, judge_name: str | None = None,
                config_file: str | Path | None = None, allow_draft: bool = False,
                tools: str | Path | Toolkit | None = None, policy: str | Path | None = None) -> GradeReport:
    """Grade trace files against a scenario file, or against a policy (`policy`: a bundled name, a
    project policy's name or a file; `scenario` None), with `judge` (None: deterministic checks
    only); `tools`: the agent's toolkit (a `--tools FILE` or a Toolkit; default: each run header's)."""
    toolkit = read_toolkit(tools) if isinstance(tools, (str, Path)) else tools
    return GradeSession(judge, judge_name, config_file=config_file, toolkit=toolkit).grade_files(
        scenario, traces, floor=floor, allow_draft=allow_draft, policy=policy)


def format_schemas() -> dict[str, Any]:
    """Every file format by name (`judge schema`, `GET /v1/schema`): the model's, the suite's and
    `judge run`'s."""
    from judge.model.schemas import SCHEMAS
    from judge.suite import SCHEMAS as SUITE_SCHEMAS
    from judge.suite.drive import SCHEMAS as DRIVE_SCHEMAS

    return {**SCHEMAS, **SUITE_SCHEMAS, **DRIVE_SCHEMAS}
