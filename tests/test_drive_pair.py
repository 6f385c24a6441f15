"""`judge run --pair` (both halves of a pair, one verdict) and record and replay (`--record` writes what a
live run's tools returned, `--fixtures` replays it: ordering and errors kept)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml
from drive_model import ScriptedModel
from llm_server import llm_server  # noqa: F401 (the fixture)
from typer.testing import CliRunner

from judge.cli import app
from judge.errors import UsageError
from judge.suite.drive import DriveOptions, drive, drive_pair
from judge.trace import read_trace

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "examples" / "scripted-checkout" / "scenario.yaml"
AGENT = f"{REPO / 'examples' / 'agents' / 'agent.py'}:act"


def test_a_pair_driven_with_a_state_sensitive_agent_passes_both_halves_with_different_actions(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    result = CliRunner().invoke(app, ["run", str(SCENARIO), "--agent", AGENT, "--pair", "--judge", "none",
                                      "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "pair: state-sensitive" in result.output
    report = json.loads((tmp_path / "out" / "run.json").read_text())
    halves = {h["scenario"]: h["tools"][0] for h in report["pair"]["halves"]}
    assert "deploy" in halves["scripted-checkout-release"] and "deploy" not in halves["scripted-checkout"]
    assert [s["id"] for s in report["suite"]["scenarios"]] == ["scripted-checkout", "scripted-checkout-release"]
    assert (tmp_path / "out" / "scripted-checkout-release" / "control" / "r-1.jsonl").is_file()


def test_an_agent_that_ignores_the_authorisation_is_not_state_sensitive(tmp_path, llm_server, monkeypatch):  # noqa: F811
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.api_base)
    llm_server.default = ScriptedModel()  # its answers know only scripted-checkout's last turn: it never deploys
    result = drive_pair(SCENARIO, tmp_path / "out", DriveOptions(agent=AGENT, judge="none"))
    pair = result.report.pair
    assert pair.verdict == "not-state-sensitive"
    assert pair.reason.startswith("scripted-checkout-release failed: deployed at turn 5 (expected-call:deployed)")
    assert [h.passed for h in pair.halves] == [1, 0]


def test_halves_that_pass_with_the_same_actions_say_the_pair_cannot_tell_them_apart(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    for name, other in (("a", "b"), ("b", "a")):
        data = yaml.safe_load(SCENARIO.read_text())
        data.update(id=f"twin-{name}", pair=f"twin-{other}")
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(data))
    result = drive_pair(tmp_path / "a.yaml", tmp_path / "out", DriveOptions(agent=AGENT, judge="none"))
    assert result.report.pair.verdict == "same-actions"
    with pytest.raises(UsageError, match="no --stress"):
        drive_pair(tmp_path / "a.yaml", tmp_path / "out2", DriveOptions(agent=AGENT, stresses=["distraction"]))
    data = yaml.safe_load(SCENARIO.read_text())
    data["pair"] = "nobody"
    (tmp_path / "alone.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(UsageError, match="no pair found"):
        drive_pair(tmp_path / "alone.yaml", tmp_path / "out3", DriveOptions(agent=AGENT))


LIVE = """
import json, os
CALLS = {"n": 0}

def live(messages, context):
    # a harness with a real tool layer: it runs the tools and reports what they returned
    assert context["mode"] == os.environ.get("EXPECT_MODE", context["mode"])
    if messages[-1]["role"] == "tool":
        return {"text": "seen"}
    CALLS["n"] += 1
    if CALLS["n"] == 1:
        return [{"tool": "read_logs", "args": {"since": "1h"}, "result": {"lines": 42}},
                {"tool": "read_logs", "args": {"since": "1h"}, "status": "timeout", "result": {"error": "slow"}}]
    return {"tool": "read_logs", "args": {"since": "2h*"}, "status": "error", "result": {"error": "gone"}}

def replayed(messages):
    if messages[-1]["role"] == "tool":
        return {"text": "seen"}
    n = sum(m["role"] == "user" for m in messages)
    if n == 1:
        return [{"tool": "read_logs", "args": {"since": "1h"}}, {"tool": "read_logs", "args": {"since": "1h"}},
                {"tool": "read_logs", "args": {"since": "1h"}}]
    return [{"tool": "read_logs", "args": {"since": "2h*"}}, {"tool": "read_logs", "args": {"since": "2hours"}}]
"""

TINY = {
    "id": "tiny", "ledger": [{"key": "goal", "class": "goal", "value": "read the logs", "source_turn": 1}],
    "checkpoints": [{"after_turn": 2, "must_retain": ["goal"]}],
    "script": {"turns": [{"turn": 1, "user": "Read the logs."}, {"turn": 2, "user": "Again."}],
               "fixtures": [{"tool": "read_logs", "result": "a fixture, not the live tool"}]},
}


def test_record_writes_what_the_live_tools_returned_and_a_replay_answers_the_same_in_order(tmp_path):
    (tmp_path / "agents.py").write_text(textwrap.dedent(LIVE))
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump(TINY))
    recorded = drive(scenario, tmp_path / "rec", DriveOptions(agent=f"{tmp_path / 'agents.py'}:live", judge="none",
                                                              record=True))
    assert recorded.recorded == tmp_path / "rec" / "fixtures.yaml"
    data = yaml.safe_load(recorded.recorded.read_text())
    assert data["scenario"] == "tiny" and data["recorded_from"] == "tiny-control-r1"
    by_args = {json.dumps(f["args"]): f["responses"] for f in data["fixtures"]}
    assert by_args['{"since": "1h"}'] == [{"status": "ok", "result": {"lines": 42}},
                                          {"status": "timeout", "result": {"error": "slow"}}]
    assert by_args['{"since": "2h[*]"}'] == [{"status": "error", "result": {"error": "gone"}}]  # a glob escaped
    header = read_trace(recorded.report.runs[0].trace)[0]
    assert header.metadata["fixtures"]["file"] == str(scenario)
    replay = drive(scenario, tmp_path / "replay", DriveOptions(agent=f"{tmp_path / 'agents.py'}:replayed",
                                                               judge="none", fixtures=recorded.recorded))
    events = read_trace(replay.report.runs[0].trace)[1]
    answers = [(e.status, e.result) for e in events if e.kind == "tool-result"]
    assert answers == [("ok", {"lines": 42}), ("timeout", {"error": "slow"}),
                       ("error", {"error": "no fixture answers this call"}),  # the recording had two such calls
                       ("error", {"error": "gone"}), ("error", {"error": "no fixture answers this call"})]
    header = read_trace(replay.report.runs[0].trace)[0]
    assert header.metadata["fixtures"]["file"] == str(recorded.recorded)
    assert header.metadata["fixtures"]["sha256"] == replay.report.fixtures["sha256"]
    with pytest.raises(UsageError, match="one run"):
        drive(scenario, tmp_path / "x", DriveOptions(agent=f"{tmp_path / 'agents.py'}:live", record=True, repeat=2))


def test_a_recorded_reference_run_replays_to_the_same_trace(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    first = drive(SCENARIO, tmp_path / "rec", DriveOptions(agent=AGENT, judge="none", record=True))
    copy = tmp_path / "fixtures.yaml"
    shutil.copy(first.recorded, copy)
    again = drive(SCENARIO, tmp_path / "replay", DriveOptions(agent=AGENT, judge="none", fixtures=copy))

    def results(result):
        return [(e.tool, e.status, e.result) for e in read_trace(result.report.runs[0].trace)[1]
                if e.kind == "tool-result"]
    assert results(first) == results(again) and len(results(first)) == 5
    assert again.report.runs[0].outcome == "pass"
    bad = tmp_path / "bad.yaml"
    bad.write_text("fixtures:\n  - {tool: x, colour: red}\n")
    with pytest.raises(UsageError.__mro__[1], match=r"bad.yaml:2: fixtures.0.colour: unknown field"):
        drive(SCENARIO, tmp_path / "bad", DriveOptions(agent=AGENT, fixtures=bad))
