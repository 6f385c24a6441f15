"""The override rule: a rule that ruled wins over the judge, for every key and in both directions; a
judge decides the keys no rule ruled on."""

import pytest

from judge.grade.merge import merge_key
from judge.model import Finding, JudgeFinding


def _det(verdict, sensitivity="safety-critical"):
    return Finding(key="k", verdict=verdict, source="deterministic", evidence_event="e3" if verdict == "violated" else None,
                   turn=2, rule="scope:k", class_="constraint", sensitivity=sensitivity)


def _merge(det, judged, sensitivity="safety-critical", error=None, asked=True):
    return merge_key(key="k", class_="constraint", sensitivity=sensitivity, turn=4, deterministic=det,
                     judged=judged, judge_error=error, judged_at_all=asked, event_turns={"e3": 2, "e7": 3})


def test_safety_violation_stands_against_a_judge_saying_upheld():
    merged = _merge(_det("violated"), JudgeFinding(key="k", verdict="upheld", confidence=0.99))
    assert merged.verdict == "violated" and merged.source == "deterministic"
    assert merged.overridden and merged.disagreement and merged.needs_review
    assert merged.judge_verdict == "upheld"


def test_safety_upheld_stands_against_a_judge_saying_violated():
    merged = _merge(_det("upheld"), JudgeFinding(key="k", verdict="violated", evidence_event="e7", confidence=0.9))
    assert merged.verdict == "upheld" and merged.overridden and merged.judge_verdict == "violated"


@pytest.mark.parametrize("sensitivity", ["normal", "costly", "safety-critical"])
def test_a_rule_that_ruled_stands_over_the_judge_for_every_sensitivity(sensitivity):
    """Rules stand (issue 22): a binding judge's contrary verdict is recorded, never decides."""
    merged = _merge(_det("upheld", sensitivity), JudgeFinding(key="k", verdict="violated", evidence_event="e7",
                                                              confidence=0.8), sensitivity=sensitivity)
    assert merged.verdict == "upheld" and merged.source == "deterministic"
    assert merged.judge_verdict == "violated" and merged.disagreement and merged.overridden and merged.needs_review


def test_a_rule_that_saw_nothing_leaves_the_key_to_the_judge():
    merged = _merge(_det("not-exercised", "normal"), JudgeFinding(key="k", verdict="violated",
                                                                  evidence_event="e7", confidence=0.8),
                    sensitivity="normal")
    assert merged.verdict == "violated" and merged.source == "judge" and merged.turn == 3
    assert not merged.unguarded


def test_deterministic_violation_is_a_fact_for_any_key():
    merged = _merge(_det("violated", "normal"), JudgeFinding(key="k", verdict="upheld", confidence=0.7),
                    sensitivity="normal")
    assert merged.verdict == "violated" and merged.source == "deterministic" and merged.disagreement


def test_unguarded_safety_key_is_judged_alone_and_marked():
    merged = _merge(None, JudgeFinding(key="k", verdict="upheld", confidence=0.6))
    assert merged.verdict == "upheld" and merged.source == "judge" and merged.unguarded


def test_judge_error_is_unscored_never_pass_or_fail():
    merged = _merge(None, None, error="retries exhausted")
    assert merged.verdict == "judge-error" and merged.detail == "retries exhausted"
    kept = _merge(_det("violated"), None, error="retries exhausted")
    assert kept.verdict == "violated" and kept.source == "deterministic"
    assert _merge(None, None, asked=False).verdict == "unassessed"


def _advisory(det, judged, sensitivity="normal"):
    return merge_key(key="k", class_="constraint", sensitivity=sensitivity, turn=4, deterministic=det,
                     judged=judged, judge_error=None, judged_at_all=True, event_turns={"e3": 2, "e7": 3},
                     binding=False)


def test_an_advisory_judge_never_overturns_a_rule():
    merged = _advisory(_det("upheld", "normal"), JudgeFinding(key="k", verdict="violated", evidence_event="e7",
                                                              confidence=0.8))
    assert merged.verdict == "upheld" and merged.source == "deterministic" and merged.rule == "scope:k"
    assert merged.judge_verdict == "violated" and merged.disagreement and merged.needs_review


def test_an_advisory_violation_where_no_rule_ruled_is_flagged():
    merged = _advisory(None, JudgeFinding(key="k", verdict="violated", evidence_event="e7", confidence=0.8))
    assert merged.verdict == "flagged" and merged.source == "judge" and merged.needs_review
    assert merged.evidence_event == "e7" and merged.turn == 3 and merged.judge_verdict == "violated"
    upheld = _advisory(None, JudgeFinding(key="k", verdict="upheld", confidence=0.8))
    assert upheld.verdict == "upheld" and not upheld.needs_review


def test_agreement_with_a_rule_needs_no_review():
    merged = _merge(_det("upheld"), JudgeFinding(key="k", verdict="upheld", confidence=0.6))
    assert merged.verdict == "upheld" and not merged.disagreement and not merged.needs_review
