"""The bias battery of the offline `local` judge on the reference labels (issue 24, item 3).

Runs what `judge bias --judge local` runs (judge.grade.bias.run_battery over labels/, every
perturbation, max_flip 0.05, exact intervals) and writes the section "Bias battery of the local
judge (issue 24, benchmarks/bias_local.py)" of benchmarks/RESULTS.md: per perturbation the cases it
applied to, the flips, the flip rate with its 95% Clopper-Pearson interval and McNemar's test, the
gate, the flipped cases, the wall time and the machine's load. Nothing here is fitted: the battery
has no parameter to tune, so every case of both splits is used.

    python benchmarks/bias_local.py [--labels labels] [--json out.json] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.update({"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TOKENIZERS_PARALLELISM": "false",
                   "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

TITLE = "Bias battery of the local judge (issue 24, benchmarks/bias_local.py)"


def table(gate) -> str:
    lines = ["| perturbation | cases | flipped | flip rate | 95% interval (exact) | McNemar p (violated lost / gained) "
             "| gate |", "|---|---:|---:|---:|---|---|---|"]
    for r in gate.perturbations:
        rate, test = r.flip_rate, r.mcnemar
        lines.append(f"| {r.name} | {r.n} | {r.flipped} | {rate.value:.3f} | [{rate.lower:.3f}, {rate.upper:.3f}] | "
                     f"{test.p_value:.3f} ({test.lost} / {test.gained}) | {'pass' if r.passed else 'FAIL'} |"
                     if rate else f"| {r.name} | 0 | - | - | - | - | not measured |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=ROOT / "labels")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--no-write", action="store_true", help="print the section, leave RESULTS.md alone")
    args = parser.parse_args(argv)
    from _results import write_section

    from judge.config import load_judge_config
    from judge.grade.bias import run_battery
    from judge.judges.factory import make_judge

    start = time.perf_counter()
    run = run_battery(args.labels, make_judge(load_judge_config("local")))
    seconds = time.perf_counter() - start
    gate = run.gate
    flipped = "; ".join(f"{r.name}: {', '.join(r.flipped_cases)}" for r in gate.perturbations if r.flipped_cases)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    body = (f"`python benchmarks/bias_local.py` on {time.strftime('%Y-%m-%d')} at commit {commit or '?'} "
            f"({run.cases} labelled cases of `labels/`, both splits: the battery "
            f"fits nothing; {len(run.missing)} cases without a judge request, {len(run.base_errors)} judge errors). "
            f"Wall time {seconds:.0f} s on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} "
            f"({platform.python_version()}).\n\n{table(gate)}\n\n{gate.reason}\n\n"
            f"Flipped cases: {flipped or 'none'}.\n")
    print(f"## {TITLE}\n\n{body}")
    if args.json:
        args.json.write_text(gate.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if not args.no_write:
        write_section(TITLE, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
