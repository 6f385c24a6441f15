"""The direct LLM client (issue 26): the default `tools` mode to an OpenAI-compatible endpoint goes
over one pooled connection per judge, with the environment and the price looked up once per judge,
sends what instructor over litellm would send, and leaves instructor unimported; a grade without an
LLM judge imports no LLM client library at all."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import MutableMapping
from pathlib import Path

import pytest
from llm_server import Reply, llm_server  # noqa: F401  (fixture)
from test_llm_judge import GOAL_UPHELD, MODEL, make_request, violated

from judge.config import JudgeConfig
from judge.draft.answer import answer_model
from judge.judges import answers, instructed
from judge.judges.cache import VerdictCache
from judge.judges.llm import LLMJudge, libs
from judge.judges.schema import summary_audit_model, verdict_model

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "checkout-firefox"
LLM_LIBS = ("litellm", "instructor", "openai")


@pytest.fixture(autouse=True)
def _test_model(monkeypatch):
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-not-a-secret")
    libs()[0].register_model({MODEL: {"input_cost_per_token": 1e-6, "output_cost_per_token": 3e-6,
                                      "litellm_provider": "openai", "mode": "chat", "max_tokens": 4096}})


def judge_for(llm_server, tmp_path=None, **overrides) -> LLMJudge:  # noqa: F811
    settings = dict(backend="llm", model=MODEL, api_base=llm_server.api_base, api_key_env="JUDGE_TEST_KEY",
                    timeout_s=5, backoff_s=0.01, max_retries=2, transport_retries=3, cache=tmp_path is not None)
    settings.update(overrides)
    return LLMJudge(JudgeConfig(**settings), cache=VerdictCache(tmp_path) if tmp_path is not None else None)


def requests(n: int):
    base = make_request()
    return [type(base)(**{**base.__dict__, "run_id": f"r-{i}", "after_turn": base.after_turn + i}) for i in range(n)]


@pytest.mark.parametrize("model_cls", [
    verdict_model(("goal", "no_app_code"), ("e1", "e2")),
    summary_audit_model(("goal", "browser")),
    answer_model({"e1": "Fix the test. Use Firefox.", "e4": "ok: passed"}, ["run_tests"]),
])
def test_the_tool_definition_is_the_one_instructor_builds(model_cls):
    messages = [{"role": "user", "content": "-"}]
    built = instructed.instructor_body("tools", messages, model_cls)
    assert answers.schema_part("tools", model_cls) == {"tools": built["tools"], "tool_choice": built["tool_choice"]}


def test_the_direct_client_sends_what_instructor_over_litellm_sent(llm_server):  # noqa: F811
    bodies = []
    for transport in ("litellm", "openai"):
        llm_server.reset(Reply(args={"findings": [{"key": "bogus", "verdict": "upheld", "confidence": 0.5,
                                                   "rationale": "x"}]}), violated(more=[GOAL_UPHELD]))
        judge = judge_for(llm_server, seed=3, options={"transport": transport})
        result = asyncio.run(judge.judge_checkpoint(make_request()))
        assert result.error is None and result.attempts == 2 and judge.client.transport == (
            "instructor" if transport == "litellm" else "openai")
        bodies.append(list(llm_server.bodies))
    before, now = bodies
    assert now[0] == before[0]  # model, messages, tools, tool_choice, temperature, seed: the same request
    assert now[1]["messages"] == before[1]["messages"]  # and the same re-ask: the tool call, then its error
    assert [m["role"] for m in now[1]["messages"][-2:]] == ["assistant", "tool"]
    assert now[1]["messages"][-1]["content"].startswith("Validation Error found:")


def test_one_pooled_connection_and_no_lookups_per_call(llm_server, monkeypatch):  # noqa: F811
    litellm = libs()[0]
    lookups = {"get_model_info": 0, "cost_per_token": 0}
    for name in lookups:
        real = getattr(litellm, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            lookups[_name] += 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(litellm, name, counted)
    reads, judging = [], threading.get_ident()

    class CountingEnviron(MutableMapping):
        def __init__(self, real):
            self.real = real

        def __getitem__(self, key):
            if threading.get_ident() == judging:  # not the scripted server's thread
                reads.append(key)
            return self.real[key]

        def __setitem__(self, key, value):
            self.real[key] = value

        def __delitem__(self, key):
            del self.real[key]

        def __iter__(self):
            return iter(self.real)

        def __len__(self):
            return len(self.real)

    def env_reads_per_call(judge: LLMJudge) -> float:
        async def go() -> float:
            await judge.judge_checkpoint(make_request())  # the first call opens the pool
            reads.clear()
            with monkeypatch.context() as patched:
                patched.setattr(os, "environ", CountingEnviron(os.environ))
                results = [await judge.judge_checkpoint(r) for r in requests(10)]  # one after another
            assert all(r.error is None and r.calls == 1 for r in results)
            await judge.aclose()
            return len(reads) / 10
        return asyncio.run(go())

    direct = judge_for(llm_server)
    assert env_reads_per_call(direct) == 0, reads
    assert len(llm_server.peers) == 1  # 11 calls, one keep-alive connection
    assert lookups == {"get_model_info": 1, "cost_per_token": 0}  # the price, once for the judge
    llm_server.reset()
    assert env_reads_per_call(judge_for(llm_server, options={"transport": "litellm"})) > 0  # litellm reads some, per call


def test_a_cached_verdict_is_found_whichever_client_asked(llm_server, tmp_path):  # noqa: F811
    """Cache keys are the request, not the client: what instructor over litellm cached still answers."""
    llm_server.reset(violated(more=[GOAL_UPHELD]))
    request = make_request()
    first = asyncio.run(judge_for(llm_server, tmp_path, options={"transport": "litellm"}).judge_checkpoint(request))
    judge = judge_for(llm_server, tmp_path)
    again = asyncio.run(judge.judge_checkpoint(request))  # the checkpoint entry
    call = asyncio.run(judge._call(request, judge.windows(request)[0], 0))  # and the call entry
    assert len(llm_server.bodies) == 1 and again.cache_hits == 1 and again.verdict == first.verdict
    assert call.cached and sorted(call.findings, key=str) == sorted(first.verdict.findings, key=str)


def _imported_after(code: str) -> dict:
    script = (f"import atexit, json, sys\n"
              f"atexit.register(lambda: print('IMPORTED', json.dumps({{m: m in sys.modules for m in {LLM_LIBS!r}}})))\n"
              f"{code}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_") or k in ("JUDGE_CACHE_DIR",
                                                                                      "JUDGE_LOG_DIR")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, env=env,
                         timeout=600)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("IMPORTED"))
    return json.loads(line.split(" ", 1)[1])


@pytest.mark.slow
@pytest.mark.parametrize("judge", ["none", "local"])
def test_a_grade_without_an_llm_judge_imports_no_llm_client_library(judge):
    code = ("import sys\nfrom judge.cli import main\n"
            f"sys.argv = ['judge', 'grade', {str(EXAMPLE / 'scenario.yaml')!r}, {str(EXAMPLE / 'drift.jsonl')!r}, "
            f"'--judge', {judge!r}, '-q', '--no-log']\n"
            "try:\n    main()\nexcept SystemExit as exit:\n    assert exit.code == 1, exit.code")
    assert _imported_after(code) == {name: False for name in LLM_LIBS}


@pytest.mark.slow
@pytest.mark.parametrize("mode, uses_instructor", [("tools", False), ("json", True)])
def test_the_default_mode_leaves_instructor_unimported(mode, uses_instructor):
    code = ("import asyncio, os, sys\nsys.path.insert(0, 'tests')\n"
            "from llm_server import start_server\nfrom test_llm_judge import make_request\n"
            "from judge.config import JudgeConfig\nfrom judge.judges.llm import LLMJudge\n"
            "server = start_server()\nos.environ['JUDGE_TEST_KEY'] = 'sk-x'\n"
            f"judge = LLMJudge(JudgeConfig(backend='llm', model={MODEL!r}, api_base=server.api_base, "
            f"api_key_env='JUDGE_TEST_KEY', cache=False, mode={mode!r}))\n"
            "assert asyncio.run(judge.judge_checkpoint(make_request())).error is None")
    imported = _imported_after(code)
    assert imported["instructor"] is uses_instructor


@pytest.mark.slow
@pytest.mark.parametrize("model, priced", [("openai/gpt-4o-mini", True), (MODEL, False)])
def test_a_grade_with_an_openai_llm_judge_imports_no_llm_client_library(model, priced, tmp_path):
    """Issue 41: the direct path counts tokens with tiktoken and prices from judge's table of litellm's
    map (a hosted model priced, a local server's model not), so it imports none of litellm, instructor,
    openai."""
    report = tmp_path / "report.json"
    code = ("import os, sys\nfrom pathlib import Path\nsys.path.insert(0, 'tests')\n"
            "from llm_server import start_server, llm_judge_config\nfrom judge.cli import main\n"
            f"os.environ.update(JUDGE_TEST_KEY='sk-x', JUDGE_CACHE_DIR={str(tmp_path / 'cache')!r})\n"
            "server = start_server()\n"
            f"config = llm_judge_config(Path({str(tmp_path / 'judge.toml')!r}), model={model!r}, "
            "api_base=server.api_base, key_env='JUDGE_TEST_KEY', timeout_s=30)\n"
            f"sys.argv = ['judge', 'grade', {str(EXAMPLE / 'scenario.yaml')!r}, {str(EXAMPLE / 'drift.jsonl')!r}, "
            f"'--judge', 'gpt', '--config', str(config), '-q', '--no-log', '--json', {str(report)!r}]\n"
            "try:\n    main()\nexcept SystemExit as exit:\n    assert exit.code == 1, exit.code")
    assert _imported_after(code) == {name: False for name in LLM_LIBS}
    cost = json.loads(report.read_text())["runs"][0]["cost"]
    assert cost["judge_calls"] > 0 and cost["judge_errors"] == 0
    assert (cost["cost_usd"] is not None and cost["cost_usd"] > 0) if priced else cost["cost_usd"] is None
