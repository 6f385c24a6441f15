"""A judge answer is bounded in bytes before it is parsed (issue 39): a server that answers a 64 MB
body costs the judge no more than the bound (judge.model.limits.MAX_ANSWER_BYTES) and one counted
judge error that names it, never retried, on the direct client and through litellm's OpenAI
provider (options.transport = "litellm", and the instructor modes)."""

from __future__ import annotations

import tracemalloc

import pytest
from llm_server import Reply, llm_server  # noqa: F401  (fixture)
from test_llm_judge import MODEL, make_judge, run  # noqa: F401

from judge.judges.llm import libs
from judge.model.limits import MAX_ANSWER_BYTES

HUGE = 64 * 1024 * 1024


@pytest.fixture(autouse=True)
def _test_model(monkeypatch):
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-not-a-secret")
    libs()[0].register_model({MODEL: {"input_cost_per_token": 1e-6, "output_cost_per_token": 3e-6,
                                      "litellm_provider": "openai", "mode": "chat", "max_tokens": 4096}})


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
    llm_server.reset(*[Reply(body_bytes=HUGE, announce=announce)] * 3)
    tracemalloc.start()
    try:
        result = run(judge)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.verdict is None and f"exceeds the bound of {MAX_ANSWER_BYTES:,} bytes" in result.error
    assert len(llm_server.bodies) == 1 and result.extra["calls"][0]["transport_retries"] == 0  # not retried
    assert peak < 4 * MAX_ANSWER_BYTES, f"peak {peak / 2**20:.0f} MB for a {HUGE >> 20} MB answer"
