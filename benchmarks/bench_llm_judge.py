"""Benchmarks of the LLM judge (prints figures; not a test).

(a) throughput: 1,000 checkpoint judgements against a local OpenAI-compatible server answering in
    100 ms, max_concurrency 16: wall time against the ideal 1000 * 0.1 / 16 s (target within 1.3x),
    side by side in one run for each client: `tools` (instructor over litellm, the default mode),
    `strict` through litellm (`response_format` json_schema) and `strict` through the OpenAI SDK;
    rounds alternate the clients (median of --repeats), so the machine's load falls on all alike.
(b) the same 1,000 judgements again, all from the verdict cache: time as a share of (a) (target < 2%).
(c) judge input tokens on the contract trace checkout-firefox.drift.200.jsonl (checkpoints after
    turns 3, 5, 7 and a final one at 200), each request counted as sent by litellm's token_counter:
    its messages and the schema it carries in the mode (tool definition or response_format);
    max single request (target <= 1,000) and total (target <= 1.5 x 8,323 = 12,484).
(a2) 200 judgements at 500 ms with the default client: the same ideal wall time with 5x less
    client CPU, which separates the concurrency machinery from the per-call CPU.

Run: `python benchmarks/bench_llm_judge.py [a|b|c|a2 ...] [--repeats N]` (default: a b c, 3 repeats).
The server runs in its own process (tests/llm_server.py) so it does not share the judge's interpreter.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
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
from judge.judges.llm import LLMJudge, libs  # noqa: E402
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

INSPECT_TOTAL = 8323  # the cheapest peer's judge input on the same trace


def as_sent(body: dict) -> int:
    """A request body's input tokens as litellm counts them (a response_format schema as a tool)."""
    tools = list(body.get("tools") or [])
    fmt = (body.get("response_format") or {}).get("json_schema")
    if fmt:
        tools.append({"type": "function", "function": {"name": fmt["name"], "parameters": fmt["schema"]}})
    return libs()[0].token_counter(model="gpt-4o", messages=body["messages"], tools=tools or None,
                                   tool_choice=body.get("tool_choice"))


def bench_tokens() -> None:
    print("(c) judge input tokens on", TRACE.name, "(each request as sent, counted by litellm)")
    for mode in ("tools", "strict"):
        judge = LLMJudge(JudgeConfig(backend="llm", model="openai/bench", mode=mode, cache=False))
        sent, estimated = [], []
        for request in contract_requests():
            windows = judge.windows(request)
            counts = [as_sent(judge.client.body(w.messages, verdict_model(request.keys, [e.id for e in w.events])))
                      for w in windows]
            sent += counts
            estimated += [w.tokens for w in windows]
            if mode == "tools":
                print(f"    checkpoint after turn {request.after_turn:>3}: {len(request.events):>3} events, "
                      f"{len(windows):>2} request(s), tokens {sum(counts):>5} (max {max(counts)})")
        print(f"  mode {mode}: {len(sent)} requests, max {max(sent)} tokens (target <= 1,000), total {sum(sent)} "
              f"= {sum(sent) / INSPECT_TOTAL:.2f}x 8,323 (target <= 1.5x); local estimate {sum(estimated)} "
              f"({sum(estimated) - sum(sent):+d})")


# ---------------------------------------------------------------- (a) throughput, (b) cache

CLIENTS = {  # label -> config overrides
    "tools (instructor over litellm)": {"mode": "tools"},
    "strict through litellm": {"mode": "strict", "options": {"transport": "litellm"}},
    "strict through the OpenAI SDK": {"mode": "strict", "options": {"transport": "openai"}},
}


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
    try:
        return await asyncio.gather(*(judge.judge_checkpoint(r) for r in requests))
    finally:
        await judge.aclose()


def timed(judge: LLMJudge, requests: list[JudgeRequest]) -> tuple[float, float, list]:
    started, cpu = time.perf_counter(), time.process_time()
    results = asyncio.run(judge_all(judge, requests))
    return time.perf_counter() - started, time.process_time() - cpu, results


def bench_throughput(n: int = N, delay: float = DELAY, *, clients: dict = CLIENTS, repeats: int = 3,
                     label: str = "(a)", rerun: bool = True) -> None:
    proc, port = start_server_process(delay)
    os.environ["BENCH_KEY"] = "sk-bench"
    libs()[0].register_model({"openai/bench": {  # a priced model, as hosted ones are
        "input_cost_per_token": 1e-7, "output_cost_per_token": 4e-7, "litellm_provider": "openai",
        "mode": "chat", "max_tokens": 8192}})
    base = JudgeConfig(backend="llm", model="openai/bench", api_base=f"http://127.0.0.1:{port}/v1",
                       api_key_env="BENCH_KEY", max_concurrency=CONCURRENCY, timeout_s=30)
    requests, ideal = throughput_requests(n), n * delay / CONCURRENCY
    figures: dict[str, list[tuple[float, float, int]]] = {name: [] for name in clients}
    try:
        for name, overrides in clients.items():  # warm-up: imports, connections
            asyncio.run(judge_all(LLMJudge(base.model_copy(update={**overrides, "cache": False})), requests[:4]))
        for _ in range(repeats):
            for name, overrides in clients.items():
                with tempfile.TemporaryDirectory() as cache_dir:
                    judge = LLMJudge(base.model_copy(update=overrides), cache=VerdictCache(cache_dir))
                    wall, cpu, results = timed(judge, requests)
                    figures[name].append((wall, cpu, sum(1 for r in results if r.error)))
                    if rerun and name == list(clients)[-1]:
                        again_wall, _, again = timed(judge, requests)
                        same = all(a.verdict == b.verdict for a, b in zip(results, again))
                        print(f"(b) cached rerun ({name}): {again_wall:.3f} s = {100 * again_wall / wall:.2f}% of "
                              f"the first run (target < 2%); cache hits {sum(r.cache_hits for r in again)}, "
                              f"HTTP calls {sum(r.calls for r in again)}, identical verdicts: {same}")
        print(f"{label} {n} judgements, server delay {delay * 1000:.0f} ms, concurrency {CONCURRENCY}, "
              f"ideal {ideal:.2f} s; median of {repeats} alternating rounds (target <= 1.3x):")
        for name, runs in figures.items():
            wall = statistics.median(w for w, _, _ in runs)
            cpu = statistics.median(c for _, c, _ in runs)
            print(f"    {name:<34} {wall:6.2f} s wall, ratio {wall / ideal:.2f} (runs "
                  f"{', '.join(f'{w / ideal:.2f}' for w, _, _ in runs)}); client CPU {1000 * cpu / n:.1f} ms "
                  f"per judgement; errors {sum(e for _, _, e in runs)}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main(argv: list[str]) -> None:
    repeats = 3
    if "--repeats" in argv:
        at = argv.index("--repeats")
        repeats = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    parts = set(argv) or {"a", "b", "c"}
    print(f"machine: {os.cpu_count()} CPUs, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if "c" in parts:
        bench_tokens()
    if parts & {"a", "b"}:
        bench_throughput(repeats=repeats, rerun="b" in parts)
    if "a2" in parts:  # the same machinery when the client's CPU is not the bottleneck
        bench_throughput(200, 0.5, clients={"tools (instructor over litellm)": {"mode": "tools"}},
                         repeats=1, label="(a2)", rerun=False)
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main(sys.argv[1:])
