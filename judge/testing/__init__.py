"""Grade agent runs from a test suite (pytest, unittest, anything that understands AssertionError).

    from judge.testing import assert_passed, grade

    def test_booking_agent_keeps_the_ledger():
        result = grade("scenarios/hotel-booking.yaml", "traces/run.jsonl")   # rules only: judge="none"
        assert_passed(result)   # fails with each violation (key, event, rule) and the veto's cause

`grade` runs the same GradeSession as `judge grade` (one trace: a JSONL path, or its lines as dicts,
the run header first) and keeps nothing on disk. The pytest plugin (judge.testing.plugin, registered
as a `pytest11` entry point) shows a failed `assert_passed` as its message alone and adds
`--judge-html DIR`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.model import GradeReport, RunReport

__all__ = ["GradeResult", "JudgeAssertionError", "assert_passed", "failure_message", "grade"]

# The results graded during the current test, newest last, kept only while the pytest plugin records
# them (--judge-html): it clears the list before each test and saves a page for each when the test fails.
graded: list[GradeResult] = []
recording = False


@dataclass(frozen=True)
class GradeResult:
    """One graded run, as `grade` returns it.

    Attributes:
        passed: Whether the run passed (`outcome == "pass"`).
        outcome: `"pass"`, `"fail"` or `"inconclusive"`.
        violations: `(key, evidence event, rule)` of every violated finding, in checkpoint order,
            each once; the rule is `"judge"` when a judge found it, the event None when a finding
            has none.
        report: The grade report, a `judge.model.GradeReport` (a pydantic model, not a dict): its
            `runs` holds this one run (`result.run`), `judge` the judge's fingerprint and trust.
            `report.model_dump(mode="json", by_alias=True)` is the JSON `judge grade --json` writes.
    """

    passed: bool
    outcome: str
    violations: list[tuple[str, str | None, str]]
    report: GradeReport

    @property
    def run(self) -> RunReport:
        """The graded run, `report.runs[0]` (a `judge.model.RunReport`): its `checkpoints` and their
        `findings`, `first_divergence`, `veto`, `quality_score`, `metrics`, `slice`, `warnings`."""
        return self.report.runs[0]


class JudgeAssertionError(AssertionError):
    """`assert_passed` on a run that did not pass.

    Attributes:
        result: The `GradeResult` that did not pass; its message is `failure_message(result)`.
    """

    def __init__(self, message: str, result: GradeResult) -> None:
        super().__init__(message)
        self.result = result


def _violations(run: RunReport) -> list[tuple[str, str | None, str]]:
    found = [(f.key, f.evidence_event, f.rule or "judge") for cp in run.checkpoints for f in cp.findings
             if f.verdict == "violated"]
    return list(dict.fromkeys(found))


def grade(scenario: str | Path, trace: str | Path | Iterable[dict[str, Any] | str], judge: str | None = "none",
          config: str | Path | None = None) -> GradeResult:
    """Grade one trace against a scenario file, as `judge grade` does, keeping nothing on disk.

    Args:
        scenario: The scenario file (YAML or JSON).
        trace: A JSONL trace file, or its lines (dicts or JSON strings), the run header first.
        judge: `"none"` (the deterministic rules only, the default: fast, no model), a judge name
            from `[tool.judge]`, or None for the configured default.
        config: A TOML file with a `[tool.judge]` table (default: `$JUDGE_CONFIG`, else the nearest
            pyproject.toml).

    Returns:
        The graded run.

    Raises:
        judge.errors.JudgeInputError: Bad input, naming file, line and field (its subclasses
            `FixtureError` for the scenario, `TraceError` for the trace, `ConfigError` for a bad
            `[tool.judge]` or an unknown judge name).
    """
    from judge.api import GradeSession

    source: Any = trace if isinstance(trace, (str, Path)) else list(trace)
    session = GradeSession.open(judge, config_file=config)
    report = session.grade_files(scenario, [source])
    run = report.runs[0]
    result = GradeResult(passed=run.passed, outcome=run.outcome, violations=_violations(run), report=report)
    if recording:
        graded.append(result)
    return result


def failure_message(result: GradeResult) -> str:
    """Why the run did not pass: outcome, the veto's cause, each violation, the first divergence."""
    from judge.render.report import run_status, veto_text

    run = result.run
    quality = run.quality_score if run.quality_score is not None else "n/a"
    lines = [f"judge: run {run.run_id!r} of scenario {run.scenario!r}: {run_status(run)} "
             f"({run.outcome}, quality {quality})"]
    if run.veto is not None:
        lines.append(f"  veto: {veto_text(run)}")
    if result.violations:
        width = max(len(k) for k, _, _ in result.violations)
        lines.append("  violations (key, event, rule):")
        lines += [f"    {key:<{width}}  {event or '-':<5}  {rule}" for key, event, rule in result.violations]
    d = run.first_divergence
    if d is not None:
        lines.append(f"  first divergence: turn {d.turn}, key {d.key}, event {d.event}")
    if run.outcome == "inconclusive" or not result.violations:
        lines += [f"  {run.outcome}: {reason}" for reason in run.outcome_reasons]
    if run.trace:
        lines.append(f"  trace: {run.trace}")
    return "\n".join(lines)


def assert_passed(result: GradeResult) -> None:
    """Fail the test unless the run passed.

    Raises:
        JudgeAssertionError: An `AssertionError` whose message (`failure_message`) gives the outcome,
            the veto's cause, each violation and the first divergence, when the run did not pass.
    """
    __tracebackhide__ = True  # pytest: the test's line is where it failed, not this one
    if not result.passed:
        raise JudgeAssertionError(failure_message(result), result)
