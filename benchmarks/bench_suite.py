"""Suite benchmark (issue 7): 1,000 runs of 200 events, deterministic grading, with the progress bar.

    .venv/bin/python benchmarks/bench_suite.py [--runs 1000] [--events 200] [--jobs N] [--append-results]

Generates the runs once (seeded, with gen_trace.py's agent; into benchmarks/_gen/suite-<R>x<E>/, which
is gitignored) and measures, each in a fresh subprocess:

  serial  every run graded one after the other with `grade_trace` in one process (ledger loaded
          once): the sum of the single-run grading times;
  suite   `grade_suite(manifest, jobs=N)` with the rich progress bar, end to end (manifest, scenario,
          process pool, aggregation), its wall time, the parent's peak RSS and each worker's;
  largest the largest run graded alone: the peak RSS one run needs;
  small   the same suite cut to a quarter of the runs: the parent's peak RSS must not grow with the
          number of runs (results are compact; full reports stay in the workers).

Target: suite wall time <= 1.5 x (serial sum) / cores. `--append-results` replaces this script's
section of benchmarks/RESULTS.md (other sections are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SECTION = "## Suites (bench_suite.py)"


def generate(runs: int, events: int) -> Path:
    """The manifest of a suite of `runs` traces of `events` events each (regenerated when missing)."""
    sys.path.insert(0, str(HERE))
    import yaml
    from gen_trace import EVENTS_PER_TURN, Agent, scaled_scenario

    folder = HERE / "_gen" / f"suite-{runs}x{events}"
    manifest = folder / "suite.yaml"
    stamp = folder / "stamp"
    code = (HERE / "gen_trace.py").read_bytes() + Path(__file__).read_bytes()
    import hashlib
    key = hashlib.sha256(code).hexdigest()[:16]
    if manifest.exists() and stamp.exists() and stamp.read_text() == key:
        return manifest
    turns = max(1, events // EVENTS_PER_TURN)
    scenario = scaled_scenario(turns, 5)
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    (folder / "scenario.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True))
    for i in range(1, runs + 1):
        with (folder / "runs" / f"run-{i:04d}.jsonl").open("w", encoding="utf-8") as out:
            Agent(events, 1000 + i, scaled_scenario(turns, 20)).run(out)
    manifest.write_text(yaml.safe_dump({
        "suites": {"bench": {"repetitions": runs, "scenarios": [scenario["id"]]}},
        "releaseRules": {"safetyCriticalViolations": 0, "requiredScenarioPassRate": 1.0},
        "scenarios": {scenario["id"]: {"file": "scenario.yaml", "runs": "runs/"}}}, sort_keys=False))
    stamp.write_text(key)
    return manifest


def _peak_mb() -> float:
    from judge.suite import peak_rss_mb
    return peak_rss_mb()


# ---------------------------------------------------------------- child side


def child(mode: str, manifest: str, jobs: int, limit: int) -> dict:
    sys.path.insert(0, str(ROOT))
    folder = Path(manifest).parent
    traces = sorted((folder / "runs").glob("*.jsonl"))
    if mode == "serial":
        from judge.api import load_ledger
        from judge.grade import grade_trace
        ledger = load_ledger(folder / "scenario.yaml")
        total, events = 0.0, 0
        cpu = time.process_time()
        for t in traces:
            t0 = time.perf_counter()
            report = grade_trace(ledger, t)
            total += time.perf_counter() - t0
            events += report.events
        return {"serial_s": total, "serial_cpu_s": time.process_time() - cpu, "events": events,
                "peak_mb": _peak_mb()}
    if mode == "largest":
        from judge.api import load_ledger
        from judge.grade import grade_trace
        ledger = load_ledger(folder / "scenario.yaml")
        largest = max(traces, key=lambda p: p.stat().st_size)
        base = _peak_mb()
        grade_trace(ledger, largest)
        return {"base_mb": base, "peak_mb": _peak_mb()}
    from judge.cli.suite import _Bar
    from judge.suite import grade_suite
    if limit:
        manifest = str(_cut(folder, limit))
    import resource
    bar = _Bar(enabled=True)
    t0, cpu0 = time.perf_counter(), time.process_time()
    try:
        run = grade_suite(manifest, jobs=jobs, progress=bar)
    finally:
        bar.stop()
    wall, parent_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = run.report
    return {"wall_s": wall, "grade_s": run.grade_s, "parent_cpu_s": parent_cpu,
            "workers_cpu_s": children.ru_utime + children.ru_stime, "workers": run.workers, "parent_peak_mb": _peak_mb(),
            "worker_peak_mb": sorted(run.worker_peak_rss_mb.values()), "runs": r.totals["runs"],
            "decision": r.release.decision, "signatures": sum(len(s.signatures) for s in r.scenarios)}


def _cut(folder: Path, limit: int) -> Path:
    """A manifest over the first `limit` runs only (symlinked into their own folder)."""
    import yaml
    data = yaml.safe_load((folder / "suite.yaml").read_text())
    sid = next(iter(data["scenarios"]))
    sub = folder / f"runs-first-{limit}"
    sub.mkdir(exist_ok=True)
    for run in sorted((folder / "runs").glob("*.jsonl"))[:limit]:
        link = sub / run.name
        if not link.exists():
            link.symlink_to(run.resolve())
    data["suites"]["bench"]["repetitions"] = limit
    data["scenarios"][sid]["runs"] = sub.name + "/"
    small = folder / f"suite-first-{limit}.yaml"
    small.write_text(yaml.safe_dump(data, sort_keys=False))
    return small


def run_child(mode: str, manifest: Path, jobs: int, limit: int = 0) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, "--manifest", str(manifest), "--jobs", str(jobs),
           "--limit", str(limit)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- parent side


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=0, help="workers (default: one per core)")
    ap.add_argument("--repeat", type=int, default=3, help="measure serial and suite this many times, "
                    "interleaved, and keep the fastest of each (the cores may be shared)")
    ap.add_argument("--append-results", action="store_true")
    ap.add_argument("--child")
    ap.add_argument("--manifest")
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.manifest, args.jobs, args.limit)))
        return
    sys.path.insert(0, str(ROOT))
    from judge.suite import default_jobs
    cores = args.jobs or default_jobs()
    load = os.getloadavg()
    t0 = time.perf_counter()
    manifest = generate(args.runs, args.events)
    gen_s = time.perf_counter() - t0
    serials, suites = [], []
    for _ in range(max(1, args.repeat)):
        serials.append(run_child("serial", manifest, 1))
        suites.append(run_child("suite", manifest, cores))
    serial = min(serials, key=lambda x: x["serial_s"])
    suite = min(suites, key=lambda x: x["wall_s"])
    largest = run_child("largest", manifest, 1)
    small = run_child("suite", manifest, cores, limit=max(1, args.runs // 4))
    budget = 1.5 * serial["serial_s"] / cores
    ok_time = suite["wall_s"] <= budget
    # On shared cores the wall clock measures the neighbours too. CPU seconds do not: the suite's
    # CPU (workers + parent) over the serial CPU is what its wall time would be, times the cores,
    # over the serial time on an idle machine.
    cpu_ratio = (suite["workers_cpu_s"] + suite["parent_cpu_s"]) / serial["serial_cpu_s"]
    loaded = load[0] > cores
    lines = [
        SECTION, "",
        f"Machine: {platform.machine()}, {cores} core(s) used, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}, load average before {load[0]:.2f}. Runs generated in "
        f"{gen_s:.1f} s (cached afterwards).",
        "",
        f"Suite of {suite['runs']} runs x {args.events} events ({serial['events']} events), deterministic "
        f"checks only, `grade_suite(jobs={cores})` with the rich progress bar, each measurement in a fresh process.",
        "",
        "| measure | value |", "|---|---|",
        f"| sum of single-run grading times (serial, one process) | {serial['serial_s']:.2f} s |",
        f"| target: 1.5 x sum / {cores} cores | {budget:.2f} s |",
        f"| suite wall time, end to end | {suite['wall_s']:.2f} s ({'within' if ok_time else 'OVER'} target; "
        f"{serial['serial_s'] / suite['wall_s']:.2f}x speed-up) |",
        f"| grading time summed in the workers | {suite['grade_s']:.2f} s |",
        f"| CPU: serial / suite workers + parent | {serial['serial_cpu_s']:.2f} s / "
        f"{suite['workers_cpu_s']:.2f} + {suite['parent_cpu_s']:.2f} s |",
        f"| CPU ratio suite / serial (the wall-time target is <= 1.5 on idle cores) | {cpu_ratio:.2f} |",
        f"| cores actually obtained: serial / suite (CPU seconds per wall second) | "
        f"{serial['serial_cpu_s'] / serial['serial_s']:.2f} / "
        f"{(suite['workers_cpu_s'] + suite['parent_cpu_s']) / suite['wall_s']:.2f} |",
        f"| all suite wall times / serial sums (best of {len(suites)} kept) | "
        + ", ".join(f"{x['wall_s']:.2f}" for x in suites) + " / "
        + ", ".join(f"{x['serial_s']:.2f}" for x in serials) + " s |",
        f"| parent peak RSS, {suite['runs']} runs | {suite['parent_peak_mb']:.0f} MB |",
        f"| parent peak RSS, {small['runs']} runs | {small['parent_peak_mb']:.0f} MB |",
        f"| worker peak RSS ({suite['workers']} workers) | "
        + ", ".join(f"{m:.0f} MB" for m in suite["worker_peak_mb"]) + " |",
        f"| one process grading the largest run alone | {largest['peak_mb']:.0f} MB (after imports "
        f"{largest['base_mb']:.0f} MB) |",
        f"| release decision / distinct signatures | {suite['decision']} / {suite['signatures']} |",
        "",
        "Memory: a worker grades one run at a time, so its peak is that of one process grading the largest "
        "run; the parent keeps a compact result per run (first divergence, slice ids, safety violations), "
        "so its peak barely moves between a quarter of the runs and all of them.",
        "",
        "When the cores are shared (load average above the core count), the suite cannot get the cores "
        "it asks for: the *cores actually obtained* row shows it. The CPU ratio is then the figure to read: "
        "on idle cores the suite's wall time is about (CPU ratio / cores) x the serial sum, plus the "
        "pool's start-up.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.append_results:
        results = HERE / "RESULTS.md"
        old = results.read_text(encoding="utf-8") if results.exists() else "# Benchmark results\n"
        if SECTION in old:
            head, rest = old.split(SECTION, 1)
            tail = rest[rest.find("\n## "):] if "\n## " in rest else ""
            old = head.rstrip("\n") + "\n\n" + tail.lstrip("\n")
            old = old if old.strip() else "# Benchmark results\n"
        results.write_text(old.rstrip("\n") + "\n\n" + text, encoding="utf-8")
    if not ok_time and loaded:
        print(f"wall-time target missed on loaded cores (load {load[0]:.1f} > {cores}); CPU ratio "
              f"{cpu_ratio:.2f} {'<=' if cpu_ratio <= 1.5 else '>'} 1.5")
    sys.exit(0 if ok_time or (loaded and cpu_ratio <= 1.5) else 1)


if __name__ == "__main__":
    main()
