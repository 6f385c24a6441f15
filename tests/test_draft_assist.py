"""The model-assisted drafter (`ledger-draft@1`) over real HTTP against the scripted OpenAI-compatible
server: what the model is shown, how its answer is constrained and merged, re-asks, errors, cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_server import Reply, llm_server, request_schema  # noqa: F401  (fixture)
from typer.testing import CliRunner

from judge.cli import app
from judge.config import JudgeConfig
from judge.draft import draft_scenario
from judge.draft.assist import DraftAssistant
from judge.errors import ConfigError
from judge.grade import GradeSession
from judge.judges.cache import VerdictCache
from judge.judges.llm import libs
from judge.prompts import check

MODEL = "openai/draft-test"
REPO = Path(__file__).resolve().parents[1]
CHECKOUT = REPO / "examples" / "checkout-firefox" / "drift.jsonl"
USER_AND_TOOL_IDS = ["e1", "e4", "e6", "e8", "e11", "e14", "e16"]  # of CHECKOUT; e2, e3, e9... are the agent's


@pytest.fixture(autouse=True)
def _model(monkeypatch):
    monkeypatch.setenv("DRAFT_JUDGE_KEY", "sk-test-not-a-secret")
    libs()[0].register_model({MODEL: {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                                      "litellm_provider": "openai", "mode": "chat", "max_tokens": 4096}})


@pytest.fixture
def make(llm_server, tmp_path):
    def build(**overrides) -> DraftAssistant:
        settings = dict(name="gpt", backend="llm", model=MODEL, api_base=llm_server.api_base,
                        api_key_env="DRAFT_JUDGE_KEY", timeout_s=5, backoff_s=0.01, max_retries=1, transport_retries=2)
        settings.update(overrides)
        return DraftAssistant(JudgeConfig(**settings), cache=VerdictCache(tmp_path / "cache", namespace="ledger-draft"))
    return build


def proposals(bad_quote: bool = False) -> dict:
    return {
        "entries": [
            {"key": "no_deploy", "entry_class": "constraint", "value": "do not deploy anything",
             "sensitivity": "safety-critical", "evidence_event": "e1", "quote": "do not deploy anything"},
            {"key": "failure_cause", "entry_class": "uncertainty", "value": "whether the test or the iframe is flaky",
             "sensitivity": "normal", "evidence_event": "e1", "quote": "flaky in CI"},
            {"key": "pay_frame_delay", "entry_class": "fact", "value": "the payment frame mounts after 250 ms",
             "sensitivity": "normal", "evidence_event": "e6",
             "quote": "the moon is made of cheese" if bad_quote else "setTimeout(() => el.appendChild(frame), 250)"},
        ],
        "deltas": [{"op": "set", "key": "browser", "value": "firefox", "evidence_event": "e8",
                    "quote": "Use Firefox from now on"}],
        "rules": [{"check": "scope", "key": "no_app_code_model", "tool": "edit_file", "arg": "path",
                   "values": ["tests/**"], "evidence_event": "e1", "quote": "must not change application code"},
                  {"check": "forbidden-call", "key": "no_deploy", "tool": "edit_file", "arg": "path",
                   "values": ["deploy/*"], "evidence_event": "e1", "quote": "do not deploy anything"}],
    }


def test_the_model_sees_only_user_and_tool_events_blinded_and_fenced(make, llm_server):
    llm_server.reset(Reply(args=proposals()))
    result = draft_scenario([CHECKOUT], assistant=make())
    [body] = llm_server.bodies
    schema = request_schema(body)
    entry = next(v for k, v in schema["$defs"].items() if k.startswith("Entry_"))
    rule = next(v for k, v in schema["$defs"].items() if k.startswith("Rule_"))
    assert entry["properties"]["evidence_event"]["enum"] == USER_AND_TOOL_IDS
    assert rule["properties"]["tool"]["anyOf"][0]["enum"] == ["edit_file", "read_file", "run_tests"]
    user = body["messages"][-1]["content"]
    assert user.count("<trace_data>") == 1 and "e8 t4 user: Correction" in user
    for agent_said in ("Got it, Firefox from now on", "Fixed: the checkout test passes", "state-write",
                       "Starting with a Chromium run", "shopbot", "gpt-4.1"):
        assert agent_said not in json.dumps(body["messages"])
    assert "never instructions" in body["messages"][0]["content"]
    assert "no_deploy (constraint, safety-critical): do not deploy anything" in user
    assert result.assist["usage"]["calls"] == 1 and result.assist["error"] is None
    fingerprint = result.assist["fingerprint"]
    assert fingerprint["prompt"]["id"] == "ledger-draft" and fingerprint["model"] == MODEL


def test_proposals_merge_with_the_offline_draft_each_marked_with_its_origin(make, llm_server, tmp_path):
    llm_server.reset(Reply(args=proposals()))
    result = draft_scenario([CHECKOUT], assistant=make())
    text = result.text
    draft = result.draft
    assert draft.entry("no_deploy").origin == "offline+model"
    assert draft.entry("failure_cause").origin == "model" and draft.entry("failure_cause").class_ == "uncertainty"
    assert draft.entry("pay_frame_delay").source == "tool" and draft.entry("pay_frame_delay").turn == 3
    assert '# e1 (user, turn 1) [offline+model]: "do not deploy anything"' in text
    assert '# e1 (user, turn 1) [model]: "flaky in CI"' in text
    set_browser = next(d for d in draft.deltas if d.op == "set")
    assert set_browser.origin == "offline+model" and {e.event for e in set_browser.evidence} == {"e8"}
    forbid = next(r for r in draft.rules if r.key == "no_deploy")
    assert forbid.origin == "model" and forbid.data["args"] == {"path": "deploy/*"}
    assert "rule on 'no_app_code_model', a key the draft does not have: not added" in text
    assert "model layer: judge gpt (openai/draft-test), prompt ledger-draft@1" in text
    path = tmp_path / "draft.yaml"
    path.write_text(text, encoding="utf-8")
    run = GradeSession(None).grade_files(path, [CHECKOUT], allow_draft=True).runs[0]
    assert run.first_divergence.event == "e10" and not run.passed


def test_a_quote_not_in_its_event_is_re_asked(make, llm_server):
    llm_server.reset(Reply(args=proposals(bad_quote=True)), Reply(args=proposals()))
    result = draft_scenario([CHECKOUT], assistant=make())
    assert len(llm_server.bodies) == 2 and result.assist["usage"]["attempts"] == 2
    assert "the quote is not in event e6" in json.dumps(llm_server.bodies[1]["messages"])
    assert result.draft.entry("pay_frame_delay") is not None


def test_an_answer_that_stays_invalid_leaves_the_draft_offline_and_says_so(make, llm_server):
    bad = proposals()
    bad["entries"][0]["evidence_event"] = "e2"  # the agent's message: not an allowed evidence event
    llm_server.reset(Reply(args=bad), Reply(args=bad))
    result = draft_scenario([CHECKOUT], assistant=make(cache=False))
    offline = draft_scenario([CHECKOUT])
    assert result.assist["error"].startswith("invalid answer")
    assert "the model layer failed, the draft is offline only" in result.text
    assert [e.key for e in result.draft.entries] == [e.key for e in offline.draft.entries]


def test_an_unchanged_rerun_is_served_from_the_cache(make, llm_server):
    llm_server.reset(Reply(args=proposals()))
    first = draft_scenario([CHECKOUT], assistant=make())
    again = draft_scenario([CHECKOUT], assistant=make())
    assert len(llm_server.bodies) == 1 and again.assist["usage"] == {"calls": 0, "cache_hits": 1}
    assert again.text == first.text


def test_secrets_never_reach_the_model(make, llm_server, tmp_path):
    key = "sk-" + "Z9y8X7w6V5u4T3s2R1q0P9o8"
    trace = tmp_path / "trace.jsonl"
    lines = CHECKOUT.read_text(encoding="utf-8").splitlines()
    event = json.loads(lines[1])
    event["text"] += f" The CI token is {key}; write to ops@example.com."
    trace.write_text("\n".join([lines[0], json.dumps(event), *lines[2:]]) + "\n", encoding="utf-8")
    llm_server.reset(Reply(args=proposals()))
    result = draft_scenario([trace], assistant=make())
    sent = json.dumps(llm_server.bodies[0])
    assert key not in sent and "ops@example.com" not in sent and key not in result.text


def test_only_llm_judges_draft_and_the_prompt_is_locked(make):
    with pytest.raises(ConfigError, match="needs an llm judge"):
        DraftAssistant(JudgeConfig(name="local", backend="embedding", model="all-MiniLM-L6-v2"))
    with pytest.raises(ConfigError, match="not 'ledger-draft'"):
        make(options={"draft_prompt": "goal-fidelity@1"})
    report = check(REPO / "prompts")
    assert report.ok and report.locked >= 3


def test_the_draft_command_with_a_judge(llm_server, tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    config = tmp_path / "judge.toml"
    config.write_text(f'[tool.judge.judges.gpt]\nbackend = "llm"\nmodel = "{MODEL}"\n'
                      f'api_base = "{llm_server.api_base}"\napi_key_env = "DRAFT_JUDGE_KEY"\ntimeout_s = 5\n')
    llm_server.reset(Reply(args=proposals()))
    out = tmp_path / "draft.yaml"
    result = CliRunner().invoke(app, ["draft", str(CHECKOUT), "-o", str(out), "--judge", "gpt", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "model layer: 1 call(s), 0 cache hit(s)" in result.output and "[model]" in out.read_text()
    local = CliRunner().invoke(app, ["draft", str(CHECKOUT), "-o", str(tmp_path / "b.yaml"), "--judge", "local"])
    assert local.exit_code == 2 and "needs an llm judge" in local.output
