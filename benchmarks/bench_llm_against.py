"""The LLM judge's client CPU and wall time against the code before, side by side (issue 26), and what
one `judge grade` with an llm judge costs over `--judge none` (issue 41, `--overhead`).

    git worktree add --detach BASE main       # the code before
    .venv/bin/python benchmarks/bench_llm_against.py --against BASE [--quick] [--rounds N] [--results]
    .venv/bin/python benchmarks/bench_llm_against.py --overhead --against BASE [--against-python BASE_VENV/bin/python]
        [--quick] [--rounds N] [--results]

bench_llm_judge.py measures one checkout; this one runs two of them in alternating fresh processes
(PYTHONPATH set to the checkout measured, each importing its own benchmarks/bench_llm_judge.py for the
requests and the judge's configuration), against one local server per delay (tests/llm_server.py, its
own process), so both see the same machine:

  (a) N checkpoint judgements (the full run: 1,000; `--quick`: 200), server delay 100 ms,
      max_concurrency 16, the default client, a fresh verdict cache (as bench_llm_judge.py's row
      (a)): wall time against the ideal N * 0.1 / 16 s (target <= 1.3x) and client CPU per judgement;
  (w) the whole judge call with the cache off, 500 judgements (`--quick`: 200), delay 20 ms: client
      CPU per judgement (bench_llm_judge.py's "whole judge call" row).

Every round checks that both checkouts gave the same verdicts and wrote the same cache keys (the
verdict cache's keys after (a), hashed). Rounds interleave the checkouts (default 3; medians).
`--results` writes this script's section of benchmarks/RESULTS.md.

`--overhead` measures instead the llm judge's call overhead (benchmarks/_llm_overhead.py: the CLI in fresh
processes, an llm judge against a local stub beside `--judge none`, CPU and peak RSS; `--quick`: 3
rounds and the 17-event trace only, else 7 rounds and the 200-turn trace too) and writes its own
section with `--results`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TITLE = "LLM judge against the code before (issue 26, bench_llm_against.py)"
CONCURRENCY = 16


def child(root: str, port: int, delay: float, n: int, cache: bool) -> dict:
    """One measurement in this fresh process, with the judge package of `root`."""
    import asyncio

    sys.path.insert(0, str(Path(root) / "benchmarks"))
    import bench_llm_judge as bench  # puts `root` first on sys.path: its judge package is measured

    from judge.judges.cache import VerdictCache
    from judge.judges.llm import LLMJudge

    if not str(Path(sys.modules["judge"].__file__).resolve()).startswith(str(Path(root).resolve())):
        raise SystemExit(f"measured {sys.modules['judge'].__file__}, not the package under {root}")
    bench.register_price()
    base = bench.base_config(port)
    requests = bench.throughput_requests(n)
    asyncio.run(bench.judge_all(LLMJudge(base.model_copy(update={"cache": False})), requests[:4]))  # warm-up
    with tempfile.TemporaryDirectory() as folder:
        judge = LLMJudge(base, cache=VerdictCache(folder)) if cache else \
            LLMJudge(base.model_copy(update={"cache": False}))
        wall, cpu, results = bench.timed(judge, requests)
        keys = ""
        if cache:
            with sqlite3.connect(Path(folder) / "verdicts.sqlite3") as db:
                keys = "\n".join(k for (k,) in db.execute("SELECT namespace || ':' || key FROM entries ORDER BY 1"))
    verdicts = json.dumps([r.verdict.model_dump() if r.verdict else r.error for r in results], sort_keys=True)
    return {"wall_s": wall, "cpu_s": cpu, "errors": sum(1 for r in results if r.error),
            "verdicts": hashlib.sha256(verdicts.encode()).hexdigest(), "keys": hashlib.sha256(keys.encode()).hexdigest()}


def run_child(root: Path, port: int, delay: float, n: int, cache: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, __file__, "--child", str(root), str(port), str(delay), str(n),
                          "on" if cache else "off"], check=True, capture_output=True, text=True, cwd=root, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def server(delay: float) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "llm_server.py"), str(delay)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    return proc, int(proc.stdout.readline().strip())  # type: ignore[union-attr]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", type=Path, required=False, help="a checkout of the code before")
    ap.add_argument("--quick", action="store_true", help="200 judgements in each row instead of 1,000 and 500")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (3; with --overhead 7, --quick 3)")
    ap.add_argument("--results", action="store_true", help=f"write the section {TITLE!r} of RESULTS.md")
    ap.add_argument("--overhead", action="store_true",
                    help="the llm judge's call overhead over --judge none (_llm_overhead.py)")
    ap.add_argument("--against-python", type=Path,
                    help="with --overhead: the interpreter of a virtual environment whose compiled modules are "
                         "BASE's (default: this one, where BASE runs as pure Python wherever its compiled modules' "
                         "sources differ from this checkout's)")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.overhead:
        sys.path.insert(0, str(HERE))
        from _llm_overhead import run_overhead

        sys.exit(run_overhead(args.against, rounds=args.rounds, quick=args.quick, results=args.results,
                              against_python=args.against_python))
    args.rounds = args.rounds or 3
    if args.child:
        root, port, delay, n, cache = args.child
        print(json.dumps(child(root, int(port), float(delay), int(n), cache == "on")))
        return
    sizes = {"a": 200, "w": 200} if args.quick else {"a": 1000, "w": 500}
    rows = {"a": (0.1, True), "w": (0.02, False)}
    codes = {"now": ROOT, **({"before": args.against.resolve()} if args.against else {})}
    load0, started = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    servers = {row: server(delay) for row, (delay, _) in rows.items()}
    found: dict[tuple[str, str], list[dict]] = {}
    same = True
    try:
        for _ in range(args.rounds):
            for row, (delay, cache) in rows.items():
                got = {label: run_child(code, servers[row][1], delay, sizes[row], cache) for label, code in codes.items()}
                for label, result in got.items():
                    found.setdefault((label, row), []).append(result)
                same &= len({(r["verdicts"], r["keys"]) for r in got.values()}) == 1
                print(row, {k: f"{v['cpu_s'] * 1000 / sizes[row]:.2f} ms, {v['wall_s']:.2f} s" for k, v in got.items()},
                      flush=True)
    finally:
        for proc, _ in servers.values():
            proc.terminate()
    load1 = os.getloadavg()
    ideal = sizes["a"] * 0.1 / CONCURRENCY

    def med(label: str, row: str, get) -> float:
        return statistics.median(get(r) for r in found[(label, row)])

    per = lambda row: lambda r: 1000 * r["cpu_s"] / sizes[row]  # noqa: E731
    lines = [
        ("**Run:** `--quick` (200 judgements a row); the full run measures 1,000 and 500." if args.quick else
         "**Run:** the full run (1,000 judgements in (a), 500 in (w)); `--quick` measures 200 each."), "",
        f"`.venv/bin/python benchmarks/bench_llm_against.py{' --against BASE' if args.against else ''}"
        f"{' --quick' if args.quick else ''} --rounds {args.rounds} --results` on {started}; BASE: a detached worktree "
        f"of the code before. Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"load average {load0[0]:.1f} / {load0[1]:.1f} (1 / 5 min) at the start, {load1[0]:.1f} / {load1[1]:.1f} at the "
        "end" + ("" if load0[0] < 1 and load1[0] < 1 else ": the cores are shared with other sessions, so the wall "
                 "ratio measures the neighbours too (the server needs CPU as well); read the CPU rows") + ". Fresh "
        f"process per measurement, checkouts alternating, {args.rounds} rounds, medians.", "",
        "| row | " + " | ".join(codes) + " |", "|---|" + "---|" * len(codes),
        f"| (a) {sizes['a']} judgements, 100 ms, concurrency 16: wall / ideal {ideal:.2f} s (target <= 1.3x) | "
        + " | ".join(f"{med(c, 'a', lambda r: r['wall_s']) / ideal:.2f}x" for c in codes) + " |",
        "| (a) client CPU per judgement (verdict cache on) | "
        + " | ".join(f"{med(c, 'a', per('a')):.2f} ms" for c in codes) + " |",
        f"| (w) whole judge call, cache off, {sizes['w']} judgements, 20 ms: client CPU per judgement | "
        + " | ".join(f"{med(c, 'w', per('w')):.2f} ms" for c in codes) + " |",
        "| judge errors (all rounds) | " + " | ".join(str(sum(r["errors"] for k in rows for r in found[(c, k)]))
                                               for c in codes) + " |",
        "",
        f"Verdicts and cache keys the same in both checkouts, every round: **{'yes' if same else 'NO'}**.",
    ]
    body = "\n".join(lines)
    print("\n" + body)
    if args.results:
        sys.path.insert(0, str(HERE))
        from _results import write_section
        write_section(TITLE, body)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
