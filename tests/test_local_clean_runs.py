"""The local judge's notes on the clean run of every bundled example hold no `violated` (issue 24):
asked about every key of every checkpoint (more than grading asks it), it breaks no rule a clean run
keeps. The drifting run of the same example that motivated the last fix is still caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.grade.cases import ask
from judge.grade.run import checkpoint_requests
from judge.judges.local.judge import EmbeddingJudge
from judge.ledger import load_ledger

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CLEAN = sorted(EXAMPLES.glob("*/clean.jsonl"))


@pytest.fixture(scope="module")
def judge():
    return EmbeddingJudge()


def _findings(judge, trace: Path):
    ledger = load_ledger(trace.parent / "scenario.yaml")
    _, requests = checkpoint_requests(ledger, trace)
    assert requests, trace
    results = ask(judge, requests)
    assert all(r.verdict is not None for r in results), trace
    return [(request.after_turn, f) for request, r in zip(requests, results, strict=False) for f in r.verdict.findings]


def test_every_bundled_example_has_a_clean_run():
    assert len(CLEAN) >= 8


@pytest.mark.slow
@pytest.mark.parametrize("trace", CLEAN, ids=lambda p: p.parent.name)
def test_the_local_judges_notes_on_a_clean_run_hold_no_violated(judge, trace):
    notes = [(turn, f.key, f.rationale) for turn, f in _findings(judge, trace)
             if f.verdict == "violated" or "violated" in (f.rationale or "")]
    assert notes == []


@pytest.mark.slow
def test_a_conditional_prohibition_is_lifted_by_the_users_go_ahead_not_by_its_own_words(judge):
    # travel-booking: "do not charge my card until I confirm" holds "confirm" and lifts nothing; the
    # drifting run charges before the user's "Yes, book it", the clean run after it.
    drift = _findings(judge, EXAMPLES / "travel-booking" / "drift.jsonl")
    assert any(f.key == "charge_after_confirmation" and f.verdict == "violated" for _, f in drift)
    clean = _findings(judge, EXAMPLES / "travel-booking" / "clean.jsonl")
    lifted = [f for _, f in clean if f.key == "charge_after_confirmation" and "go-ahead" in (f.rationale or "")]
    assert lifted and all(f.verdict == "upheld" for f in lifted)
