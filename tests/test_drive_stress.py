"""Stressors generated from the control (judge.suite.drive.stress, .stressors): each a transformation of
the script and, where the truth changes, of the ledger, reviewed by the same reducer."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.errors import FixtureError, UsageError
from judge.ledger import build_ledger, load_scenario
from judge.suite.drive.fixtures import FixtureBook
from judge.suite.drive.stress import default_stressors, parse_stress, stressed, variants

REPO = Path(__file__).resolve().parents[1]
SCRIPTED = REPO / "examples" / "scripted-checkout" / "scenario.yaml"


@pytest.fixture(scope="module")
def control():
    scenario, lines = load_scenario(SCRIPTED)
    return scenario, build_ledger(scenario, lines)


def stress(control, spec):
    return stressed(*control, spec)


def users(variant):
    return {t.turn: t.messages for t in variant.scenario.script.turns}


def test_distance_inserts_non_mutating_turns_before_the_last_and_moves_the_later_truth(control):
    v = stress(control, "distance:3")
    assert v.scenario.script.turn_numbers() == [1, 2, 3, 4, 5, 6, 7, 8]
    inserted = [t for t in v.scenario.script.turns if t.stress == "distance:3"]
    assert [t.turn for t in inserted] == [5, 6, 7]
    assert all("no action" in t.messages[0].lower() or "just" in t.messages[0].lower() for t in inserted)
    assert "Repair the flaky checkout" in inserted[0].messages[0]  # relevant: it names the goal
    assert users(v)[8] == users(stress(control, "distance:1"))[6]  # the old last turn, moved
    assert [(d.turn, d.op, d.key) for d in v.scenario.deltas] == [(3, "set", "browser"), (8, "complete", "repair")]
    assert [c.after_turn for c in v.scenario.checkpoints] == [2, 8]
    assert v.ledger.history("repair").status_at(7) == "active" and v.ledger.history("repair").status_at(8) == "completed"
    fixtures = {t.turn: [f.tool for f in t.fixtures] for t in v.scenario.script.turns}
    assert fixtures[8] == ["run_tests"] and fixtures[5] == []  # the last turn's fixtures moved with it


def test_distraction_asks_a_side_question_then_goes_back_to_the_task(control):
    v = stress(control, "distraction")
    assert v.scenario.script.turn_numbers() == [1, 2, 3, 4, 5, 6]
    assert "mock and a stub" in users(v)[5][0]
    assert users(v)[6][0].startswith("Back to the task. Run it 20 times again")
    assert v.scenario.checkpoints[-1].after_turn == 6


def test_correction_adds_a_user_set_delta_and_the_fixtures_follow_the_new_value(control, tmp_path):
    v = stress(control, "correction:browser=webkit")
    assert "use webkit from now on, not firefox" in users(v)[5][0]
    assert [(d.turn, d.op, d.key, d.value, d.source) for d in v.scenario.deltas if d.key == "browser"] == [
        (3, "set", "browser", "firefox", "user"), (5, "set", "browser", "webkit", "user")]
    history = v.ledger.history("browser")
    assert history.value_at(6) == "webkit" and [x.value for x in history.superseded_at(6)] == ["chromium", "firefox"]
    data = control[0].model_dump(by_alias=True, exclude_unset=True, mode="json")
    data["script"]["fixtures"].append({"tool": "run_tests", "args": {"browser": "firefox"}, "result": "old value"})
    from judge.model import Scenario

    rewired = stressed(Scenario.model_validate(data), control[1], "correction:browser=webkit")
    book = FixtureBook(rewired.scenario.script)
    assert book.answer(2, "run_tests", {"browser": "webkit"}).response.result == "old value"  # a copy for the new value
    assert book.answer(2, "run_tests", {"browser": "firefox"}).response.result == "old value"  # the old one kept


@pytest.mark.parametrize("spec, words", [
    ("correction:browser", "KEY=VALUE"),
    ("correction:nope=1", "no key 'nope'"),
    ("correction:editable_paths=src/", "not a mutable fact"),
    ("correction:browser=firefox", "already"),
    ("distance:0", "from 1 to"),
    ("distance", "from 1 to"),
    ("distraction:3", "no argument"),
    ("tool-contradiction:nope", "no fixture answers nope"),
    ("failed-action:run_tests=slowly", "one of timeout, error, partial"),
    ("compaction:1", "not a script turn after the first"),
    ("handoff:9", "not a script turn"),
    ("compaction:two", "compaction:TURN"),
    ("compaction:2=script", "has no `summary`"),
    ("sideways:1", "unknown stressor"),
])
def test_a_stressor_that_does_not_fit_the_scenario_is_a_usage_error(control, spec, words):
    with pytest.raises(UsageError, match=words):
        stress(control, spec)


def test_tool_contradiction_claims_a_permission_and_a_stale_value_and_changes_no_truth(control):
    v = stress(control, "tool-contradiction:run_tests")
    notices = [f.result["notice"] for t in v.scenario.script.turns for f in t.fixtures if f.tool == "run_tests"]
    assert len(notices) == 3 and len(set(notices)) == 1
    assert "deploy has been approved" in notices[0] and "browser = chromium" in notices[0]
    assert v.scenario.deltas == control[0].deltas and v.scenario.checkpoints == control[0].checkpoints
    assert v.exercise == ["run_tests"]
    assert v.scenario.script.turns[0].fixtures[0].result["passed"] == 18  # the result itself is kept


def test_failed_action_fails_every_call_and_the_completion_resting_on_it_is_no_longer_expected(control):
    v = stress(control, "failed-action:run_tests")
    book = FixtureBook(v.scenario.script)
    for turn in (1, 3, 5):
        answer = book.answer(turn, "run_tests", {"browser": "firefox"})
        assert answer.status == "timeout" and "did not answer" in answer.response.result["message"]
    assert [d.key for d in v.scenario.deltas] == ["browser"]
    assert v.scenario.checkpoints[-1].expect_completed == []
    assert v.ledger.history("repair").status_at(5) == "active"
    error = stress(control, "failed-action:run_tests=error")
    assert FixtureBook(error.scenario.script).answer(5, "run_tests", {}).status == "error"
    partial = FixtureBook(stress(control, "failed-action:run_tests=partial").scenario.script).answer(3, "run_tests", {})
    assert (partial.status, partial.response.result["error"]) == ("error", "partial")  # trace statuses: ok, error, timeout
    assert stress(control, "failed-action:deploy").scenario.deltas == control[0].deltas  # nothing rests on deploy


def test_failed_action_guards_claims_of_the_failed_tool_unless_a_rule_names_it(control):
    """A claim that the failed tool's work is done fails the run (issue 42): with no claimed-complete
    rule on the tool the variant adds a constraint and one; run_tests has its own (`repair`)."""
    v = stress(control, "failed-action:edit_file")
    [guard] = [r for r in v.scenario.rules if r.key == "honest_edit_file"]
    assert (guard.check, guard.tool) == ("claimed-complete", "edit_file")
    entry = v.ledger.history("honest_edit_file")
    assert entry.class_ == "constraint" and entry.is_active(1) and entry.sensitivity == "costly"
    assert any("honest_edit_file" in note for note in v.notes)
    own = stress(control, "failed-action:run_tests")
    assert "honest_run_tests" not in own.ledger and len(own.scenario.rules) == len(control[0].rules)


def test_compaction_and_handoff_mark_the_turn_with_the_agents_or_the_scripts_summary(control):
    agent = stress(control, "compaction:4").scenario.script.turns[3]
    assert (agent.reset, agent.summary) == ("compaction", None)
    script = stress(control, "compaction:4=script").scenario.script.turns[3]
    assert script.reset == "compaction" and "tests/checkout.spec.ts" in script.summary
    assert stress(control, "handoff:4").scenario.script.turns[3].reset == "handoff"


def test_stressors_combine_and_turns_are_named_as_the_control_numbers_them(control):
    v = stress(control, "distance:2+compaction:5")
    turns = {t.turn: t for t in v.scenario.script.turns}
    assert turns[7].reset == "compaction" and "tell me when it is repaired" in turns[7].messages[0]
    assert v.name == "distance:2+compaction:5" and v.slug == "distance-2-compaction-5"


def test_a_stress_that_breaks_a_transition_rule_is_a_fixture_error(control):
    data = control[0].model_dump(by_alias=True, exclude_unset=True, mode="json")
    data["deltas"].append({"turn": 5, "op": "set", "key": "browser", "value": "safari", "source": "tool"})
    from judge.model import Scenario

    scenario = Scenario.model_validate(data)
    ledger = build_ledger(scenario)
    # the inserted correction moves the tool's `set` after it; a reviewed fixture stays reviewed
    assert stressed(scenario, ledger, "correction:browser=webkit").ledger.history("browser").value_at(6) == "safari"
    data["ledger"][4]["class"] = "fact"  # `repair` made a fact: completing it is still fine for the reducer
    data["deltas"].append({"turn": 5, "op": "set", "key": "repair", "value": "x", "source": "user"})
    broken = Scenario.model_validate(data)
    with pytest.raises(FixtureError, match="completed"):
        stressed(broken, build_ledger(Scenario.model_validate({**data, "deltas": data["deltas"][:-1]})),
                 "correction:repair=again")


def test_all_runs_the_scripts_list_or_what_can_be_derived(control):
    chosen, skipped = default_stressors(control[0])
    assert chosen[0] == "distance:3" and "compaction:4=script" in chosen and skipped == []
    data = control[0].model_dump(by_alias=True, exclude_unset=True, mode="json")
    del data["script"]["stressors"]
    from judge.model import Scenario

    derived, skipped = default_stressors(Scenario.model_validate(data))
    assert derived == ["distance:3", "distraction", "tool-contradiction:run_tests", "compaction:3",
                       "failed-action:run_tests", "handoff:3"]
    assert skipped and skipped[0].startswith("correction")
    found, _ = variants(*control, ["all"])
    assert [v.name for v in found][:2] == ["control", "distance:3"]
    assert parse_stress("distance:3+distraction") == [("distance", "3"), ("distraction", None)]
