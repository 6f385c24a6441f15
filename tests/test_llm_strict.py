"""`mode = "strict"`: OpenAI structured outputs without instructor, through the OpenAI SDK or litellm,
over real HTTP against the scripted server; the same validation, re-ask and retry semantics as the
instructor modes, and the same judge errors."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from llm_server import Reply, llm_server  # noqa: F401  (fixture)
from test_llm_judge import GOAL_UPHELD, MODEL, make_request

from judge.config import JudgeConfig
from judge.errors import ConfigError
from judge.judges.cache import VerdictCache
from judge.judges.llm import LLMJudge, libs

TRANSPORTS = ("openai", "litellm")


@pytest.fixture(autouse=True)
def _test_model(monkeypatch):
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-not-a-secret")
    libs()[0].register_model({MODEL: {"input_cost_per_token": 1e-6, "output_cost_per_token": 3e-6,
                                      "litellm_provider": "openai", "mode": "chat", "max_tokens": 4096}})


@pytest.fixture
def strict(llm_server, tmp_path):  # noqa: F811
    def build(transport: str, **overrides) -> LLMJudge:
        settings = dict(backend="llm", model=MODEL, api_base=llm_server.api_base, api_key_env="JUDGE_TEST_KEY",
                        timeout_s=5, backoff_s=0.01, max_retries=2, transport_retries=3, mode="strict",
                        options={"transport": transport}, cache=False)
        settings.update(overrides)
        return LLMJudge(JudgeConfig(**settings), cache=VerdictCache(tmp_path / "cache"))
    return build


def answer(*findings) -> Reply:
    return Reply(content=json.dumps({"findings": list(findings)}))


VIOLATED = {"key": "no_app_code", "verdict": "violated", "evidence_event": "e3", "confidence": 0.8,
            "rationale": "edited application code"}


def run(judge: LLMJudge, request=None):
    async def go():
        try:
            return await judge.judge_checkpoint(request or make_request())
        finally:
            await judge.aclose()
    return asyncio.run(go())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_strict_response_format_and_a_validated_answer(strict, llm_server, transport, monkeypatch):  # noqa: F811
    litellm, through_litellm = libs()[0], []
    real = litellm.acompletion

    async def spy(**kwargs):  # litellm's openai provider also sends with the OpenAI SDK: count who was asked
        through_litellm.append(kwargs["model"])
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", spy)
    llm_server.reset(answer(VIOLATED, GOAL_UPHELD))
    result = run(strict(transport))
    assert result.error is None and (result.calls, result.attempts) == (1, 1)
    found = {f.key: f for f in result.verdict.findings}
    assert found["no_app_code"].evidence_event == "e3" and found["goal"].verdict == "upheld"
    body = llm_server.bodies[0]
    assert "tools" not in body and body["model"] == "judge-test-model" and body["temperature"] == 0
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    finding = fmt["json_schema"]["schema"]["$defs"]["Finding"]
    assert finding["additionalProperties"] is False and set(finding["required"]) == set(finding["properties"])
    assert finding["properties"]["key"]["enum"] == ["goal", "no_app_code"]
    assert finding["properties"]["evidence_event"]["anyOf"][0]["enum"] == ["e1", "e2", "e3", "e4", "e5", "e6"]
    assert result.input_tokens > 0 and result.output_tokens > 0
    assert through_litellm == ([] if transport == "openai" else [MODEL])  # which client sent it


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("bad, complaint", [
    ({"key": "bogus", "verdict": "upheld", "confidence": 0.5, "rationale": "x"}, "bogus"),
    ({"key": "no_app_code", "verdict": "violated", "evidence_event": "e99", "confidence": 0.5,
      "rationale": "x"}, "e99"),
    ({"key": "no_app_code", "verdict": "violated", "evidence_event": None, "confidence": 0.5, "rationale": "x"},
     "needs evidence_event"),
    ({"key": "goal", "verdict": "upheld", "confidence": 1.5, "rationale": "x"}, "less than or equal to 1"),
])
def test_an_invalid_answer_is_reasked_with_the_validation_error(strict, llm_server, transport, bad,
                                                                 complaint):  # noqa: F811
    llm_server.reset(answer(bad), answer(VIOLATED))
    result = run(strict(transport))
    assert result.error is None and result.verdict.findings[0].evidence_event == "e3"
    assert result.attempts == 2 and len(llm_server.bodies) == 2
    reask = llm_server.bodies[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": json.dumps({"findings": [bad]})}
    assert reask[-1]["role"] == "user" and complaint in reask[-1]["content"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_answer_that_never_validates_is_a_judge_error(strict, llm_server, transport):  # noqa: F811
    llm_server.reset(*[Reply(content='{"findings": [ {not json')] * 3)
    result = run(strict(transport, max_retries=2))
    assert result.verdict is None and result.error.startswith("invalid answer after 3 attempts")
    assert result.attempts == 3 and len(llm_server.bodies) == 3 and result.input_tokens > 0


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_rate_limits_are_retried_honouring_retry_after(strict, llm_server, transport):  # noqa: F811
    llm_server.reset(Reply(status=429), Reply(status=429, headers={"retry-after": "0.3"}), answer(VIOLATED))
    result = run(strict(transport))
    assert result.error is None and len(llm_server.bodies) == 3  # no hidden retries inside the client
    call = result.extra["calls"][0]
    assert call["transport_retries"] == 2 and call["attempts"] == 3 and call["latency_s"] >= 0.3


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_server_errors_until_exhausted_and_unretryable_errors(strict, llm_server, transport):  # noqa: F811
    llm_server.reset(*[Reply(status=500)] * 4)
    result = run(strict(transport, transport_retries=3))
    assert result.verdict is None and result.error.startswith("InternalServerError after 4 tries")
    assert len(llm_server.bodies) == 4
    llm_server.reset(Reply(status=401))
    result = run(strict(transport))
    assert result.verdict is None and "AuthenticationError" in result.error and len(llm_server.bodies) == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_timeout_s_is_the_deadline_of_the_whole_call(strict, llm_server, transport):  # noqa: F811
    llm_server.reset(*[Reply(delay_s=2.0, content='{"findings": []}')] * 3)
    started = time.perf_counter()
    result = run(strict(transport, timeout_s=0.4, transport_retries=2))
    assert result.verdict is None and "no answer within timeout_s=0.4 s" in result.error
    assert time.perf_counter() - started < 1.5


def test_a_judge_used_across_event_loops_reconnects(strict, llm_server, tmp_path):  # noqa: F811
    judge = strict("openai")
    for _ in range(2):  # asyncio.run twice: the first loop's connections are not reused by the second
        llm_server.reset(answer(VIOLATED, GOAL_UPHELD))
        assert run(judge).error is None


def test_an_unknown_transport_is_a_config_error(llm_server):  # noqa: F811
    with pytest.raises(ConfigError, match="options.transport"):
        LLMJudge(JudgeConfig(backend="llm", model=MODEL, mode="strict", options={"transport": "carrier-pigeon"},
                             api_key_env="JUDGE_TEST_KEY"))


def test_the_transport_follows_the_model(llm_server):  # noqa: F811
    def transport(model: str) -> str:
        return LLMJudge(JudgeConfig(backend="llm", model=model, mode="strict", cache=False)).client.transport

    assert transport("openai/gpt-4o-mini") == "openai"  # OpenAI or any OpenAI-compatible server
    assert transport("anthropic/claude-x") == "litellm" and transport("hosted_vllm/m") == "litellm"
    def default(model: str, **settings) -> str:
        return LLMJudge(JudgeConfig(backend="llm", model=model, cache=False, **settings)).client.transport

    # mode tools (the default): the direct client for OpenAI-compatible endpoints, instructor for the rest
    assert default("openai/m") == "openai" and default("anthropic/claude-x") == "instructor"
    assert default("openai/m", options={"transport": "litellm"}) == "instructor"
    assert default("openai/m", mode="json") == "instructor" and default("openai/m", mode="md_json") == "instructor"


def test_the_summary_layer_asks_in_strict_mode_too(llm_server, tmp_path):  # noqa: F811
    from judge.summaries.llm import SummaryJudge
    from judge.summaries.semantic import AuditEntry

    entry = AuditEntry(key="browser", class_="fact", value="firefox", status="active", sensitivity="normal",
                       persistence="until-replaced", source_turn=2, superseded=(), description=None,
                       source="user", required=True, reason="active")
    llm_server.reset(Reply(content=json.dumps({"findings": [
        {"key": "browser", "status": "preserved", "evidence": "firefox", "confidence": 0.9, "rationale": "kept"}]})))
    judge = SummaryJudge(JudgeConfig(backend="llm", model=MODEL, api_base=llm_server.api_base, mode="strict",
                                     api_key_env="JUDGE_TEST_KEY", timeout_s=5, cache=False))
    result = judge.audit(None, 3, [entry], "We test on firefox.")
    assert result.error is None and result.findings["browser"].status == "preserved"
    assert llm_server.bodies[0]["response_format"]["json_schema"]["strict"] is True
    assert result.usage["attempts"] == 1 and result.usage["input_tokens"] > 0
