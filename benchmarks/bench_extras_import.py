"""What each extra costs to import (issue 41: "import time per extra"), beside the core.

    .venv/bin/python benchmarks/bench_extras_import.py [--quick] [--against BASE] [--rounds N] [--results]

`--quick` runs 2 rounds (5 without it; `--rounds` overrides): about a minute on an idle machine.

Each measurement is a fresh process that imports `judge.api` (the core every call pays), then the
modules that turn one extra on (EXTRAS below: judge's own module for it and the library it brings),
and reports the CPU (user + system) and the peak RSS of each step. The figure for an extra is what
it adds to the core in the same process. Rounds are interleaved (every variant in every round) and
the medians reported; with `--against BASE` (a detached worktree of the code before:
`git worktree add --detach BASE COMMIT`) the same is measured for BASE in the same rounds, BASE
being pure Python unless `--against-python` names a venv holding its compiled modules
(benchmarks/bench_grade.py's docstring says how to make one). An extra not installed is reported as
such, not measured.
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SECTION = "Import cost of each extra (bench_extras_import.py)"
ENV = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
       "LITELLM_OFFLINE_MODE": "true", "LITELLM_MODE": "PRODUCTION"}
EXTRAS: dict[str, tuple[str, ...]] = {  # extra -> what a call using it imports (judge's module first)
    "local": ("judge.judges.local", "judge.text.onnx_encoder", "onnxruntime", "tokenizers", "numpy"),
    "sentence-transformers": ("sentence_transformers",),
    "llm": ("judge.judges.llm", "judge.judges.client", "openai", "tiktoken"),
    "llm (litellm, other providers)": ("litellm", "instructor"),
    "service": ("judge.service.app",),
    "calibration": ("calibration.calibrators", "calibration.record", "sklearn", "matplotlib"),
    "ray": ("ray",),
    "redis": ("judge.judges.redis_cache", "redis"),
    "drive": ("judge.suite.drive.endpoint",),
}
CHILD = """
import importlib, json, resource, sys
def now():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_maxrss / 1024
c0, _ = now()
import judge.api
c1, m1 = now()
try:
    for name in json.loads(sys.argv[1]):
        importlib.import_module(name)
except ImportError as exc:
    print(json.dumps({"missing": str(exc)})); raise SystemExit(0)
c2, m2 = now()
print(json.dumps({"core_s": c1 - c0, "core_mb": m1, "extra_s": c2 - c1, "extra_mb": m2 - m1}))
"""


def measure(code: Path, python: str, modules: tuple[str, ...]) -> dict:
    env = dict(os.environ, **ENV, PYTHONPATH=str(code))
    env.pop("JUDGE_PURE_PYTHON", None)
    out = subprocess.run([python, "-c", CHILD, json.dumps(list(modules))], capture_output=True, text=True,
                         cwd=code, env=env, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run(roots: dict[str, tuple[Path, str]], rounds: int) -> dict[str, dict[str, list[dict]]]:
    """{variant: {extra: [one result per round]}}, every extra of every variant in each round."""
    found: dict[str, dict[str, list[dict]]] = {v: {} for v in roots}
    for _ in range(rounds):
        for extra, modules in EXTRAS.items():
            for variant, (code, python) in roots.items():
                found[variant].setdefault(extra, []).append(measure(code, python, modules))
    return found


def med(results: list[dict], field: str) -> float:
    return statistics.median(r[field] for r in results)


def table(found: dict[str, dict[str, list[dict]]]) -> list[str]:
    variants = list(found)
    head = "| extra | " + " | ".join(f"{v}: + CPU-s | {v}: + MB" for v in variants) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(variants)]
    core = " | ".join(f"{med(found[v]['local'], 'core_s'):.2f} (core) | {med(found[v]['local'], 'core_mb'):.0f} (core)"
                      for v in variants)
    lines.append(f"| `import judge.api` | {core} |")
    for extra, modules in EXTRAS.items():
        cells = []
        for v in variants:
            results = found[v][extra]
            if any("missing" in r for r in results):
                cells += ["not installed", ""]
            else:
                cells += [f"{med(results, 'extra_s'):.2f}", f"{med(results, 'extra_mb'):.0f}"]
        lines.append(f"| {extra} (`{', '.join(modules)}`) | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", type=Path, help="a checkout of the code before")
    ap.add_argument("--against-python", help="the interpreter BASE runs on (default: this one)")
    ap.add_argument("--quick", action="store_true", help="2 rounds instead of 5")
    ap.add_argument("--rounds", type=int, help="rounds (default 5; --quick: 2)")
    ap.add_argument("--results", action="store_true", help=f"write the section {SECTION!r} of RESULTS.md")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    from _results import quick_defaults, run_kind, write_section
    given = args.rounds
    quick_defaults(args, {"rounds": 2}, {"rounds": 5})
    kind = run_kind(args.quick, "2 rounds", "5 rounds")
    if given is not None:  # the rounds asked for, not the default's
        kind = f"**Run:** {given} round{'s' if given != 1 else ''} (`--rounds {given}`); the full run measures 5 rounds."
    roots = {"now": (ROOT, sys.executable)}
    if args.against:
        roots = {"before": (args.against.resolve(), args.against_python or sys.executable), **roots}
    load0, started = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    found = run(roots, args.rounds)
    load1 = os.getloadavg()
    text = "\n".join([
        kind,
        "",
        f"Regenerate with `.venv/bin/python benchmarks/bench_extras_import.py --rounds {args.rounds}"
        + (" --against BASE" if args.against else "") + " --results`.",
        "",
        f"**Machine** ({started}): {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, shared; "
        f"load {load0[0]:.1f} at the start, {load1[0]:.1f} at the end; Python {platform.python_version()}.",
        "",
        "Each cell is the median of the rounds, each a fresh process: what importing the extra's modules "
        "adds to `import judge.api` in the same process (CPU-s, and peak RSS in MB). The core's own cost "
        "is the first row.",
        "",
        *table(found),
    ])
    print(text)
    if args.results:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
