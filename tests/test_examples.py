"""Every bundled example grades as examples/README.md says (deterministic checks only)."""

from pathlib import Path

import pytest

from judge.api import grade_paths

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# example: (first divergence turn, key, event, vetoed)
EXPECTED = {
    "checkout-firefox": (5, "browser", "e10", True),
    "account-twice": (8, "test_account", "e19", False),
    "refund-agent": (4, "draft_a20931", "e9", True),
    "keep-database": (6, "keep_original_db", "e13", True),
    "authorized-migration": (5, "target_db", "e10", False),
    "local-container": (6, "no_staging", "e12", True),
    "long-distance": (100, "read_only", "e207", True),
    "travel-booking": (2, "charge_after_confirmation", "e7", False),
    "support-refund": (3, "order_id", "e11", False),  # and over-limit.jsonl: tests/test_support_refund.py
    "scripted-checkout": (4, "editable_paths", "e15", True),
    "scripted-checkout-release": (1, "no_deploy", "e4", True),
}


def test_every_example_folder_is_listed():
    assert {p.name for p in EXAMPLES.iterdir() if (p / "scenario.yaml").exists()} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_grades_as_documented(name):
    folder = EXAMPLES / name
    report = grade_paths(folder / "scenario.yaml", [folder / "clean.jsonl", folder / "drift.jsonl"])
    clean, drift = report.runs
    assert clean.passed and clean.eligible_for_release and clean.quality_score == 1.0
    assert clean.first_divergence is None
    turn, key, event, vetoed = EXPECTED[name]
    d = drift.first_divergence
    assert (d.turn, d.key, d.event) == (turn, key, event)
    assert not drift.passed and drift.eligible_for_release is (not vetoed)
    assert drift.slice[-1] == event


def test_the_scripted_examples_traces_are_what_judge_run_records(tmp_path, monkeypatch):
    """scripted-checkout(-release)/*.jsonl are recorded by `judge run` (make_traces.py): recording them
    again gives the same bytes."""
    import runpy

    monkeypatch.chdir(tmp_path)
    make = runpy.run_path(str(EXAMPLES / "scripted-checkout" / "make_traces.py"))["make"]
    written = make(tmp_path / "made")
    assert len(written) == 4
    for path in written:
        assert path.read_bytes() == (EXAMPLES / path.relative_to(tmp_path / "made")).read_bytes(), path


@pytest.mark.slow
def test_examples_with_the_default_judge_have_the_same_outcomes_and_review_only_the_judges_calls():
    """With the default (local, not certified, so advisory) judge every clean run passes and every
    drift fails on the same first divergence; `needs_review` marks only what the judge decided or
    where it disagreed with a rule, never a rule's verdict it agreed with."""
    from judge.api import GradeSession

    session = GradeSession.open(None)
    assert session.judge_name == "local" and not session.binding
    reviewed = total = 0
    for name, (_turn, key, event, vetoed) in sorted(EXPECTED.items()):
        folder = EXAMPLES / name
        clean, drift = session.grade_files(folder / "scenario.yaml", [folder / "clean.jsonl",
                                                                      folder / "drift.jsonl"]).runs
        assert clean.outcome == "pass" and drift.outcome == "fail", name
        assert (drift.first_divergence.key, drift.first_divergence.event) == (key, event)
        assert (drift.veto is not None) is vetoed
        for f in (f for run in (clean, drift) for cp in run.checkpoints for f in cp.findings):
            total += 1
            reviewed += f.needs_review
            if f.needs_review:
                assert f.source == "judge" or f.disagreement, (name, f)
            if f.source == "deterministic" and f.judge_verdict == f.verdict:
                assert not f.needs_review, (name, f)  # a rule's verdict the judge agreed with is never queued
            assert f.verdict != "flagged" or f.needs_review
    assert 0 < reviewed < total
