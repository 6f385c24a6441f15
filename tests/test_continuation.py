"""Behavioural continuation with the example adapter run as a real subprocess."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from judge import api
from judge.errors import JudgeInputError
from judge.summaries.continuation import (
    ActionCheck,
    AgentAction,
    AgentError,
    continue_from_summary,
    run_agent,
    to_messages,
    verdict_of,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
AGENT = f"{sys.executable} {ROOT / 'examples' / 'agents' / 'rule_agent.py'}"


def _ledger(name):
    return api.load_ledger(EXAMPLES / name / "scenario.yaml")


def test_lost_completion_leads_to_a_repeated_account():
    ledger = _ledger("account-twice")
    clean = continue_from_summary(ledger, EXAMPLES / "account-twice" / "clean.jsonl", "e19", AGENT)
    assert clean.verdict == "consistent" and clean.passed and clean.same_action
    assert clean.next_user_event == "e20" and clean.action_turn == 9
    assert clean.summary_only.action == AgentAction(tool="run_billing_tests", args={
        "environment": "sandbox", "suite": "invoices", "account_id": "qa-381"})
    assert clean.recorded.text.startswith("Resuming from the summary")  # what the recorded agent did next

    drift = continue_from_summary(ledger, EXAMPLES / "account-twice" / "drift.jsonl", "e19", AGENT)
    assert drift.verdict == "summary-forbidden" and not drift.passed
    assert drift.full_history.allowed and drift.full_history.action.tool == "run_billing_tests"
    assert drift.summary_only.action.tool == "create_account"
    assert drift.summary_only.action.args["plan"] == "team-annual"  # the summary kept the corrected plan
    assert [v.rule for v in drift.summary_only.violations] == ["not-repeated:test_account"]
    assert drift.full_history.messages > drift.summary_only.messages == 2


def test_lost_file_boundary_leads_to_an_app_code_edit():
    ledger = _ledger("checkout-firefox")
    drift = continue_from_summary(ledger, EXAMPLES / "checkout-firefox" / "drift.jsonl", "e12", AGENT)
    assert drift.next_user_event is None and drift.action_turn == 7
    assert drift.full_history.action.tool == "run_tests" and drift.full_history.action.args["browser"] == "firefox"
    assert drift.summary_only.action.args["path"] == "src/checkout/payFrame.ts"
    assert {v.key for v in drift.summary_only.violations} == {"editable_paths", "no_app_code"}
    assert drift.verdict == "summary-forbidden"
    clean = continue_from_summary(ledger, EXAMPLES / "checkout-firefox" / "clean.jsonl", "e15", AGENT)
    assert clean.summary_only.action.args["path"] == "tests/checkout.spec.ts" and clean.summary_only.allowed
    assert clean.verdict == "diverged" and clean.passed  # both allowed, different next steps
    strict = continue_from_summary(ledger, EXAMPLES / "checkout-firefox" / "clean.jsonl", "e15", AGENT, strict=True)
    assert not strict.passed


def test_next_user_turn_can_be_given():
    ledger = _ledger("checkout-firefox")
    report = continue_from_summary(ledger, EXAMPLES / "checkout-firefox" / "drift.jsonl", "e12", AGENT,
                                   next_user="Please re-run the tests.")
    assert report.next_user_text == "Please re-run the tests." and report.action_turn == 7
    assert report.summary_only.action.args["browser"] == "chromium"  # the summary revived Chromium
    assert [v.key for v in report.summary_only.violations] == ["browser"]


def test_messages_are_openai_chat_shaped():
    from judge.trace import read_trace

    _, events, _ = read_trace(EXAMPLES / "account-twice" / "clean.jsonl")
    messages = to_messages(events[:12])
    roles = [m["role"] for m in messages]
    assert roles[:4] == ["user", "assistant", "assistant", "tool"]
    call = messages[2]["tool_calls"][0]
    assert call["function"]["name"] == "list_plans" and json.loads(call["function"]["arguments"]) == {
        "environment": "sandbox"}
    assert messages[3]["tool_call_id"] == call["id"] and json.loads(messages[3]["content"])["status"] == "ok"
    assert all(m["role"] != "state-write" for m in messages)


def test_agent_failures_are_input_errors(tmp_path):
    messages = [{"role": "user", "content": "hi"}]
    script = tmp_path / "agent.py"
    for body, problem in (("import sys; sys.exit(3)", "exited 3"),
                          ("print('not json')", "no valid action"),
                          ("print('{\"tool\": \"x\", \"text\": \"y\"}')", "no valid action"),
                          ("import time; time.sleep(5)", "no answer within")):
        script.write_text(body)
        with pytest.raises(AgentError, match=problem):
            run_agent([sys.executable, str(script)], messages, timeout=1.0)
    with pytest.raises(AgentError, match="not found"):
        run_agent("/nonexistent/agent", messages)
    assert run_agent(AGENT, messages).tool == "run_tests"


def test_verdicts():
    ok = ActionCheck(action=AgentAction(tool="a", args={"x": "Y"}), allowed=True)
    same = ActionCheck(action=AgentAction(tool="a", args={"x": "y"}), allowed=True)
    other = ActionCheck(action=AgentAction(text="no"), allowed=True)
    bad = ActionCheck(action=AgentAction(tool="b"), allowed=False)
    assert verdict_of(ok, same) == (True, True, "consistent")
    assert verdict_of(ok, other)[2] == "diverged"
    assert verdict_of(ok, bad)[2] == "summary-forbidden"
    assert verdict_of(bad, ok)[2] == "reference-forbidden"
    assert verdict_of(bad, bad)[2] == "both-forbidden"


def test_continue_command():
    from judge.cli import summary as cli_summary

    app = typer.Typer()
    app.callback()(lambda: None)
    cli_summary.register(app)
    runner = CliRunner()
    scenario = str(EXAMPLES / "account-twice" / "scenario.yaml")
    drift = runner.invoke(app, ["continue", scenario, str(EXAMPLES / "account-twice" / "drift.jsonl"),
                                "--agent", AGENT, "--event", "e19"])
    assert drift.exit_code == 1 and "SUMMARY-FORBIDDEN" in drift.output and "not-repeated" in drift.output
    clean = runner.invoke(app, ["continue", scenario, str(EXAMPLES / "account-twice" / "clean.jsonl"),
                                "--agent", AGENT, "--event", "e19", "-q"])
    assert clean.exit_code == 0 and clean.output == ""
    for event in ("e99", "e20"):
        bad = runner.invoke(app, ["continue", scenario, str(EXAMPLES / "account-twice" / "clean.jsonl"),
                                  "--agent", AGENT, "--event", event])
        assert bad.exit_code == 2 and bad.output.count("\n") == 1
    broken = runner.invoke(app, ["continue", scenario, str(EXAMPLES / "account-twice" / "clean.jsonl"),
                                 "--agent", f"{sys.executable} -c 'import sys; sys.exit(4)'", "--event", "e19"])
    assert broken.exit_code == 2 and "exited 4" in broken.output


def test_errors_name_the_trace():
    with pytest.raises(JudgeInputError) as info:
        continue_from_summary(_ledger("account-twice"), EXAMPLES / "account-twice" / "clean.jsonl", "e1", AGENT)
    assert info.value.field == "kind" and info.value.file.endswith("clean.jsonl")
