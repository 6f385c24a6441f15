"""The library's front door: load a scenario, grade traces, decide the exit code. Never prints."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from judge.fixture import load_scenario
from judge.grade import grade_trace
from judge.judges.base import Judge
from judge.ledger import ExpectedLedger, LintIssue, build_ledger, lint
from judge.model import GradeReport


def load_ledger(path: str | Path) -> ExpectedLedger:
    """Scenario file -> expected ledger; a FixtureError names the first problem (file, line, field)."""
    scenario, lines = load_scenario(path)
    return build_ledger(scenario, lines, file=str(path))


def lint_file(path: str | Path) -> list[LintIssue]:
    scenario, lines = load_scenario(path)
    return lint(scenario, lines)[1]


def grade_paths(scenario: str | Path, traces: Iterable[str | Path | Any], *, judge: Judge | None = None,
                floor: float = 1.0, judge_name: str | None = None) -> GradeReport:
    ledger = load_ledger(scenario)
    fingerprint = None
    if judge is not None:
        name = judge_name or getattr(getattr(judge, "config", None), "name", None)
        fingerprint = {"name": name, **judge.fingerprint()} if name else judge.fingerprint()
    from judge.provenance import input_file

    runs = []
    for trace in traces:
        run = grade_trace(ledger, trace, judge=judge, floor=floor)
        run.provenance["judge"] = fingerprint
        run.provenance["inputs"] = {"scenario": input_file(scenario),
                                    "traces": [input_file(trace)] if isinstance(trace, (str, Path)) else []}
        runs.append(run)
    return GradeReport(judge=fingerprint, floor=floor, runs=runs)


def exit_code(report: GradeReport) -> int:
    """0 when every run passed; 1 on a veto or a failing run."""
    return 0 if all(run.passed for run in report.runs) else 1


def apply_calibration_policy(report: GradeReport, judge: Judge, config_file: str | Path | None = None) -> bool:
    """Calibrated confidences and review marks from the judge's calibration record, a warning when
    it is stale; True when a stale calibration must fail the run (`[tool.judge] stale = "error"`).
    `[tool.judge] review = "fail"` makes findings that need review fail their run."""
    from judge.calibrate_run import apply_calibration, records_dir
    from judge.config import grade_policy, project_root

    policy = grade_policy(config_file=config_file)
    name = (report.judge or {}).get("name") or "judge"
    reasons = apply_calibration(report, judge.fingerprint(), records_dir(project_root()), name)
    for run in report.runs:
        if reasons:
            run.warnings.append(f"calibration of judge {name!r} is stale: " + "; ".join(reasons))
        if policy.review == "fail" and any(f.needs_review for cp in run.checkpoints for f in cp.findings):
            run.passed = False
            run.warnings.append('findings need human review ([tool.judge] review = "fail")')
    return bool(reasons) and policy.stale == "error"
