"""The run page stays bounded (issue 14): time, size and memory of `judge grade --html` on large traces.

    .venv/bin/python benchmarks/bench_page.py [--quick] [--sizes 10000 100000 1000000] [--checkpoints 20]

`--quick` measures 10k and 100k events (the full run adds 1M).

Traces and scenarios come from benchmarks/gen_trace.py (seed 7, gitignored `benchmarks/_gen/`): four
drifts late in the run, one of them safety-critical. Each size is measured in a fresh subprocess:
the grade (`grade_trace`, deterministic checks only), then the page (`judge.render.html.grade_page`,
which reads the trace again through the redacting reader and keeps only the events around the
findings). Reports the page's bytes, the events it shows and leaves out, the seconds of each step
and the process's peak RSS (VmHWM, interpreter and imports included). Prints a markdown table;
`--json FILE` also writes the raw figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _peak_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def child(trace: str, scenario: str) -> dict:
    sys.path.insert(0, str(ROOT))
    from judge.api import GradeSession
    from judge.render.html import grade_page
    from judge.review.timeline import run_timeline

    session = GradeSession.open("none")
    t0 = time.perf_counter()
    report = session.grade_files(scenario, [trace])
    graded = time.perf_counter()
    after_grade = _peak_mb()
    page = grade_page(report)
    paged = time.perf_counter()
    timeline = run_timeline(report.runs[0])
    run = report.runs[0]
    return {"events": run.events, "grade_s": graded - t0, "page_s": paged - graded,
            "page_bytes": len(page.encode()), "shown": timeline.shown, "elided": timeline.elided,
            "findings": sum(len(c.findings) for c in run.checkpoints), "outcome": run.outcome,
            "peak_after_grade_mb": after_grade, "peak_mb": _peak_mb()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10k and 100k events (the full run adds 1M): a few minutes "
                    "on a loaded 2-core machine")
    ap.add_argument("--sizes", type=int, nargs="+", help="trace sizes (default 10k 100k 1M; --quick: 10k 100k)")
    ap.add_argument("--checkpoints", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", type=Path, help="write the raw figures here too")
    ap.add_argument("--child", nargs=2, metavar=("TRACE", "SCENARIO"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    sys.path.insert(0, str(HERE))
    from _results import quick_defaults
    from gen_trace import generate
    quick_defaults(args, {"sizes": [10_000, 100_000]}, {"sizes": [10_000, 100_000, 1_000_000]})
    print(f"run: {'--quick' if args.quick else 'full'} (sizes {', '.join(f'{n:,}' for n in args.sizes)})")

    rows = []
    for n in args.sizes:
        trace, scenario = generate(n, args.checkpoints, args.seed)
        out = subprocess.run([sys.executable, __file__, "--child", str(trace), str(scenario)], check=True,
                             capture_output=True, text=True, cwd=ROOT).stdout
        rows.append({"size": n, "trace_bytes": Path(trace).stat().st_size, **json.loads(out.strip().splitlines()[-1])})
    print("| events | trace | page | events shown / left out | grade s | page s | peak RSS after grade / page (MB) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['events']:,} | {r['trace_bytes'] / 1e6:.0f} MB | {r['page_bytes'] / 1e3:.0f} kB | "
              f"{r['shown']:,} / {r['elided']:,} | {r['grade_s']:.1f} | {r['page_s']:.1f} | "
              f"{r['peak_after_grade_mb']:.0f} / {r['peak_mb']:.0f} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
