"""Grade the agent's runs from pytest with judge.testing (docs/testing.md).

    pytest tests/test_agent_runs.py                    # add --judge-html reports/ for a page per failing test

`grade()` uses the deterministic rules only by default (judge="none": fast, no model); pass
judge="local" or the name of a judge in [tool.judge] to let a judge decide the semantic keys too.
"""

from pathlib import Path

from judge.testing import assert_passed, grade

HERE = Path(__file__).resolve().parent.parent
SCENARIO = HERE / "scenarios" / "hotel-booking.yaml"


def test_clean_run_passes():
    result = grade(SCENARIO, HERE / "traces" / "hotel-booking.clean.jsonl")
    assert_passed(result)  # on failure: each violation (key, event, rule) and the veto's cause


def test_drifting_run_is_caught():
    result = grade(SCENARIO, HERE / "traces" / "hotel-booking.drift.jsonl")
    assert not result.passed
    assert ("check_in", "e9", "superseded-value:check_in") in result.violations
    # assert_passed(result) here would fail the test with the violations listed, the veto first
