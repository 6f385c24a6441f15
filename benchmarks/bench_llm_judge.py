"""Benchmarks of the LLM judge (prints figures; not a test).

(a) throughput: 1,000 checkpoint judgements against a local OpenAI-compatible server answering in
    100 ms, max_concurrency 16: wall time against the ideal 1000 * 0.1 / 16 s (target within 1.3x).
(b) the same 1,000 judgements again, all from the verdict cache: time as a share of (a) (target < 2%).
(c) judge input tokens on the contract trace checkout-firefox.drift.200.jsonl: checkpoints after
    turns 3, 5, 7 and a final one at 200; max single request (target <= 1,000), fixed overhead per
    request (target <= 300), total (target <= 1.5 x 8,323 = 12,484).

(a2) 200 judgements at 500 ms: the same ideal wall time with 5x less client CPU, which separates the
    concurrency machinery from the per-call CPU of litellm + instructor (about 8 ms per call here).

Run: `python benchmarks/bench_llm_judge.py [a|b|c|a2 ...]` (default: all). The server runs in its own
process (tests/llm_server.py) so it does not share the judge's interpreter.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _k, _v in {"HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true",
               "LITELLM_MODE": "PRODUCTION", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}.items():
    os.environ.setdefault(_k, _v)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CONTRACT = ROOT.parent / "shared" / "contract"
SCENARIO = CONTRACT / "checkout-firefox.yaml"
TRACE = CONTRACT / "checkout-firefox.drift.200.jsonl"

import yaml  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

from judge.config import JudgeConfig  # noqa: E402
from judge.judges.base import JudgeRequest, LedgerRow  # noqa: E402
from judge.judges.cache import VerdictCache  # noqa: E402
from judge.judges.llm import LLMJudge, count_messages, libs  # noqa: E402
from judge.judges.render import fixed_overhead  # noqa: E402
from judge.judges.schema import verdict_model  # noqa: E402
from judge.model import Event  # noqa: E402

N, DELAY, CONCURRENCY = 1000, 0.1, 16


# ---------------------------------------------------------------- requests from the contract files


def ledger_rows(scenario: dict, turn: int) -> tuple[LedgerRow, ...]:
    """The reviewed ledger after `turn` (a minimal reducer: the lead's judge.ledger does it for real)."""
    rows = {e["key"]: dict(e, status="active", superseded=()) for e in scenario["ledger"]}
    for d in scenario.get("deltas", []):
        if d["turn"] > turn:
            continue
        row = rows.setdefault(d["key"], dict(d, status="active", superseded=(), source_turn=d["turn"]))
        if d["op"] == "set":
            row["superseded"] += ((row["value"], d["turn"]),)
            row["value"], row["source_turn"] = d["value"], d["turn"]
        elif d["op"] == "complete":
            row["status"] = "completed"
        elif d["op"] == "revoke":
            row["status"] = "revoked"
        elif d["op"] == "reopen":
            row["status"] = "active"
    return tuple(LedgerRow(key=r["key"], class_=r["class"], value=r.get("value"), status=r["status"],
                           sensitivity=r.get("sensitivity", "normal"), persistence=r.get("persistence", "task"),
                           source_turn=r["source_turn"], superseded=r["superseded"],
                           description=r.get("description")) for r in rows.values())


def contract_requests() -> list[JudgeRequest]:
    scenario = yaml.safe_load(SCENARIO.read_text())
    lines = TRACE.read_text().splitlines()
    header = json.loads(lines[0])
    adapter = TypeAdapter(Event)
    events = [adapter.validate_json(line) for line in lines[1:]]
    checkpoints = [(c["after_turn"], [*c.get("must_retain", []), *c.get("expect_completed", [])])
                   for c in scenario["checkpoints"]]
    last = max(e.turn for e in events)
    final_rows = ledger_rows(scenario, last)
    checkpoints.append((last, [r.key for r in final_rows if r.status == "active"]))
    requests, previous = [], 0
    for after, keys in checkpoints:
        requests.append(JudgeRequest(
            scenario_id=scenario["id"], run_id=header["run_id"], after_turn=after, from_turn=previous + 1,
            keys=tuple(keys), ledger=ledger_rows(scenario, after),
            events=tuple(e for e in events if previous < e.turn <= after)))
        previous = after
    return requests


# ---------------------------------------------------------------- (c) tokens


def bench_tokens() -> None:
    judge = LLMJudge(JudgeConfig(backend="llm", model="openai/bench", cache=False))
    total, biggest, overheads, n_requests, with_tools = 0, 0, [], 0, 0
    print("(c) judge input tokens on", TRACE.name)
    for request in contract_requests():
        windows = judge.windows(request)
        tokens = [count_messages(w.messages) for w in windows]
        with_tools += sum(tool_tokens(request, w) for w in windows)
        overhead = fixed_overhead(judge.prompt, request, count_messages)
        overheads.append(overhead)
        total += sum(tokens)
        biggest = max(biggest, *tokens)
        n_requests += len(windows)
        print(f"    checkpoint after turn {request.after_turn:>3}: {len(request.events):>3} events, "
              f"{len(windows):>2} request(s), tokens {sum(tokens):>5} (max {max(tokens)}), "
              f"fixed overhead {overhead}")
    print(f"  requests: {n_requests}")
    print(f"  max single request: {biggest} tokens (target <= 1,000)")
    print(f"  fixed overhead per request: max {max(overheads)} tokens (target <= 300)")
    print(f"  total: {total} tokens (target <= 12,484 = 1.5 x 8,323)")
    print(f"  total with the function schema TOOLS mode also sends (key and event-id enums): {with_tools}")


def tool_tokens(request: JudgeRequest, window) -> int:
    """Tokens of a window's messages plus the tool definition instructor sends in TOOLS mode."""
    model = verdict_model(request.keys, [e.id for e in window.events])
    tool = {"type": "function", "function": {"name": model.__name__, "description": model.__doc__,
                                             "parameters": model.model_json_schema()}}
    return libs()[0].token_counter(model="gpt-4o", messages=window.messages, tools=[tool])


# ---------------------------------------------------------------- (a) throughput, (b) cache


def start_server_process(delay: float) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "llm_server.py"), str(delay)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    port = int(proc.stdout.readline().strip())
    return proc, port


def throughput_requests(n: int = N) -> list[JudgeRequest]:
    """n distinct small checkpoint requests (the contract's turn-7 checkpoint, renumbered)."""
    base = contract_requests()[2]
    return [JudgeRequest(scenario_id=base.scenario_id, run_id=f"r-{i}", after_turn=base.after_turn + i,
                         from_turn=base.from_turn, keys=base.keys, ledger=base.ledger, events=base.events)
            for i in range(n)]


async def judge_all(judge: LLMJudge, requests: list[JudgeRequest]) -> list:
    return await asyncio.gather(*(judge.judge_checkpoint(r) for r in requests))


def bench_throughput(n: int = N, delay: float = DELAY, *, label: str = "(a)", rerun: bool = True) -> None:
    proc, port = start_server_process(delay)
    os.environ["BENCH_KEY"] = "sk-bench"
    try:
        with tempfile.TemporaryDirectory() as cache_dir:
            config = JudgeConfig(backend="llm", model="openai/bench", api_base=f"http://127.0.0.1:{port}/v1",
                                 api_key_env="BENCH_KEY", max_concurrency=CONCURRENCY, timeout_s=30)
            libs()[0].register_model({"openai/bench": {  # a priced model, as hosted ones are
                "input_cost_per_token": 1e-7, "output_cost_per_token": 4e-7, "litellm_provider": "openai",
                "mode": "chat", "max_tokens": 8192}})
            judge = LLMJudge(config, cache=VerdictCache(cache_dir))
            requests = throughput_requests(n)
            asyncio.run(judge_all(LLMJudge(config.model_copy(update={"cache": False})), requests[:4]))  # warm-up
            started, cpu = time.perf_counter(), time.process_time()
            results = asyncio.run(judge_all(judge, requests))
            first, cpu = time.perf_counter() - started, time.process_time() - cpu
            ideal = n * delay / CONCURRENCY
            errors = sum(1 for r in results if r.error)
            print(f"{label} {n} judgements, server delay {delay * 1000:.0f} ms, concurrency {CONCURRENCY}: "
                  f"{first:.2f} s wall, ideal {ideal:.2f} s, ratio {first / ideal:.2f} (target <= 1.3); "
                  f"HTTP calls {sum(r.calls for r in results)}, errors {errors}; judge-side CPU "
                  f"{cpu:.2f} s = {1000 * cpu / n:.1f} ms per judgement (litellm + instructor + ours)")
            if not rerun:
                return
            started = time.perf_counter()
            again = asyncio.run(judge_all(judge, requests))
            second = time.perf_counter() - started
            same = all(a.verdict == b.verdict for a, b in zip(results, again))
            print(f"(b) cached rerun: {second:.3f} s = {100 * second / first:.2f}% of the first run (target < 2%); "
                  f"cache hits {sum(r.cache_hits for r in again)}, HTTP calls {sum(r.calls for r in again)}, "
                  f"identical verdicts: {same}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main(argv: list[str]) -> None:
    parts = set(argv) or {"a", "b", "c", "a2"}
    if "c" in parts:
        bench_tokens()
    if parts & {"a", "b"}:
        bench_throughput()
    if "a2" in parts:  # the same machinery when the client's CPU is not the bottleneck
        bench_throughput(200, 0.5, label="(a2)", rerun=False)


if __name__ == "__main__":
    main(sys.argv[1:])
