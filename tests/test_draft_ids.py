"""Drafts never take a reviewed scenario's id (`<id>-draft` by default, and it still grades that
scenario's traces), and a trace with no user message drafts from its first task statement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import TraceBuilder
from typer.testing import CliRunner

from judge.cli import app
from judge.draft import draft_scenario
from judge.errors import JudgeInputError
from judge.grade import GradeSession
from judge.ledger import load_scenario
from judge.model.scenario import grades_traces_of
from judge.review.queue import _ScenarioFinder
from judge.trace.who_and_when import log_trace

REPO = Path(__file__).resolve().parents[1]
CHECKOUT = REPO / "examples" / "checkout-firefox"


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_draft_is_named_after_its_scenario_with_a_draft_suffix(tmp_path):
    result = draft_scenario([CHECKOUT / "drift.jsonl"])
    assert result.draft.scenario_id == "checkout-firefox-draft"
    path = tmp_path / "draft.yaml"
    path.write_text(result.text, encoding="utf-8")
    assert load_scenario(path)[0].id == "checkout-firefox-draft"
    assert "a draft never takes the id of the scenario its traces name (checkout-firefox)" in result.text
    assert draft_scenario([CHECKOUT / "drift.jsonl"], scenario_id="mine").draft.scenario_id == "mine"


def test_a_draft_grades_the_traces_of_the_scenario_it_drafts_and_no_other(tmp_path):
    path = tmp_path / "draft.yaml"
    path.write_text(draft_scenario([CHECKOUT / "drift.jsonl"]).text, encoding="utf-8")
    run = GradeSession(None).grade_files(path, [CHECKOUT / "drift.jsonl"], allow_draft=True).runs[0]
    assert run.scenario == "checkout-firefox-draft" and run.passed is False
    other = REPO / "examples" / "keep-database" / "drift.jsonl"
    with pytest.raises(JudgeInputError, match="trace is for scenario 'keep-database', not 'checkout-firefox-draft'"):
        GradeSession(None).grade_files(path, [other], allow_draft=True)
    assert grades_traces_of("x-draft", "x") and grades_traces_of("x", "x")
    assert not grades_traces_of("x", "x-draft") and not grades_traces_of("xy-draft", "x")


def test_a_draft_beside_the_reviewed_scenario_does_not_shadow_it(tmp_path):
    # The review page finds a run's scenario file by id: a draft sorting first used to win.
    (tmp_path / "a-draft.yaml").write_text(draft_scenario([CHECKOUT / "drift.jsonl"]).text, encoding="utf-8")
    (tmp_path / "scenario.yaml").write_text((CHECKOUT / "scenario.yaml").read_text(encoding="utf-8"),
                                            encoding="utf-8")
    finder = _ScenarioFinder([tmp_path])
    assert finder.find("checkout-firefox", None).name == "scenario.yaml"
    assert finder.find("checkout-firefox-draft", None).name == "a-draft.yaml"


def test_the_cli_says_the_draft_id(tmp_path):
    out = tmp_path / "d.yaml"
    result = CliRunner().invoke(app, ["draft", str(CHECKOUT / "drift.jsonl"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "drafted checkout-firefox-draft:" in result.output


def _team_log() -> tuple[dict, list[dict]]:
    """A CaptainAgent-style Who&When log: the task reaches the team as an agent's message."""
    record = {"question": "How many clients get the sunset design?", "history": [
        {"role": "assistant", "name": "Excel_Expert", "content": (
            "You are given: (1) a task and advises from your manager with a specific plan and (2) a general task.\n"
            "Collect information from the general task, follow the suggestions from manager to solve the task.\n\n"
            "# General Task\nHow many of the clients in clients.xlsx will receive the sunset awning design? "
            "Please solve the problem carefully.\n\n## Constraints and conditions for completion\n"
            "- Do not edit clients.xlsx.\n- Use Python 3.11.\n")},
        {"role": "user", "name": "Computer_terminal", "content": "exitcode: 0 (execution succeeded)\nCode output: 4"},
        {"role": "assistant", "name": "Verification_Expert", "content": "The answer is 4. TERMINATE"},
    ]}
    return log_trace(record, Path("Algorithm-Generated/7.json"))


def test_a_trace_without_a_user_message_drafts_from_its_first_task_statement(tmp_path):
    header, events = _team_log()
    trace = _write(tmp_path / "7.jsonl", [header, *events])
    result = draft_scenario([trace])
    text = result.text
    goal = result.draft.entries[0]
    assert goal.key == "goal" and goal.value.startswith("How many of the clients in clients.xlsx")
    assert "You are given" not in text and "Excel_Expert" not in text  # the framework's preamble, the label
    assert "no user message: drafted from the first task statement, s0" in text
    assert '# s0 (task statement, turn 0) [offline]: "How many of the clients' in text
    assert "(user, turn" not in text
    assert result.draft.scenario_id == "ww-algorithm-generated-7-draft"
    (tmp_path / "d.yaml").write_text(text, encoding="utf-8")
    scenario = load_scenario(tmp_path / "d.yaml")[0]
    assert scenario.ledger[0].source_turn == 0
    assert any(e.class_ == "constraint" and "clients.xlsx" in str(e.value) for e in scenario.ledger)
    run = GradeSession(None).grade_files(tmp_path / "d.yaml", [trace], allow_draft=True).runs[0]
    assert run.scenario == "ww-algorithm-generated-7-draft"


def test_a_user_message_is_drafted_from_even_when_an_agent_spoke_first(tmp_path):
    trace = TraceBuilder("s")
    trace.say(0, "Hello, I am the planner. Our task is to repair the login page tests.")
    trace.user(1, "Fix the flaky login test. Do not deploy anything.")
    result = draft_scenario([_write(tmp_path / "t.jsonl", trace.lines)])
    assert result.draft.entries[0].value.startswith("Fix the flaky login test")
    assert result.draft.task_event is None and "task statement" not in result.text


def test_a_trace_with_neither_a_user_message_nor_a_task_statement_is_refused(tmp_path):
    trace = TraceBuilder("s")
    trace.say(1, "OK.")
    trace.call(2, "run_tests")
    with pytest.raises(JudgeInputError, match="no user message and no agent message stating a task"):
        draft_scenario([_write(tmp_path / "t.jsonl", trace.lines)])


@pytest.mark.slow
def test_a_trace_naming_no_scenario_is_refused_by_a_scenario_not_crashed_on(tmp_path):
    # mypy found it: grades_traces_of(id, None) raised a TypeError, so `judge grade` exited 4.
    lines = (REPO / "examples" / "keep-database" / "clean.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    del header["scenario"]
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    scenario = REPO / "examples" / "keep-database" / "scenario.yaml"
    with pytest.raises(JudgeInputError, match="the run header names no scenario, so it is not a trace of "
                                              "'keep-database'") as raised:
        GradeSession(None).grade_files(scenario, [trace])
    assert raised.value.field == "scenario" and raised.value.line == 1
    result = CliRunner().invoke(app, ["grade", str(scenario), str(trace)])
    assert result.exit_code == 2 and "graded with --policy" in result.output
    assert CliRunner().invoke(app, ["grade", "--policy", "agent-safety", str(trace)]).exit_code == 0
