"""A judge answer is bounded in bytes before it is parsed (issue 39): a server that answers a 64 MB
body costs the judge no more than the bound (judge.model.limits.MAX_ANSWER_BYTES) and one counted
judge error that names it, never retried, on the direct client and through litellm's OpenAI
provider (options.transport = "litellm", and the instructor modes)."""

from __future__ import annotations

import tracemalloc

import pytest
from llm_server import Reply, llm_server  # noqa: F401  (fixture)
from test_llm_judge import MODEL, make_judge, run, violated  # noqa: F401

from judge.judges.llm import libs
from judge.model.limits import MAX_ANSWER_BYTES

HUGE = 64 * 1024 * 1024


@pytest.fixture(autouse=True)
def _test_model(monkeypatch):
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-not-a-secret")
    libs()[0].register_model({MODEL: {"input_cost_per_token": 1e-6, "output_cost_per_token": 3e-6,
                                      "litellm_provider": "openai", "mode": "chat", "max_tokens": 4096}})


def assert_refused_unread(judge, server, announce: bool) -> None:
    """A huge answer (three scripted, for the retries it must not make) is one judge error naming the
    bound, sent once, and costs no more memory than a few times the bound."""
    server.reset(*[Reply(body_bytes=HUGE, announce=announce)] * 3)
    tracemalloc.start()
    try:
        result = run(judge)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.verdict is None and f"exceeds the bound of {MAX_ANSWER_BYTES:,} bytes" in result.error
    assert len(server.bodies) == 1 and result.extra["calls"][0]["transport_retries"] == 0  # not retried
    assert peak < 4 * MAX_ANSWER_BYTES, f"peak {peak / 2**20:.0f} MB for a {HUGE >> 20} MB answer"


@pytest.mark.parametrize("settings", [
    {},  # the direct client, mode tools
    {"mode": "strict", "options": {"transport": "litellm"}},  # litellm's acompletion
    {"mode": "json"},  # instructor over litellm
], ids=["direct", "litellm", "instructor"])
@pytest.mark.parametrize("announce", [False, True], ids=["chunked", "content-length"])
def test_a_huge_answer_is_refused_unread_and_named(make_judge, llm_server, settings, announce):  # noqa: F811
    judge = make_judge(cache=False, transport_retries=2, timeout_s=30, **settings)
    llm_server.reset()
    assert run(judge).error is None  # a first call loads what the path imports, before memory is traced
    assert_refused_unread(judge, llm_server, announce)


def test_litellm_gets_a_bounded_client_where_its_provider_takes_one(monkeypatch):
    from judge.config import JudgeConfig
    from judge.judges.client import StructuredClient

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)

    def bounded(model: str, api_base: str | None = None, key: str | None = None):
        config = JudgeConfig(backend="llm", model=model, mode="json", api_base=api_base, cache=False)
        return StructuredClient(config, key)._bounded

    assert bounded("openai/m") is None  # no endpoint, no key: litellm's own error says what is missing
    assert type(bounded("anthropic/claude-x", key="k")).__name__ == "LitellmHandlers"  # litellm's own handler, bounded
    assert bounded("bedrock/b", key="k") is None  # a provider judge does not hand a client: not reached
    assert bounded("openai/m", api_base="http://127.0.0.1:9/v1").api_base == "http://127.0.0.1:9/v1"
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:8/v1")  # litellm's name for it, not the SDK's
    assert bounded("openai/m").api_base == "http://127.0.0.1:8/v1"


PROVIDER_MODELS = ["anthropic/claude-test", "gemini/gemini-test", "ollama_chat/llama-test"]
"""A model of each provider of judge.judges.bounded.HANDLER_PROVIDERS, which the stub serves in its own API."""


def provider_judge(make_judge, server, model: str, **settings):
    """A judge of `model` asking the stub in that provider's API (instructor's JSON mode over litellm)."""
    return make_judge(model=model, mode="json", api_base=server.api_base.removesuffix("/v1"), **settings)


@pytest.mark.parametrize("model", PROVIDER_MODELS)
@pytest.mark.parametrize("announce", [False, True], ids=["chunked", "content-length"])
def test_litellm_own_handler_is_bounded(make_judge, llm_server, model, announce):  # noqa: F811
    """A provider that reads with litellm's own HTTP handler is handed one over the bounded transport:
    the same refusal as the OpenAI paths."""
    judge = provider_judge(make_judge, llm_server, model, cache=False, transport_retries=2, timeout_s=30)
    llm_server.reset(Reply(body_bytes=HUGE, announce=announce))
    run(judge)  # a first call loads what the path imports, before memory is traced
    assert_refused_unread(judge, llm_server, announce)
    assert llm_server.paths and not any(p.endswith("/chat/completions") for p in llm_server.paths)  # its own API


@pytest.mark.parametrize("model", PROVIDER_MODELS)
def test_an_answer_within_the_bound_is_read_through_litellm_own_handler(make_judge, llm_server, model):  # noqa: F811
    """The bounded handler changes nothing for an answer within the bound: the verdict is read."""
    judge = provider_judge(make_judge, llm_server, model, cache=False)
    llm_server.reset(violated())
    result = run(judge)
    assert result.error is None, result.error
    assert [f.verdict for f in result.verdict.findings if f.key == "no_app_code"] == ["violated"]
    assert result.input_tokens == 10 and result.output_tokens == 5  # the provider's own usage, read
