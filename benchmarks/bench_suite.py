"""Suite benchmark (issues 7, 15 and 26): a suite of runs of 200 events, deterministic grading, with the progress bar.

    .venv/bin/python benchmarks/bench_suite.py [--quick] [--runs 100] [--events 200] [--rounds N]
                                              [--against DIR [--against-python PY]] [--append-results]

Generates the runs once (seeded, with gen_trace.py's agent; into benchmarks/_gen/suite-<R>x<E>/, which
is gitignored) and measures, each in a fresh subprocess, round by round interleaved (medians):

  serial  every run graded one after the other with `grade_trace` in one process (ledger loaded
          once): the sum of the single-run grading times and its CPU;
  suite   `grade_suite(manifest, jobs=1)` and `grade_suite(manifest, jobs=2)` with the rich progress
          bar, end to end (manifest, scenario, workers, aggregation): wall time, CPU of the parent (with
          2 jobs it grades runs beside one forked worker: how many, and their CPU) and of the workers
          (and where their CPU went: start, grading, the rest), peak RSS; the
          modules are imported before the timing in both children, the rule kinds' too (the serial
          child's ledger load imports them); `suite-cold` (1 worker) imports the rule kinds inside
          the timing, as this benchmark did before, for comparison;
  reads   a quarter of the runs graded by `grade_suite(jobs=1)` in the measuring process: the bytes
          the kernel says it read (/proc/self/io rchar) per byte of trace (1.0: each trace read once);
  shards  the suite in 2 shards (`grade_part`, one after the other, jobs=2), the parts written and
          merged (`merge_suite`): each step's time, and whether the merged report is the unsharded one;
  largest the largest run graded alone: the peak RSS one run needs;
  small   the same suite cut to a quarter of the runs: the parent's peak RSS must not grow with the
          number of runs (results are compact; full reports stay in the workers).
  halves  the control, each round: two processes grading every other run each (`grade_trace`, no suite
          code), at the same time and one after the other: what the machine adds to two busy processes.

Targets (issue 26): the suite's CPU within 1.2x of the serial loop's; 2 workers on 2 idle cores
<= 0.6x the wall time of 1. `--quick`: 3 rounds (the full run: 7), 100 runs either way (`--runs`
sets another size, e.g. 1000). `--against DIR` measures serial and suite with the code in DIR too
(a detached worktree of the code before: `git worktree add --detach DIR COMMIT`), interleaved with
this checkout's. `--append-results` replaces this script's section of benchmarks/RESULTS.md in place
(benchmarks/_results.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SECTION = "## Suites (bench_suite.py)"
HISTORY = ("History: issue 7 measured the suite alone (1000 x 200 events, 9.41 s wall, 0.71x speed-up on "
           "loaded cores, CPU ratio 1.18); issue 15's suite work measured 1000 x 200 events against the code "
           "before the msgspec read path (bytes read per byte of trace 2.15 -> 1.00; suite CPU 2.58 s against "
           "2.71 s; load 6). Issue 26 (this table) measured the 100-run suite it names, interleaved medians.")


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
    from judge.suite.worker import peak_rss_mb
    return peak_rss_mb()


def _rchar() -> int:
    with open("/proc/self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


# ---------------------------------------------------------------- child side


def child(mode: str, manifest: str, jobs: int, limit: int, code: str) -> dict:
    sys.path.insert(0, code)
    folder = Path(manifest).parent
    traces = sorted((folder / "runs").glob("*.jsonl"))
    if mode == "imports":  # what a suite child pays before grade_suite: the instruction counts subtract it
        from judge.suite import grade_suite  # noqa: F401
        return {}
    if mode == "serial0":  # the serial child without its loop (imports, ledger)
        from judge.api import load_ledger
        from judge.grade import grade_trace  # noqa: F401
        load_ledger(folder / "scenario.yaml")
        return {}
    if mode in ("serial", "half0", "half1"):  # half K: every other run from the K-th (the control below)
        from judge.api import load_ledger
        from judge.grade import grade_trace
        ledger = load_ledger(folder / "scenario.yaml")
        traces = traces if mode == "serial" else traces[int(mode[-1])::2]
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
    if mode == "reads":
        from judge.suite import grade_suite
        small = _cut(folder, limit)
        grade_suite(_cut(folder, 2), jobs=1)  # imports, once
        size = sum(p.stat().st_size for p in sorted((folder / f"runs-first-{limit}").glob("*.jsonl")))
        before = _rchar()
        grade_suite(small, jobs=1)
        return {"read_ratio": (_rchar() - before) / size, "trace_mb": size / 1e6}
    if mode == "shards":
        return _shards(manifest, jobs)
    from judge.suite import grade_suite
    if limit:
        manifest = str(_cut(folder, limit))
    import resource
    bar = _bar()  # its modules (the command line's) imported before the timing, as the serial loop's are
    if mode in ("suite", "suite0"):  # "suite-cold": the rule kinds' modules imported inside the timing (the accounting before)
        _rule_kinds()
    if mode == "suite0":  # the suite child without its timed part (instruction counts subtract it)
        return {}
    t0, cpu0 = time.perf_counter(), time.process_time()
    with bar as progress:
        run = grade_suite(manifest, jobs=jobs, progress=progress)
    wall, parent_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = run.report
    stats = getattr(run, "worker_stats", None) or []
    mine = [w for w in stats if getattr(w, "parent", False)]  # the parent grading as one of the jobs
    return {"worker_start_cpu_s": sum(w.start_cpu_s for w in stats), "worker_grade_cpu_s": sum(w.grade_cpu_s for w in stats),
            "parent_grade_cpu_s": sum(w.grade_cpu_s for w in mine), "parent_tasks": sum(w.tasks for w in mine),
            "forked": len(stats) - len(mine),
            "wall_s": wall, "grade_s": run.grade_s, "parent_cpu_s": parent_cpu,
            "workers_cpu_s": children.ru_utime + children.ru_stime, "workers": run.workers, "parent_peak_mb": _peak_mb(),
            "worker_peak_mb": sorted(run.worker_peak_rss_mb.values()), "runs": r.totals["runs"],
            "decision": r.release.decision, "signatures": sum(len(s.signatures) for s in r.scenarios)}


def _rule_kinds() -> None:
    """Import the rule kinds' modules (judge.checks.kinds and the text analysers they use) before the
    timing, as the serial child does when it loads its ledger: the registry loads them on the first
    ledger validation, so without this the suite's timing alone paid those imports (~0.1 CPU-s cold)."""
    try:
        from judge.checks.registry import specs
    except ImportError:  # an older checkout: no registry module
        return
    specs()


def _bar():
    """The suite command's progress bar, in the code being measured (older checkouts: `_Bar`), its
    modules imported now; use it as a context manager."""
    try:
        from judge.cli.suite import _Bar
    except ImportError:
        from judge.cli.progress import Activity
        return Activity(True)

    @contextmanager
    def old():
        bar = _Bar(enabled=True)
        try:
            yield bar
        finally:
            bar.stop()
    return old()


def _shards(manifest: str, jobs: int) -> dict:
    """Two shards one after the other, their parts written, merged; and the unsharded report."""
    from judge.render.suite import to_json
    from judge.suite import grade_part, grade_suite, merge_suite
    out = Path(manifest).parent / "parts"
    out.mkdir(exist_ok=True)
    walls = []
    for k in (1, 2):
        t0 = time.perf_counter()
        part, _ = grade_part(manifest, shard=(k, 2), jobs=jobs)
        (out / f"part-{k}.json").write_text(part.model_dump_json(by_alias=True))
        walls.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    merged = merge_suite([out / "part-1.json", out / "part-2.json"])
    merge_s = time.perf_counter() - t0
    whole = grade_suite(manifest, jobs=jobs).report
    return {"shard_s": walls, "merge_s": merge_s, "part_mb": [(out / f"part-{k}.json").stat().st_size / 1e6
                                                              for k in (1, 2)],
            "identical": to_json(merged) == to_json(whole)}


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


# The interpreter of the code in a directory: `--against-python` gives the code before its own (a prefix
# holding its compiled modules, judge.compiled.build_dir); this checkout runs here.
PYTHONS: dict[str, str] = {}


def _child_cmd(mode: str, manifest: Path, jobs: int, limit: int, code: Path) -> tuple[list[str], dict[str, str]]:
    cmd = [PYTHONS.get(str(code), sys.executable), __file__, "--child", mode, "--manifest", str(manifest), "--jobs", str(jobs),
           "--limit", str(limit), "--code", str(code)]
    return cmd, dict(os.environ, HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(code))


def run_child(mode: str, manifest: Path, jobs: int, limit: int = 0, code: Path = ROOT) -> dict:
    cmd, env = _child_cmd(mode, manifest, jobs, limit, code)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env, cwd=code)
    return json.loads(out.stdout.strip().splitlines()[-1])


def halves_together(manifest: Path) -> float:
    """The control: two processes grading every other run each, at the same time (as two workers do):
    their summed grading CPU (compare with the same two one after the other)."""
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
             for cmd, env in (_child_cmd(f"half{k}", manifest, 1, 0, ROOT) for k in (0, 1))]
    outs = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        raise SystemExit("a half child failed")
    return sum(json.loads(o.strip().splitlines()[-1])["serial_cpu_s"] for o in outs)


# ---------------------------------------------------------------- parent side


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="3 rounds instead of 7 (a few minutes on a loaded machine)")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default: 3 with --quick, else 7)")
    ap.add_argument("--against", type=Path, help="a checkout of the code to compare with (the code before)")
    ap.add_argument("--against-python", help="the interpreter to run --against with: one whose prefix holds that "
                    "code's compiled modules (as in bench_windows.py's docstring); default: this one")
    ap.add_argument("--append-results", action="store_true")
    ap.add_argument("--child")
    ap.add_argument("--manifest")
    ap.add_argument("--jobs", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--code", default=str(ROOT))
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.manifest, args.jobs, args.limit, args.code)))
        return
    sys.path.insert(0, str(ROOT))
    rounds = args.rounds or (3 if args.quick else 7)
    load = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    t0 = time.perf_counter()
    manifest = generate(args.runs, args.events)
    gen_s = time.perf_counter() - t0
    codes = {"now": ROOT, **({"before": args.against.resolve()} if args.against else {})}
    if args.against and args.against_python:
        PYTHONS[str(args.against.resolve())] = args.against_python
    m: dict[tuple[str, str], list[dict]] = {(c, k): [] for c in codes for k in ("serial", "j1", "j2", "j1cold")}
    m[("now", "apart")], m[("now", "together")] = [], []
    for _ in range(rounds):
        for label, code in codes.items():
            m[(label, "serial")].append(run_child("serial", manifest, 1, code=code))
            m[(label, "j1")].append(run_child("suite", manifest, 1, code=code))
            m[(label, "j2")].append(run_child("suite", manifest, 2, code=code))
            m[(label, "j1cold")].append(run_child("suite-cold", manifest, 1, code=code))
        m[("now", "apart")].append({"cpu": sum(run_child(f"half{k}", manifest, 1)["serial_cpu_s"] for k in (0, 1))})
        m[("now", "together")].append({"cpu": halves_together(manifest)})
    reads = {label: run_child("reads", manifest, 1, limit=max(2, args.runs // 4), code=code) for label, code in codes.items()}
    largest = run_child("largest", manifest, 1)
    small = run_child("suite", manifest, 2, limit=max(1, args.runs // 4))
    shards = run_child("shards", manifest, 2)
    end_load = os.getloadavg()

    def med(label: str, kind: str, key) -> float:
        return statistics.median(key(x) if callable(key) else x[key] for x in m[(label, kind)])

    cpu = lambda x: x["parent_cpu_s"] + x["workers_cpu_s"]  # noqa: E731
    ratios = {c: {"j1": med(c, "j1", cpu) / med(c, "serial", "serial_cpu_s"),
                  "j2": med(c, "j2", cpu) / med(c, "serial", "serial_cpu_s"),
                  "j1cold": med(c, "j1cold", cpu) / med(c, "serial", "serial_cpu_s"),
                  "wall": statistics.median(b["wall_s"] / a["wall_s"] for a, b in zip(m[(c, "j1")], m[(c, "j2")], strict=False))}
              for c in codes}
    now = ratios["now"]
    # On 2 idle cores a single-threaded process's wall is its CPU: the parent's own work (the plan, the
    # feeding, the report) comes before, between and after its runs; the forked workers share what is left.
    def wall_estimate(r: dict) -> float:
        forked = max(1, r.get("forked", 2))
        overhead = r["parent_cpu_s"] - r.get("parent_grade_cpu_s", 0.0)
        return max(r["parent_cpu_s"], overhead + r["workers_cpu_s"] / forked)
    idle_estimate = med("now", "j2", wall_estimate) / med("now", "j1", cpu)
    idle = load[0] < 1.0 and end_load[0] < 1.0
    together = statistics.median(b["cpu"] / a["cpu"] for a, b in zip(m[("now", "apart")], m[("now", "together")],
                                                                       strict=True))
    cpu_ok = max(now["j1"], now["j2"]) <= 1.2
    cols = list(codes)

    def row(name: str, fmt, get) -> str:
        return f"| {name} | " + " | ".join(fmt(get(c)) for c in cols) + " |"

    sec = lambda x: f"{x:.3f} s"  # noqa: E731
    x = lambda v: f"{v:.2f}x"  # noqa: E731
    j2 = {c: m[(c, "j2")] for c in cols}
    lines = [
        f"`.venv/bin/python benchmarks/bench_suite.py{' --quick' if args.quick else ''}"
        f"{' --against DIR' if len(cols) > 1 else ''}{' --against-python PY' if args.against_python else ''} --append-results` on {started}: "
        f"{'the `--quick` run' if args.quick else 'the full run'} ({rounds} interleaved rounds, medians; "
        f"{'the full run has 7' if args.quick else '`--quick` has 3'}). Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; load average {load[0]:.1f} / {load[1]:.1f} (1 / 5 min) at the "
        f"start, {end_load[0]:.1f} / {end_load[1]:.1f} at the end"
        + ("" if idle else ": the cores are shared with other sessions, so the wall-time ratio measures the "
           "neighbours too; the CPU rows are the ones to read") + ". "
        + ("DIR (`before`) is a detached worktree of the code before this change"
           + (", run by an interpreter whose prefix holds its own compiled modules" if args.against_python else "")
           + ". " if len(cols) > 1 else "")
        + f"Runs generated in {gen_s:.1f} s (cached afterwards).",
        "",
        f"Suite of {args.runs} runs x {args.events} events, deterministic checks only, `grade_suite` with the rich "
        "progress bar, each measurement a fresh process. Serial = `grade_trace` of every run one after the other "
        "in one process (the ledger loaded once, outside the timing). Both children import their modules before "
        "the timing, the rule kinds' modules included (the serial child's ledger load imports them; the suite "
        "child imports them with `judge.checks.registry.specs()`, before this change the suite's "
        "timing alone paid them: the row marked \"the accounting before\"); the suite's timing holds its manifest, "
        "its scenario's parse and validation, the workers and the report.",
        "",
        "| measure | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols),
        row("serial loop: CPU", sec, lambda c: med(c, "serial", "serial_cpu_s")),
        row("suite, 1 worker: CPU (in one process)", sec, lambda c: med(c, "j1", cpu)),
        row("suite, 2 workers: CPU, parent + workers", sec, lambda c: med(c, "j2", cpu)),
        row("**suite CPU / serial CPU, 1 worker** (target <= 1.2x)", lambda v: f"**{x(v)}**", lambda c: ratios[c]["j1"]),
        row("**suite CPU / serial CPU, 2 workers** (target <= 1.2x)", lambda v: f"**{x(v)}**", lambda c: ratios[c]["j2"]),
        row("suite CPU / serial CPU, 1 worker, the rule kinds imported inside the suite's timing (the accounting "
            "before; not a target row)", x, lambda c: ratios[c]["j1cold"]),
        row("suite wall, 1 worker", sec, lambda c: med(c, "j1", "wall_s")),
        row("suite wall, 2 workers", sec, lambda c: med(c, "j2", "wall_s")),
        row("**wall, 2 workers / 1** (target <= 0.6x on 2 idle cores)", lambda v: f"**{x(v)}**", lambda c: ratios[c]["wall"]),
        row("cores obtained by the 2-worker suite (CPU s per wall s)", lambda v: f"{v:.2f}",
            lambda c: statistics.median(cpu(r) / r["wall_s"] for r in j2[c])),
        row("2 workers: processes forked", lambda v: f"{v:.0f}", lambda c: med(c, "j2", lambda r: r.get("forked", 2))),
        row("2 workers: parent CPU", sec, lambda c: med(c, "j2", "parent_cpu_s")),
        row("... of which grading its own runs (inside grade_task)", sec,
            lambda c: med(c, "j2", lambda r: r.get("parent_grade_cpu_s", 0.0))),
        row("... runs it graded", lambda v: f"{v:.0f}", lambda c: med(c, "j2", lambda r: r.get("parent_tasks", 0))),
        row("2 workers: forked workers' CPU", sec, lambda c: med(c, "j2", "workers_cpu_s")),
        row("... of which grading (inside grade_task)", lambda v: sec(v) if v else "not measured",
            lambda c: med(c, "j2", lambda r: r.get("worker_grade_cpu_s", 0.0) - r.get("parent_grade_cpu_s", 0.0))),
        row("... of which start (fork to ready)", lambda v: sec(v) if v else "not measured",
            lambda c: med(c, "j2", lambda r: r.get("worker_start_cpu_s", 0.0))),
        row("bytes read per byte of trace (kernel rchar, 1 worker)", lambda v: f"{v:.2f}", lambda c: reads[c]["read_ratio"]),
        row("parent peak RSS, 2 workers", lambda v: f"{v:.0f} MB", lambda c: med(c, "j2", "parent_peak_mb")),
        "",
        f"Targets, this checkout: CPU **{'met' if cpu_ok else 'MISSED'}** ({x(now['j1'])} with 1 worker, "
        f"{x(now['j2'])} with 2); wall with 2 workers / 1: {x(now['wall'])}, "
        + ("**met**" if now["wall"] <= 0.6 else "over 0.6x") + (" on idle cores." if idle else
        f" at load {load[0]:.1f} on {os.cpu_count()} cores, not idle: the workers share the cores with other "
        f"processes, so this ratio depends on them too. On 2 idle cores a single-threaded process's wall is its CPU, so the CPU "
        f"figures above predict max(parent CPU, the parent's CPU besides its runs + forked workers' CPU / their "
        f"number) / (1-worker CPU) = {idle_estimate:.2f}x"
        + (" (target met by that estimate)." if idle_estimate <= 0.6 else " (over the target by that estimate).")),
        "",
        "Where the time goes (2 workers, this checkout): the parent plans the suite (manifest, scenario YAML), "
        "forks one worker and, as the second job, grades runs itself: whenever the worker has its next runs "
        "queued, it grades one (its first grade builds the caches that workers forked after it, with more jobs, "
        "inherit), then puts the results back in manifest order; the forked worker spends its CPU grading (the "
        "row above), the rest is its start-up, the pipes and its exit. Before (stops 32-35), the parent graded "
        "only the first run and forked a worker per job; before that, a concurrent.futures pool pickled chunks "
        "of runs up front through feeder and manager threads.",
        "",
        f"The control (no suite code involved): two processes each grading every other run with `grade_trace` took "
        f"{med('now', 'together', 'cpu'):.3f} CPU-s in all when run at the same time, {med('now', 'apart', 'cpu'):.3f} "
        f"one after the other ({together:.2f}x, medians over the rounds): what this machine adds to any two "
        f"processes busy at once (shared caches and memory bandwidth of the host). The 2-worker suite pays it "
        f"too; its CPU over the serial loop's without it: {now['j2'] / together:.2f}x.",
        "",
        "| this checkout | value |", "|---|---|",
        "| 2 shards, one after the other / merging their parts | "
        + " + ".join(f"{v:.2f}" for v in shards["shard_s"]) + f" s / {shards['merge_s']:.2f} s (parts "
        + ", ".join(f"{v:.1f}" for v in shards["part_mb"]) + " MB); merged report = unsharded: "
        + ("yes" if shards["identical"] else "**NO**") + " |",
        f"| parent peak RSS, {small['runs']} runs | {small['parent_peak_mb']:.0f} MB |",
        "| peak RSS of each grading process (2 jobs; the parent's holds the plan) | "
        + ", ".join(f"{v:.0f} MB" for v in j2['now'][-1]["worker_peak_mb"]) + " |",
        f"| one process grading the largest run alone | {largest['peak_mb']:.0f} MB (after imports "
        f"{largest['base_mb']:.0f} MB) |",
        f"| release decision / distinct signatures | {j2['now'][-1]['decision']} / {j2['now'][-1]['signatures']} |",
        "",
        HISTORY,
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.append_results:
        sys.path.insert(0, str(HERE))
        from _results import write_section
        write_section(SECTION.removeprefix("## "), text)
    sys.exit(0 if cpu_ok and shards["identical"] else 1)


if __name__ == "__main__":
    main()
