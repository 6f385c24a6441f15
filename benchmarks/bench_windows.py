"""Memory by construction (issue 26, item 3): a grade's peak memory and CPU do not follow the
checkpoint plan, and grow linearly with the trace.

    git worktree add --detach BASE $(git merge-base main HEAD)        # the code before
    nice -n 10 .venv/bin/python benchmarks/bench_windows.py --baseline BASE --out /tmp/judge-traces [--results]

The code before, compiled as `make install` leaves it, needs an interpreter of its own (the compiled
modules live in the interpreter's prefix, judge.compiled.build_dir): a venv that shares this one's
packages, with BASE's modules built into it, given as `--baseline-python`:

    python3 -m venv --without-pip /tmp/venvB
    echo "$PWD/.venv/lib/python3.11/site-packages" > /tmp/venvB/lib/python3.11/site-packages/shared.pth
    (cd BASE && PYTHONPATH=BASE /tmp/venvB/bin/python scripts/build_compiled.py)
    ... --baseline BASE --baseline-python /tmp/venvB/bin/python

Traces are made by gen_trace.py (seeded) into `--out` (keep them out of the repository: a 10M-event
trace is 2.7 GB). Each measurement is a fresh process (PYTHONPATH set to the package measured), so
its peak RSS (VmHWM) is its own; the rounds are interleaved, so every variant sees the same load;
times are CPU seconds of the process (user + system, which the machine's other work does not
inflate the way it does wall time), each ratio taken within one round and the median reported.

  json     a plain `json.loads` of every line of the same file: the floor any JSONL grader pays;
  now      `grade_trace(ledger, path, judge=None)` of this checkout (compiled modules in use when
           `make install` built them: judge.compiled);
  pure     with `--pure`: the same, as pure Python (JUDGE_PURE_PYTHON=1);
  before   the same of `--baseline` (omitted without it).

Rows (the issue's targets): `--size` events (default 1M) graded with ONE checkpoint window over the
whole run and with 20 checkpoints: peak RSS < 100 MB whatever the plan, grade CPU <= 3.0x the json
pass; then `--linear` events (default 10M, this checkout and json only) against 100k events, 20
checkpoints: CPU per event within 1.2x, peak RSS flat. `--quick`: 200k events for the plan rows and
1M for the linear one, one round (a few minutes on a loaded 2-core machine), still beside json and
the baseline. `--results` writes the section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TITLE = "Memory by construction (issue 26, bench_windows.py)"
PURE = "pure"  # the variant of this checkout run as pure Python (JUDGE_PURE_PYTHON=1)


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(field)


def child(mode: str, trace: str, scenario: str, root: str) -> dict:
    if mode == "json":
        loads = json.loads
        t0 = time.process_time()
        with open(trace, encoding="utf-8") as fh:
            n = sum(1 for line in fh if loads(line) is not None) - 1  # the header is not an event
        extra: dict = {}
    else:
        sys.path.insert(0, root)
        from judge.api import load_ledger
        from judge.grade import grade_trace
        ledger = load_ledger(scenario)
        t0 = time.process_time()
        report = grade_trace(ledger, trace, judge=None)
        n = report.events
        fd = report.first_divergence
        extra = {"first_divergence": f"turn {fd.turn} {fd.key} {fd.event}" if fd else None,
                 "slice": len(report.slice)}
        measured = Path(sys.modules["judge"].__file__).resolve()
        if not str(measured).startswith(str(Path(root).resolve())):
            raise SystemExit(f"measured {measured}, not the package under {root}")
        loader = type(getattr(sys.modules["judge.trace.load"], "__loader__", None)).__name__
        extra["compiled"] = loader == "ExtensionFileLoader"
    return {"events": n, "cpu": time.process_time() - t0, "peak_mb": _status_mb("VmHWM"), **extra}


# The interpreter each variant runs on: `--baseline-python` gives the baseline its own (a prefix
# holding the baseline's compiled modules, judge.compiled.build_dir); every other variant runs here.
PYTHONS: dict[str, str] = {}


def run_child(mode: str, trace: Path, scenario: Path, root: Path, pure: bool = False, name: str = "") -> dict:
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("JUDGE_PURE_PYTHON", None)
    if pure:  # this checkout without its compiled modules (judge.compiled)
        env["JUDGE_PURE_PYTHON"] = "1"
    out = subprocess.run([PYTHONS.get(name, sys.executable), __file__, "--child", mode, str(trace), str(scenario),
                          str(root)], check=True, capture_output=True, text=True, cwd=ROOT, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def measure(n: int, plans: list[int], roots: dict[str, Path], repeat: int, out: Path, seed: int) -> dict:
    """{plan: {variant: [results]}}, json under every plan; each grade carries `ratio` to its round's
    json, the mean of a json pass before the round's grades and one after them (the machine's pace
    drifts within a round too); the variants' order turns round by round."""
    from gen_trace import generate
    found: dict[int, dict[str, list[dict]]] = {k: {} for k in plans}
    for r in range(repeat):
        trace, _ = generate(n, plans[0], seed, out)
        before = run_child("json", trace, trace, ROOT)
        graded: dict[int, dict[str, dict]] = {k: {} for k in plans}
        names = list(roots) if r % 2 == 0 else list(roots)[::-1]
        for k in plans:
            _, scenario = generate(n, k, seed, out)
            for name in names:
                graded[k][name] = run_child("grade", trace, scenario, roots[name], pure=name == PURE, name=name)
        after = run_child("json", trace, trace, ROOT)
        js = {**before, "cpu": (before["cpu"] + after["cpu"]) / 2, "runs": [before["cpu"], after["cpu"]]}
        for k in plans:
            found[k].setdefault("json", []).append(js)
            for name in roots:
                result = graded[k][name]
                result["ratio"] = result["cpu"] / js["cpu"]
                found[k].setdefault(name, []).append(result)
    return found


def fmt_n(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 and n % 1_000_000 == 0 else f"{n / 1000:g}k"


def med(results: list[dict], field: str) -> float:
    return median(r[field] for r in results)


def plan_table(n: int, found: dict, names: list[str]) -> list[str]:
    out = [f"| {fmt_n(n)} events | plan | json.loads CPU s | " + " | ".join(
        f"{v} CPU s | {v} / json | {v} peak MB" for v in names) + " | targets (now) |",
           "|---|---|---:|" + "---:|---:|---:|" * len(names) + ":---|"]
    for k, by in found.items():
        plan = "one window over the whole run" if k == 1 else f"{k} checkpoints"
        now = by["now"]
        ratio, peak = med(now, "ratio"), max(r["peak_mb"] for r in now)
        verdict = (f"RSS < 100 MB {'met' if peak < 100 else 'MISSED'}"
                   + (f"; CPU <= 3.0x {'met' if ratio <= 3.0 else 'MISSED'}" if k == 1 else ""))
        out.append(f"| | {plan} | {med(by['json'], 'cpu'):.2f} | " + " | ".join(
            f"{med(by[v], 'cpu'):.2f} | {med(by[v], 'ratio'):.2f}x | {max(r['peak_mb'] for r in by[v]):.0f}"
            for v in names) + f" | {verdict} |")
    return out


def compiled_line(found: dict) -> str:
    """Which variants ran the compiled modules (judge.compiled), as each child saw it."""
    by = next(iter(found.values()))
    said = {v: ("compiled" if r[0].get("compiled") else "pure Python") for v, r in by.items() if v != "json"}
    return ("Modules: " + "; ".join(f"{v} {how}" for v, how in said.items())
            + " (`now` is this checkout as `make install` leaves it: the grader's hot modules compiled by mypyc, "
            "judge.compiled; `pure` the same sources without them).")


def linear_table(small: int, big: int, found_small: dict, found_big: dict) -> list[str]:
    s, b = found_small["now"], found_big["now"]
    per_s, per_b = med(s, "cpu") / s[0]["events"], med(b, "cpu") / b[0]["events"]
    js_s, js_b = med(found_small["json"], "cpu") / s[0]["events"], med(found_big["json"], "cpu") / b[0]["events"]
    growth = per_b / per_s
    return [f"| measure | {fmt_n(small)} events | {fmt_n(big)} events | {fmt_n(big)} / {fmt_n(small)} | target |",
            "|---|---:|---:|---:|:---|",
            f"| grade CPU per event (now) | {per_s * 1e6:.2f} us | {per_b * 1e6:.2f} us | {growth:.2f}x | "
            f"<= 1.2x: {'met' if growth <= 1.2 else 'MISSED'} |",
            f"| json.loads CPU per line | {js_s * 1e6:.2f} us | {js_b * 1e6:.2f} us | {js_b / js_s:.2f}x | |",
            f"| grade peak RSS (now) | {max(r['peak_mb'] for r in s):.0f} MB | {max(r['peak_mb'] for r in b):.0f} MB | "
            f"+{max(r['peak_mb'] for r in b) - max(r['peak_mb'] for r in s):.0f} MB | flat |"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="200k events for the plan rows, 1M for the linear row, "
                    "one round (minutes on a loaded 2-core machine), still beside json.loads and the baseline")
    ap.add_argument("--size", type=int, help="events of the plan rows (default 1M; --quick: 200k)")
    ap.add_argument("--linear", type=int, help="events of the linear row, against 100k (default 10M; --quick: 1M; 0: skip)")
    ap.add_argument("--repeat", type=int, help="interleaved rounds; the median counts (default 3; --quick: 1)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=Path("/tmp/judge-traces"), help="where the traces are made")
    ap.add_argument("--baseline", type=Path, help="directory holding the code before")
    ap.add_argument("--baseline-python", help="the interpreter to run the baseline with: one whose prefix holds the "
                    "baseline's compiled modules (see the docstring); default: this one (the baseline then runs "
                    "as pure Python unless its compiled sources match this checkout's build)")
    ap.add_argument("--pure", action="store_true", help="also this checkout as pure Python (JUDGE_PURE_PYTHON=1: "
                    "without the modules `make install` compiles)")
    ap.add_argument("--results", action="store_true", help=f"write the section {TITLE!r} of RESULTS.md")
    ap.add_argument("--child", nargs=4, metavar=("MODE", "TRACE", "SCENARIO", "ROOT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    sys.path.insert(0, str(HERE))
    from _results import quick_defaults, run_kind
    quick_defaults(args, {"size": 200_000, "linear": 1_000_000, "repeat": 1},
                   {"size": 1_000_000, "linear": 10_000_000, "repeat": 3})
    roots = {"now": ROOT, **({PURE: ROOT} if args.pure else {}),
             **({"before": args.baseline.resolve()} if args.baseline else {})}
    if args.baseline_python:
        PYTHONS["before"] = args.baseline_python
    load0, started = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"load {load0[0]:.1f} / {load0[1]:.1f}; " + "; ".join(f"{k}: {v}" for k, v in roots.items()), flush=True)
    plans = measure(args.size, [1, 20], roots, args.repeat, args.out, args.seed)
    for k, by in plans.items():
        print(f"  {fmt_n(args.size)} x {k} checkpoint(s): " + "; ".join(
            f"{v} {med(r, 'cpu'):.2f} s CPU ({med(r, 'ratio'):.2f}x json), {max(x['peak_mb'] for x in r):.0f} MB"
            for v, r in by.items() if v != "json"), flush=True)
        if len({r[0]["first_divergence"] for v, r in by.items() if v != "json"}) != 1:
            raise SystemExit("the variants disagree on the first divergence")
    linear = None
    if args.linear:
        now_only = {"now": ROOT}
        linear = (measure(100_000, [20], now_only, args.repeat, args.out, args.seed)[20],
                  measure(args.linear, [20], now_only, args.repeat, args.out, args.seed)[20])
        print(f"  linear: 100k {med(linear[0]['now'], 'cpu'):.2f} s, {fmt_n(args.linear)} "
              f"{med(linear[1]['now'], 'cpu'):.2f} s CPU", flush=True)
    load1 = os.getloadavg()
    names = list(roots)
    full = (args.size, args.linear, args.repeat) == (1_000_000, 10_000_000, 3)
    text = [run_kind(args.quick, "200k events for the plan rows, 1M for the linear row, one round",
                     "1M events for the plan rows, 10M for the linear row, 3 rounds")
            if args.quick or full else
            (f"**Run:** neither the full run nor `--quick`: {fmt_n(args.size)} events for the plan rows, "
             + (f"{fmt_n(args.linear)} for the linear row" if args.linear else "no linear row")
             + f", {args.repeat} round(s)."), "",
            f"`nice -n 10 .venv/bin/python benchmarks/bench_windows.py{' --quick' if args.quick else ''} --size "
            f"{args.size} --linear {args.linear} --repeat {args.repeat}{' --pure' if args.pure else ''}"
            f"{' --baseline BASE' if args.baseline else ''}{' --baseline-python PY' if args.baseline_python else ''}"
            f" --out DIR --results` on {started}; BASE: "
            "a detached worktree of the code before"
            + (", run by PY, an interpreter whose prefix holds BASE's own compiled modules" if args.baseline_python
               else "") + ". Machine: " + machine() + f"; load average {load0[0]:.1f} / "
            f"{load0[1]:.1f} (1 / 5 min) at the start, {load1[0]:.1f} / {load1[1]:.1f} at the end. CPU seconds of "
            "each process, fresh per measurement, rounds interleaved (the variants' order turning), medians; a "
            "ratio is within one round, against the mean of a json pass before the round's grades and one after.", "",
            *plan_table(args.size, plans, names), "", compiled_line(plans)]
    if linear:
        text += ["", f"**Linear** (this checkout, 20 checkpoints, the same generator; {args.repeat} round(s)):", "",
                 *linear_table(100_000, args.linear, *linear)]
    text += ["", "The slice of a one-window run is a result (the ids from the window's start to the first "
             "divergence: 650,032 of them at 1M events). As a list of strings it was about 65 bytes an id (41 MB); "
             "since stop 36 a grade keeps it as judge.model.event_ids.EventIds (numbered ids: a prefix, a first "
             "number and a count; others ~9 bytes an id), and a report writes it a few thousand ids at a time."]
    body = "\n".join(text)
    print("\n" + body)
    if args.results:
        from _results import write_section
        write_section(TITLE, body)


def machine() -> str:
    try:
        info = dict(line.split(":", 1) for line in subprocess.run(
            ["lscpu"], capture_output=True, text=True, check=True).stdout.splitlines() if ":" in line)
        return f"{info['Model name'].strip()}, {os.cpu_count()} CPUs"
    except (OSError, subprocess.CalledProcessError, KeyError):
        return f"{os.cpu_count()} CPUs"


if __name__ == "__main__":
    main()
