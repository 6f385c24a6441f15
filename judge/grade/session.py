"""One grade as every face runs it: the judge and its fingerprint, provenance, the calibration policy
(calibrated confidences, review marks, stale warnings) and the exit code. `judge grade`, the HTTP
service and the suite workers all grade through a GradeSession, so they cannot drift apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from judge.config import GradePolicy, grade_policy, load_judge_config, project_root
from judge.grade.calibration import apply_record, check_calibration, current_record, records_dir
from judge.grade.provenance import input_file
from judge.grade.run import grade_trace
from judge.judges.base import Judge
from judge.ledger import ExpectedLedger, load_ledger
from judge.model import GradeReport, RunReport

REVIEW_FAILS = 'findings need human review ([tool.judge] review = "fail")'


class GradeSession:
    """A judge (None: deterministic checks only) with its configured name and grading policy.

    The calibration record is looked up once: with a record for the judge's exact fingerprint every
    run gets calibrated confidences and review marks; without one, `stale_reasons` says why."""

    def __init__(self, judge: Judge | None = None, judge_name: str | None = None, *,
                 config_file: str | Path | None = None) -> None:
        self.judge = judge
        self.judge_name = judge_name or getattr(getattr(judge, "config", None), "name", None)
        self.config_file = config_file
        self.policy = grade_policy(config_file=config_file) if judge is not None else GradePolicy()
        self.fingerprint: dict[str, Any] | None = None
        self.stale_reasons: list[str] = []
        self._record = None
        if judge is not None:
            raw = judge.fingerprint()
            self.fingerprint = {"name": self.judge_name, **raw} if self.judge_name else raw
            directory = records_dir(project_root())
            self._record = current_record(raw, directory)
            if self._record is None:
                self.stale_reasons = check_calibration(raw, directory, self.judge_name or "judge")

    @classmethod
    def open(cls, judge: str | None, *, config_file: str | Path | None = None) -> "GradeSession":
        """`judge`: "none" for deterministic checks only, a configured judge name, or None for the
        configured default (`[tool.judge].default`, else the embedded offline judge `local`)."""
        if judge == "none":
            return cls(config_file=config_file)
        from judge.judges.factory import make_judge

        cfg = load_judge_config(judge, config_file=config_file)
        return cls(make_judge(cfg), cfg.name, config_file=config_file)

    @property
    def stale_fails(self) -> bool:
        """A stale calibration fails the grade (`[tool.judge] stale = "error"`)."""
        return bool(self.stale_reasons) and self.policy.stale == "error"

    def stale_warning(self) -> str | None:
        if not self.stale_reasons:
            return None
        return f"calibration of judge {self.judge_name or 'judge'!r} is stale: " + "; ".join(self.stale_reasons)

    def grade_run(self, ledger: ExpectedLedger, source: Any, *, floor: float = 1.0, name: str | None = None,
                  inputs: dict[str, Any] | None = None, warn_stale: bool = True) -> RunReport:
        """Grade one trace (a path, or parsed lines) and apply the calibration policy to it."""
        run = grade_trace(ledger, source, judge=self.judge, floor=floor, name=name)
        run.provenance["judge"] = self.fingerprint
        if inputs is not None:
            run.provenance["inputs"] = inputs
        if self.judge is None:
            return run
        if self._record is not None:
            apply_record(run, self._record)
        if warn_stale and self.stale_reasons:
            run.warnings.append(self.stale_warning())
        if self.policy.review == "fail" and any(f.needs_review for cp in run.checkpoints for f in cp.findings):
            run.passed = False
            run.warnings.append(REVIEW_FAILS)
        return run

    def grade_files(self, scenario: str | Path, traces: Iterable[str | Path | Any], *,
                    floor: float = 1.0, allow_draft: bool = False) -> GradeReport:
        """Grade trace files against a scenario file, with the sha256 of each input in provenance
        (an unreviewed draft scenario is refused unless `allow_draft`)."""
        ledger = load_ledger(scenario, allow_draft=allow_draft)
        runs = []
        for trace in traces:
            inputs = {"scenario": input_file(scenario),
                      "traces": [input_file(trace)] if isinstance(trace, (str, Path)) else []}
            runs.append(self.grade_run(ledger, trace, floor=floor, inputs=inputs))
        return self.report(runs, floor=floor)

    def report(self, runs: list[RunReport], *, floor: float = 1.0) -> GradeReport:
        return GradeReport(judge=self.fingerprint, floor=floor, runs=runs)

    def exit_code(self, report: GradeReport) -> int:
        """0 when every run passed; 1 on a veto, a failing run or a stale calibration that must fail."""
        return 1 if self.stale_fails else exit_code(report)


def exit_code(report: GradeReport) -> int:
    """0 when every run passed; 1 on a veto or a failing run."""
    return 0 if all(run.passed for run in report.runs) else 1
