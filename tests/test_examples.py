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
