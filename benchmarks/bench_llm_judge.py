"""Benchmarks of the LLM judge (prints figures; `--results` also writes its RESULTS.md section).

(a) throughput: 1,000 checkpoint judgements (`--quick`: 200) against a local OpenAI-compatible
    server answering in 100 ms, max_concurrency 16: wall time against the ideal n * 0.1 / 16 s
    (target within 1.3x), side by side in one run for each client: `tools` through the direct
    client (the default), `tools` through instructor over litellm (the default before issue 26),
    `strict` direct and `strict` through litellm; rounds alternate the clients (median of
    --repeats), so the machine's load falls on all alike. TCP connections opened are counted by the
    server.
(b) the same judgements again, all from the verdict cache: time as a share of (a) (target < 2%).
(c) judge input tokens on the contract trace checkout-firefox.drift.200.jsonl (checkpoints after
    turns 3, 5, 7 and a final one at 200), each request counted as sent by litellm's token_counter:
    its messages and the schema it carries in the mode (tool definition or response_format);
    max single request (target <= 1,000) and total (target <= 1.5 x 8,323 = 12,484).
(cpu) client CPU per call, the same prepared requests (500; `--quick`: 200) sent with concurrency
    16 to a server answering in 20 ms: a plain OpenAI SDK loop (AsyncOpenAI, the same body, the
    answer validated by the same pydantic model) beside the default client (StructuredClient.ask),
    the whole judge call (LLMJudge, cache off: rendering and keys included) and instructor over
    litellm; interleaved rounds, medians (target: default client <= 1.3x the SDK loop).
(a2) 200 judgements at 500 ms with the default client: the same ideal wall time with 5x less
    client CPU, which separates the concurrency machinery from the per-call CPU.

Run: `python benchmarks/bench_llm_judge.py [a|b|c|cpu|a2 ...] [--quick] [--repeats N] [--results]`
(default: a b c cpu, 3 repeats). The server runs in its own process (tests/llm_server.py) so it
does not share the judge's interpreter.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
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
from judge.judges.client import StructuredClient, Usage  # noqa: E402
from judge.judges.llm import LLMJudge, libs  # noqa: E402
from judge.judges.schema import verdict_model  # noqa: E402
from judge.model import Event  # noqa: E402

N, DELAY, CONCURRENCY = 1000, 0.1, 16
SIZES = {"full": {"n": 1000, "cpu_calls": 500}, "quick": {"n": 200, "cpu_calls": 200}}
CPU_DELAY = 0.02
TITLE = "LLM client at the floor (issue 26, bench_llm_judge.py)"


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


def bench_tokens(out: list[str]) -> None:
    say(out, f"(c) judge input tokens on {TRACE.name} (each request as sent, counted by litellm)")
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
                say(out, f"    checkpoint after turn {request.after_turn:>3}: {len(request.events):>3} events, "
                      f"{len(windows):>2} request(s), tokens {sum(counts):>5} (max {max(counts)})")
        say(out, f"  mode {mode}: {len(sent)} requests, max {max(sent)} tokens (target <= 1,000), total {sum(sent)} "
              f"= {sum(sent) / INSPECT_TOTAL:.2f}x 8,323 (target <= 1.5x); local estimate {sum(estimated)} "
              f"({sum(estimated) - sum(sent):+d})")


# ---------------------------------------------------------------- the server, the judges


def say(out: list[str], line: str) -> None:
    print(line, flush=True)
    out.append(line)


def start_server_process(delay: float) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "llm_server.py"), str(delay)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    port = int(proc.stdout.readline().strip())
    return proc, port


def server_stats(port: int, *, reset: bool = False) -> dict:
    """Requests served and TCP connections seen since the last reset (tests/llm_server.py)."""
    url = f"http://127.0.0.1:{port}/v1/" + ("reset" if reset else "stats")
    request = urllib.request.Request(url, method="POST" if reset else "GET", data=b"" if reset else None)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def register_price() -> None:
    libs()[0].register_model({"openai/bench": {  # a priced model, as hosted ones are
        "input_cost_per_token": 1e-7, "output_cost_per_token": 4e-7, "litellm_provider": "openai",
        "mode": "chat", "max_tokens": 8192}})


def base_config(port: int) -> JudgeConfig:
    os.environ["BENCH_KEY"] = "sk-bench"
    return JudgeConfig(backend="llm", model="openai/bench", api_base=f"http://127.0.0.1:{port}/v1",
                       api_key_env="BENCH_KEY", max_concurrency=CONCURRENCY, timeout_s=30)


# ---------------------------------------------------------------- (a) throughput, (b) cache

CLIENTS = {  # label -> config overrides
    "`tools`, direct client (the default)": {},
    "`tools`, instructor over litellm (the default before)": {"options": {"transport": "litellm"}},
    "`strict`, direct client": {"mode": "strict"},
    "`strict` through litellm": {"mode": "strict", "options": {"transport": "litellm"}},
}


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


def bench_throughput(out: list[str], n: int = N, delay: float = DELAY, *, clients: dict = CLIENTS,
                     repeats: int = 3, label: str = "(a)", rerun: bool = True) -> dict:
    proc, port = start_server_process(delay)
    register_price()
    base = base_config(port)
    requests, ideal = throughput_requests(n), n * delay / CONCURRENCY
    figures: dict[str, list[tuple[float, float, int, int]]] = {name: [] for name in clients}
    try:
        for overrides in clients.values():  # warm-up: imports, connections
            asyncio.run(judge_all(LLMJudge(base.model_copy(update={**overrides, "cache": False})), requests[:4]))
        for _ in range(repeats):
            for name, overrides in clients.items():
                with tempfile.TemporaryDirectory() as cache_dir:
                    judge = LLMJudge(base.model_copy(update=overrides), cache=VerdictCache(cache_dir))
                    server_stats(port, reset=True)
                    wall, cpu, results = timed(judge, requests)
                    connections = server_stats(port)["connections"]
                    figures[name].append((wall, cpu, sum(1 for r in results if r.error), connections))
                    if rerun and name == list(clients)[0]:
                        again_wall, _, again = timed(judge, requests)
                        same = all(a.verdict == b.verdict for a, b in zip(results, again, strict=False))
                        say(out, f"(b) cached rerun ({name}): {again_wall:.3f} s = {100 * again_wall / wall:.2f}% "
                                 f"of the first run (target < 2%); cache hits {sum(r.cache_hits for r in again)}, "
                                 f"HTTP calls {sum(r.calls for r in again)}, identical verdicts: {same}")
        say(out, f"{label} {n} judgements, server delay {delay * 1000:.0f} ms, concurrency {CONCURRENCY}, "
                 f"ideal {ideal:.2f} s; median of {repeats} alternating rounds (target <= 1.3x):")
        rows = {}
        for name, runs in figures.items():
            wall = statistics.median(w for w, _, _, _ in runs)
            cpu = statistics.median(c for _, c, _, _ in runs)
            rows[name] = (wall, wall / ideal, [w / ideal for w, _, _, _ in runs], 1000 * cpu / n,
                          sum(e for _, _, e, _ in runs), statistics.median(k for _, _, _, k in runs))
            say(out, f"    {name:<54} {wall:6.2f} s wall, ratio {wall / ideal:.2f} (runs "
                     f"{', '.join(f'{w / ideal:.2f}' for w, _, _, _ in runs)}); client CPU {1000 * cpu / n:.1f} ms "
                     f"per judgement; TCP connections {rows[name][5]:.0f}; errors {rows[name][4]}")
        return {"n": n, "delay": delay, "ideal": ideal, "repeats": repeats, "rows": rows}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# ---------------------------------------------------------------- (cpu) client CPU per call


def prepared_calls(judge: LLMJudge, n: int) -> list[tuple[list[dict[str, str]], type]]:
    """n distinct (messages, response model) pairs, rendered once, shared by every client."""
    out = []
    for request in throughput_requests(n):
        window = judge.windows(request)[0]
        out.append((window.messages, verdict_model(request.keys, [e.id for e in window.events])))
    return out


async def sdk_loop(base: JudgeConfig, calls: list, judge: LLMJudge) -> None:
    """The floor: the OpenAI SDK sending the same body, the answer validated by the same model."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key="sk-bench", base_url=base.api_base, max_retries=0)
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(messages: list, model_cls: type) -> None:
        async with gate:
            body = judge.client.body(messages, model_cls)
            response = await client.chat.completions.create(model="bench", temperature=base.temperature, **body)
            model_cls.model_validate_json(response.choices[0].message.tool_calls[0].function.arguments)

    try:
        await asyncio.gather(*(one(m, c) for m, c in calls))
    finally:
        await client.close()


async def client_loop(client: StructuredClient, calls: list) -> None:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(messages: list, model_cls: type) -> None:
        async with gate:
            await client.ask(messages, model_cls, {"temperature": 0.0}, Usage())

    try:
        await asyncio.gather(*(one(m, c) for m, c in calls))
    finally:
        await client.aclose()


def bench_cpu(out: list[str], calls_n: int, repeats: int = 3) -> dict:
    proc, port = start_server_process(CPU_DELAY)
    register_price()
    base = base_config(port).model_copy(update={"cache": False})
    judge = LLMJudge(base)
    calls, requests = prepared_calls(judge, calls_n), throughput_requests(calls_n)
    instructed = base.model_copy(update={"options": {"transport": "litellm"}})
    variants = {
        "plain OpenAI SDK loop (the floor)": lambda: sdk_loop(base, calls, judge),
        "default client (`tools`, direct)": lambda: client_loop(StructuredClient(base, "sk-bench"), calls),
        "whole judge call, default client (LLMJudge, cache off)": lambda: judge_all(LLMJudge(base), requests),
        "instructor over litellm (`tools`, before)": lambda: client_loop(StructuredClient(instructed, "sk-bench"),
                                                                          calls),
    }
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    connections: dict[str, list[int]] = {name: [] for name in variants}
    try:
        for make in variants.values():  # warm-up: imports, schema caches
            asyncio.run(make())
        for _ in range(repeats):
            for name, make in variants.items():
                server_stats(port, reset=True)
                started = time.process_time()
                asyncio.run(make())
                cpu[name].append(1000 * (time.process_time() - started) / calls_n)
                connections[name].append(server_stats(port)["connections"])
        floor = statistics.median(cpu["plain OpenAI SDK loop (the floor)"])
        say(out, f"(cpu) client CPU per call, {calls_n} calls, concurrency {CONCURRENCY}, server delay "
                 f"{CPU_DELAY * 1000:.0f} ms; median of {repeats} interleaved rounds (target: default client "
                 "<= 1.3x the SDK loop):")
        rows = {}
        for name, runs in cpu.items():
            rows[name] = (statistics.median(runs), statistics.median(runs) / floor, runs,
                          statistics.median(connections[name]))
            say(out, f"    {name:<56} {rows[name][0]:5.2f} ms = {rows[name][1]:.2f}x the SDK loop (runs "
                     f"{', '.join(f'{r:.2f}' for r in runs)}); TCP connections {rows[name][3]:.0f}")
        return {"calls": calls_n, "repeats": repeats, "rows": rows}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# ---------------------------------------------------------------- RESULTS.md


def machine() -> str:
    cpu = "unknown CPU"
    try:
        info = dict(line.split(":", 1) for line in subprocess.run(
            ["lscpu"], capture_output=True, text=True, check=True).stdout.splitlines() if ":" in line)
        cpu = f"{info['Model name'].strip()} ({info.get('Hypervisor vendor', ' bare metal').strip()} guest)"
    except (OSError, subprocess.CalledProcessError, KeyError):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.system()} {platform.release()}"


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def results_text(size: str, started: str, load_before: str, load_after: str, command: str,
                 throughput: dict | None, cpu: dict | None, tokens: list[str]) -> str:
    lines = [f"`{command}` on {started} ({size} size). **Machine:** {machine()}; shared with other sessions: "
             f"load average (1 / 5 / 15 min) {load_before} at the start, {load_after} at the end. The ratios are "
             "side by side in one run (the clients alternate round by round, medians); the server is "
             "`tests/llm_server.py` in its own process on 127.0.0.1.", ""]
    if cpu:
        lines += [f"**CPU per call**, {cpu['calls']} calls, concurrency {CONCURRENCY}, server delay "
                  f"{CPU_DELAY * 1000:.0f} ms, median of {cpu['repeats']} rounds:", "",
                  "| client | CPU per call | vs the SDK loop (runs, ms) | TCP connections | target | met? |",
                  "|---|---|---|---|---|---|"]
        for name, (ms, ratio, runs, conns) in cpu["rows"].items():
            target = "<= 1.3x" if name.startswith("default client") else "-"
            met = ("yes" if ratio <= 1.3 else "no") if target != "-" else "-"
            lines.append(f"| {name} | {ms:.2f} ms | {ratio:.2f}x ({', '.join(f'{r:.2f}' for r in runs)}) | "
                         f"{conns:.0f} | {target} | {met} |")
        lines.append("")
    if throughput:
        t = throughput
        lines += [f"**{t['n']:,} judgements**, server answers in {t['delay'] * 1000:.0f} ms, max_concurrency "
                  f"{CONCURRENCY}, ideal {t['ideal']:.2f} s, median of {t['repeats']} rounds:", "",
                  "| client (`mode`) | wall (median) | ratio to ideal (runs) | client CPU per judgement | "
                  "TCP connections | target | met? |", "|---|---|---|---|---|---|---|"]
        for name, (wall, ratio, runs, ms, errors, conns) in t["rows"].items():
            target = "<= 1.3x" if "default)" in name else "-"
            met = ("yes" if ratio <= 1.3 and not errors else "no") if target != "-" else "-"
            lines.append(f"| {name} | {wall:.2f} s | {ratio:.2f} ({', '.join(f'{r:.2f}' for r in runs)}) | "
                         f"{ms:.1f} ms | {conns:.0f} | {target} | {met} |")
        wall, ratio, _, ms, _, _ = t["rows"][next(iter(t["rows"]))]
        need = ms * t["n"] / 1000
        lines += ["", f"Reading: the default client needs {need:.1f} s of CPU for the {t['n']:,} judgements, "
                  f"{100 * need / t['ideal']:.0f}% of one core over the ideal {t['ideal']:.2f} s, and the "
                  "server's process needs CPU too: the wall time is bounded by the share of the two cores the "
                  "machine's other work leaves (the load above), whichever the client.", ""]
    lines += ["Printed by the run:", "", "```text", *tokens, "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    repeats = 3
    if "--repeats" in argv:
        at = argv.index("--repeats")
        repeats = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    size = "quick" if "--quick" in argv else "full"
    write = "--results" in argv
    parts = {a for a in argv if not a.startswith("--")} or {"a", "b", "c", "cpu"}
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_before, out = load(), []
    say(out, f"machine: {os.cpu_count()} CPUs, load {load_before}; size {size}")
    throughput = cpu = None
    if "c" in parts:
        bench_tokens(out)
    if "cpu" in parts:
        cpu = bench_cpu(out, SIZES[size]["cpu_calls"], repeats)
    if parts & {"a", "b"}:
        throughput = bench_throughput(out, SIZES[size]["n"], repeats=repeats, rerun="b" in parts)
    if "a2" in parts:  # the same machinery when the client's CPU is not the bottleneck
        bench_throughput(out, 200, 0.5, clients={"`tools`, direct client (the default)": {}},
                         repeats=1, label="(a2)", rerun=False)
    load_after = load()
    say(out, f"load after: {load_after}")
    if write:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from _results import write_section

        command = "python benchmarks/bench_llm_judge.py " + " ".join(sys.argv[1:])
        write_section(TITLE, results_text(size, started, load_before, load_after, command.strip(), throughput,
                                          cpu, out))


if __name__ == "__main__":
    main(sys.argv[1:])
