"""The scenario's `script:` (judge.model.script) and the fake tools that answer from it
(judge.suite.drive.fixtures): shapes, order, errors kept, the default never a success, the lint."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from judge.ledger import lint, load_scenario
from judge.model import Scenario, Script, ToolFixture, json_schema, schema_names
from judge.suite.drive.fixtures import FixtureBook

REPO = Path(__file__).resolve().parents[1]
SCRIPTED = REPO / "examples" / "scripted-checkout" / "scenario.yaml"


def script(**fields) -> Script:
    return Script.model_validate({"turns": [{"turn": 1, "user": "hi"}, {"turn": 2, "user": ["a", "b"]}], **fields})


def test_a_script_validates_and_its_turns_messages_are_lists():
    s = script()
    assert s.turn_numbers() == [1, 2]
    assert s.turns[0].messages == ["hi"] and s.turns[1].messages == ["a", "b"]
    assert s.default.status == "error"


@pytest.mark.parametrize("bad, words", [
    ({"turns": [{"turn": 2}, {"turn": 2}]}, "must increase"),
    ({"turns": [{"turn": 1}], "default": {"status": "ok", "result": "fine"}}, "never a silent success"),
    ({"turns": [{"turn": 1, "reset": "compaction"}]}, "no history to replace"),
    ({"turns": [{"turn": 1, "user": ["ok", " "]}]}, "must not be empty"),
    ({"turns": [{"turn": 1}], "fixtures": [{"tool": "t", "result": 1, "responses": [{"result": 2}]}]}, "not both"),
    ({"turns": [{"turn": 1, "colour": "red"}]}, "Extra inputs"),
    ({"turns": []}, "at least 1"),
])
def test_a_bad_script_is_refused(bad, words):
    with pytest.raises(ValidationError, match=words):
        Script.model_validate(bad)


def test_the_schemas_name_the_script_the_fixture_and_the_fixtures_file():
    assert {"script", "tool-fixture", "fixtures"} <= set(schema_names())
    scenario = json_schema("scenario")
    assert "script" in scenario["properties"]
    assert json_schema("fixtures")["additionalProperties"] is False


def test_fixtures_answer_in_order_turn_first_then_the_script_then_the_default():
    s = Script.model_validate({
        "turns": [{"turn": 1, "user": "go", "fixtures": [{"tool": "run", "result": "turn one"}]}, {"turn": 2, "user": "x"}],
        "fixtures": [
            {"tool": "run", "args": {"browser": "fire*"}, "responses": [
                {"status": "timeout", "result": {"error": "slow"}}, {"result": {"passed": 20}}]},
            {"tool": "read_*", "args": {"path": "tests/*"}, "result": "content"},
        ],
        "default": {"status": "error", "result": {"error": "nothing"}}})
    book = FixtureBook(s)
    assert book.answer(1, "run", {"browser": "firefox"}).response.result == "turn one"  # the turn's own first
    first = book.answer(2, "run", {"browser": "firefox"})  # a glob matcher (case as written); then in order
    assert (first.status, first.fixture) == ("timeout", "fixtures.0")
    assert book.answer(2, "run", {"browser": "firefox"}).response.result == {"passed": 20}
    used_up = book.answer(2, "run", {"browser": "firefox"})  # used up: the default, an error
    assert (used_up.status, used_up.fixture, used_up.response.result) == ("error", None, {"error": "nothing"})
    assert book.answer(2, "read_file", {"path": "tests/a.ts"}).response.result == "content"
    assert book.answer(2, "read_file", {"path": "src/a.ts"}).status == "error"  # argument does not match
    assert book.answer(2, "read_file", {}).status == "error"  # a missing argument matches nothing
    assert FixtureBook(s).answer(2, "run", {"browser": "firefox"}).status == "timeout"  # a new run starts again


def test_a_single_response_answers_every_matching_call_and_dotted_arguments_match():
    fixture = ToolFixture(tool="pay", args={"order.id": "A-1"}, result={"ok": True})
    s = Script.model_validate({"turns": [{"turn": 1}], "fixtures": [fixture.model_dump(exclude_none=True)]})
    book = FixtureBook(s)
    for _ in range(3):
        assert book.answer(1, "pay", {"order": {"id": "A-1"}}).status == "ok"
    assert book.answer(1, "pay", {"order": {"id": "a-1"}}).status == "ok"  # equality folds case
    assert book.answer(1, "pay", {"order": {"id": "A-2"}}).status == "error"


def test_the_example_script_lints_clean_and_the_lint_warns_where_script_and_ledger_disagree():
    scenario, lines = load_scenario(SCRIPTED)
    _, issues = lint(scenario, lines)
    assert not issues
    data = scenario.model_dump(by_alias=True, exclude_unset=True, mode="json")
    data["deltas"].append({"turn": 4, "op": "set", "key": "browser", "value": "webkit", "source": "user"})
    data["script"]["turns"][3].pop("user")
    data["checkpoints"].append({"after_turn": 9, "must_retain": ["goal"]})
    data["script"]["turns"][2]["to"] = "someone"
    _, issues = lint(Scenario.model_validate(data))
    found = {(i.level, i.field): i.message for i in issues}
    assert "no user message" in found[("warning", "deltas.2.turn")]
    assert "never reaches it" in found[("warning", "checkpoints.2.after_turn")]
    assert "hands nothing over" in found[("warning", "script.turns.2.to")]


def test_the_words_judge_run_says_are_package_data_and_hashed_into_every_header():
    import hashlib
    import tomllib

    from judge.suite.drive.texts import TEXTS_FILE, texts, texts_sha256

    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["tool"]["setuptools"]["package-data"]["judge.suite.drive"] == [TEXTS_FILE.name]
    assert texts_sha256() == hashlib.sha256(TEXTS_FILE.read_bytes()).hexdigest()
    assert texts().distance and "{goal}" in texts().distance[0]
