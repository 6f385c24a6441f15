"""HTTP service load test (issue 8): requests/s and latency of deterministic grading over HTTP.

    .venv/bin/python benchmarks/bench_service.py [--quick] [--clients 32] [--requests 2000] [--seconds 20]
                                                [--workers 1] [--trace PATH] [--results]

Starts `judge serve`'s app with uvicorn in a subprocess on 127.0.0.1 (a free port), then 32
concurrent clients (one httpx.AsyncClient, 32 connections) post the contract example
(../shared/contract: checkout-firefox.yaml with the drifting run, `"judge": "none"`) until
`--requests` have been answered or `--seconds` have passed, whichever comes first. Traffic goes to
loopback only. Every answer is checked (status 200, the same report bytes each time).

Prints the machine and a markdown table; `--results` also writes its section of benchmarks/RESULTS.md.
The client shares the machine's cores with the server, so the figures are a floor for the server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONTRACT = ROOT.parent / "shared" / "contract"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, workers: int) -> subprocess.Popen:
    env = dict(os.environ, HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("JUDGE_API_TOKEN", None)
    cmd = [sys.executable, "-m", "uvicorn", "judge.service:create_app", "--factory", "--host", "127.0.0.1",
           "--port", str(port), "--log-level", "warning", "--no-access-log", "--workers", str(workers)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit("the server did not start within 30 s")


async def load(url: str, body: dict, clients: int, total: int, seconds: float) -> dict:
    latencies: list[float] = []
    bodies: set[bytes] = set()
    errors: list[str] = []
    sent = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        for _ in range(20):  # warm-up: imports, first requests
            (await http.post("/v1/grade", json=body)).raise_for_status()
        started = time.perf_counter()
        deadline = started + seconds

        async def client() -> None:
            nonlocal sent
            while sent < total and time.perf_counter() < deadline:
                sent += 1
                t0 = time.perf_counter()
                response = await http.post("/v1/grade", json=body)
                latencies.append(time.perf_counter() - t0)
                if response.status_code != 200:
                    errors.append(f"{response.status_code}: {response.text[:200]}")
                else:
                    bodies.add(response.content)

        await asyncio.gather(*(client() for _ in range(clients)))
        elapsed = time.perf_counter() - started
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(round(p / 100 * (len(latencies) - 1))))] * 1000

    return {"requests": len(latencies), "errors": len(errors), "first_error": errors[0] if errors else None,
            "distinct_reports": len(bodies), "seconds": elapsed, "rps": len(latencies) / elapsed,
            "p50_ms": pct(50), "p95_ms": pct(95), "p99_ms": pct(99), "max_ms": latencies[-1] * 1000,
            "mean_ms": statistics.fmean(latencies) * 1000}


def machine() -> str:
    load = " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.system()}; load average before the run {load}")


def table(rows: list[tuple[str, dict]]) -> str:
    lines = ["| case | clients | requests | errors | seconds | req/s | p50 ms | p95 ms | p99 ms | max ms |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in rows:
        lines.append(f"| {name} | {r['clients']} | {r['requests']} | {r['errors']} | {r['seconds']:.1f} | "
                     f"{r['rps']:.0f} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['p99_ms']:.1f} | {r['max_ms']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--quick", action="store_true", help="500 requests or 5 s per run (the full run: 2000 or 20 s)")
    parser.add_argument("--requests", type=int, help="stop after this many answers (default 2000; --quick 500)")
    parser.add_argument("--seconds", type=float, help="stop after this long (default 20; --quick 5)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1], help="uvicorn worker processes (one run each)")
    parser.add_argument("--trace", type=Path, default=CONTRACT / "checkout-firefox.drift.jsonl")
    parser.add_argument("--results", action="store_true", help="write this section of benchmarks/RESULTS.md")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _results import quick_defaults
    quick_defaults(args, {"requests": 500, "seconds": 5.0}, {"requests": 2000, "seconds": 20.0})
    if not CONTRACT.is_dir():
        raise SystemExit(f"needs the contract example in {CONTRACT}")
    body = {"scenario": (CONTRACT / "checkout-firefox.yaml").read_text(encoding="utf-8"),
            "traces": [args.trace.read_text(encoding="utf-8")], "judge": "none"}
    events = sum(1 for line in args.trace.read_text().splitlines() if line.strip()) - 1
    rows = []
    where = machine()
    for workers in args.workers:
        port = _free_port()
        server = start_server(port, workers)
        try:
            result = asyncio.run(load(f"http://127.0.0.1:{port}", body, args.clients, args.requests, args.seconds))
        finally:
            server.terminate()
            server.wait(timeout=30)
        result["clients"] = args.clients
        if result["errors"] or result["distinct_reports"] != 1:
            raise SystemExit(f"bad answers: {result}")
        name = f"{args.trace.name} ({events} events), {workers} worker{'s' if workers > 1 else ''}"
        rows.append((name, result))
    text = table(rows)
    print(where)
    print(text)
    if args.results:
        from _results import write_section

        write_section(SECTION,
                      f"`.venv/bin/python benchmarks/bench_service.py --workers {' '.join(map(str, args.workers))} "
                      f"{'--quick ' if args.quick else ''}--results` ({'the `--quick` run' if args.quick else 'the full run'}). {where}. `POST /v1/grade` of the contract example with `\"judge\": \"none\"`, "
                      f"{args.clients} concurrent clients (httpx.AsyncClient) on the same machine, bounded by "
                      f"{args.requests} requests or {args.seconds:.0f} s; every answer 200 and the same report.\n\n"
                      f"{text}\n\n{NOTE}")

SECTION = "HTTP service: deterministic grading over loopback (bench_service.py)"
NOTE = ("The load generator runs on the same cores as the server, so these are floors; the tail latencies "
        "are mostly CPU queueing of the concurrent requests. Per request the grading itself costs a few ms "
        "(17 events; the scenario's YAML is parsed once and cached by its text); the rest is HTTP, JSON, the "
        "middleware (trusted hosts, token, body limit, security and exit-code headers) and the worker-thread "
        "hop. `--workers 2` runs two uvicorn processes (`uvicorn judge.service:create_app --factory --workers 2`). "
        "History: issue 8 (2026-11-29, load ~6): 88 req/s with 1 worker, 121 with 2.")


if __name__ == "__main__":
    main()
