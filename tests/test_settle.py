"""A run's report is built once (issue 41, the house): grading returns an Assessment (everything but
the outcome), and `settle` decides the outcome and builds the RunReport, with every warning of the
run gathered there, each once; nothing writes the report's fields afterwards."""

from __future__ import annotations

from pathlib import Path

from judge.grade import GradeSession
from judge.grade.outcome import REVIEW_FAILS, Assessment, settle
from judge.grade.run import assess_trace
from judge.ledger import load_ledger
from judge.model import RunReport

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "checkout-firefox"


def test_a_run_report_is_built_once_and_never_rewritten(monkeypatch):
    built, written = [], []
    real_init, real_setattr = RunReport.__init__, RunReport.__setattr__

    def counting_init(self, **data):
        built.append(data["run_id"])
        real_init(self, **data)

    def recording_setattr(self, name, value):
        written.append(name)
        real_setattr(self, name, value)

    monkeypatch.setattr(RunReport, "__init__", counting_init)
    monkeypatch.setattr(RunReport, "__setattr__", recording_setattr)
    report = GradeSession.open("none").grade_files(EXAMPLE / "scenario.yaml",
                                                   [EXAMPLE / "clean.jsonl", EXAMPLE / "drift.jsonl"])
    assert [r.outcome for r in report.runs] == ["pass", "fail"]
    assert len(built) == 2 and len(set(built)) == 2
    # Only the slice is set after construction, on purpose: trace ids already read and checked,
    # not validated (copied) again.
    assert written == ["slice", "slice"]


def test_settle_gathers_every_warning_once_in_one_order():
    ledger = load_ledger(EXAMPLE / "scenario.yaml")
    assessment = assess_trace(ledger, EXAMPLE / "drift.jsonl")
    assert isinstance(assessment, Assessment) and not hasattr(assessment, "outcome")
    finding = next(f for cp in assessment.checkpoints for f in cp.findings)
    finding.needs_review = True
    given = ["calibration of judge 'j' is stale: none found", "calibration of judge 'j' is stale: none found"]
    graded = list(assessment.warnings)
    run = settle(assessment, review="fail", warnings=given)
    assert run.outcome == "fail" and REVIEW_FAILS in run.outcome_reasons
    assert run.warnings == list(dict.fromkeys([*graded, given[0], REVIEW_FAILS]))
    again = settle(assess_trace(ledger, EXAMPLE / "clean.jsonl"))
    assert again.outcome == "pass" and REVIEW_FAILS not in again.warnings


def test_a_run_that_is_never_a_pass_is_settled_so_once():
    """What a driven run adds (the agent stopped it, its stressor never bit) is settled with the rest,
    not written over a settled report: inconclusive with those reasons first, or, when the run failed,
    those after its own; in the warnings too."""
    ledger = load_ledger(EXAMPLE / "scenario.yaml")
    stopped = ["the agent stopped the run: hang"]
    clean = settle(assess_trace(ledger, EXAMPLE / "clean.jsonl"), never_pass=stopped)
    assert (clean.outcome, clean.passed, clean.eligible_for_release) == ("inconclusive", False, False)
    assert clean.outcome_reasons == stopped and clean.warnings[-1] == stopped[0]
    failed = settle(assess_trace(ledger, EXAMPLE / "drift.jsonl"))
    drift = settle(assess_trace(ledger, EXAMPLE / "drift.jsonl"), never_pass=stopped)
    assert drift.outcome == "fail" and drift.outcome_reasons == [*failed.outcome_reasons, *stopped]
    assert drift.eligible_for_release == failed.eligible_for_release
