"""The summary audit's precision (issue 42, item 4): a pending completion restated as the task is
`preserved` (not `distorted`, not `missing`), and a handoff note that drops a scope constraint while
still naming its topic has it `missing` (not `preserved`). Measured on new wordings written for it
(tests/data/summary_precision: a dev split the fixes were made on, a test split read once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.summaries import evaluation as summary_eval

ROOT = Path(__file__).resolve().parents[1]
PRECISION = ROOT / "tests" / "data" / "summary_precision"


@pytest.fixture(scope="module")
def rows():
    return summary_eval.read_labelled(PRECISION)


# ---------------------------------------------------------------- the labelled set


def test_the_set_names_its_split(rows):
    dev, test = summary_eval.split(rows)
    assert (len(dev), len(test)) == (28, 20)
    assert {r.label.split for r in dev} == {"dev"} and {r.label.split for r in test} == {"test"}
    for part in (dev, test):
        assert {r.label.kind for r in part} == {"pending-restated", "dropped-constraint"}
