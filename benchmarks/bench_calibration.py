"""Calibration benchmark (issue 4): 100k verdicts with 1,000 bootstrap resamples.

    .venv/bin/python benchmarks/bench_calibration.py [--quick] [--n 100000] [--n-boot 1000] [--repeat 3]

`--quick`: one round of each step (the target's 100k verdicts still), instead of best of 3.

A seeded simulated judge (3 labels, 2 annotators on every 10th case, confidence tracking correctness)
is written to JSONL in a temporary folder, then timed, best of `--repeat`:

  read        read_labels + read_verdicts of the JSONL files (pydantic validation per line);
  calibrate   calibrate(): every statistic, 1,000 bootstrap resamples of accuracy and kappa,
              calibrator cross-validation and the review band;
  write       write_record(): NAME.json and the reliability diagram PNG;
  compare     compare_judges() of two such judges (paired bootstrap, 1,000 resamples);
  estimate    estimate_prevalence() with 100k unlabelled verdicts.

Target: `calibrate` under 10 s on the 2-core machine (the bootstrap is vectorised: see
calibration/bootstrap.py). Prints a markdown table; `--json FILE` also writes the raw figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.compare import compare_judges  # noqa: E402
from calibration.inputs import read_labels, read_verdicts  # noqa: E402
from calibration.prevalence import estimate_prevalence  # noqa: E402
from calibration.record import calibrate  # noqa: E402
from calibration.store import write_record  # noqa: E402

LABELS = np.array(["violated", "upheld", "not-exercised"])


def simulate(folder: Path, n: int, seed: int = 0) -> dict[str, Path]:
    rng = np.random.default_rng(seed)
    truth = rng.choice(3, size=n, p=[0.3, 0.5, 0.2])
    paths = {name: folder / f"{name}.jsonl" for name in ("labels", "a", "b", "unlabelled")}
    with paths["labels"].open("w") as out:
        for i, t in enumerate(truth):
            out.write(json.dumps({"case": f"c{i}", "label": LABELS[t], "annotator": "r1", "key": "k"}) + "\n")
            if i % 10 == 0:
                second = t if rng.random() < 0.9 else rng.integers(3)
                out.write(json.dumps({"case": f"c{i}", "label": LABELS[second], "annotator": "r2"}) + "\n")
    for name, skill, prefix, cases in (("a", 0.85, "c", truth), ("b", 0.9, "c", truth),
                                       ("unlabelled", 0.85, "u", rng.choice(3, size=n))):
        right = rng.random(n) < skill
        said = np.where(right, cases, (cases + rng.integers(1, 3, size=n)) % 3)
        confidence = np.clip(rng.normal(np.where(right, 0.85, 0.6), 0.1), 0, 1)
        judge = {"model": f"judge-{name[0]}", "prompt_sha256": "0" * 64}
        if name == "unlabelled":
            judge = {"model": "judge-a", "prompt_sha256": "0" * 64}
        with paths[name].open("w") as out:
            for i in range(n):
                out.write(json.dumps({"case": f"{prefix}{i}", "verdict": LABELS[said[i]],
                                      "confidence": round(float(confidence[i]), 4), "judge": judge}) + "\n")
    return paths


def best_of(repeat: int, fn):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="one round of each step, still 100k verdicts (the full run: "
                        "best of 3)")
    parser.add_argument("--repeat", type=int)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _results import quick_defaults
    quick_defaults(args, {"repeat": 1}, {"repeat": 3})
    print(f"run: {'--quick' if args.quick else 'full'} (best of {args.repeat})")
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = simulate(folder, args.n)
        figures["read"], (labels, a, b, unlabelled) = best_of(args.repeat, lambda: (
            read_labels(paths["labels"]), read_verdicts(paths["a"]), read_verdicts(paths["b"]),
            read_verdicts(paths["unlabelled"])))
        figures["read"] /= 4  # per file
        figures["calibrate"], record = best_of(args.repeat, lambda: calibrate(
            labels, a, name="bench", n_boot=args.n_boot))
        figures["write"], _ = best_of(args.repeat, lambda: write_record(record, folder / "out", "bench"))
        figures["compare"], _ = best_of(args.repeat, lambda: compare_judges(labels, a, b, n_boot=args.n_boot))
        figures["estimate"], _ = best_of(args.repeat, lambda: estimate_prevalence(
            labels, a, unlabelled, n_boot=args.n_boot))
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, numpy {np.__version__}")
    print(f"n = {args.n:,} verdicts (record n = {record.n:,}), n_boot = {args.n_boot:,}, "
          f"best of {args.repeat}\n")
    print("| step | seconds | note |\n|---|---:|---|")
    notes = {"read": "per JSONL file of n lines", "calibrate": "target < 10 s",
             "write": "JSON + PNG", "compare": "two judges, paired bootstrap",
             "estimate": "n labelled + n unlabelled"}
    for step, seconds in figures.items():
        print(f"| {step} | {seconds:.3f} | {notes[step]} |")
    print(f"\ncalibrate under 10 s: {'yes' if figures['calibrate'] < 10 else 'NO'}")
    if args.json:
        args.json.write_text(json.dumps({"n": args.n, "n_boot": args.n_boot, "seconds": figures}, indent=2))
    return 0 if figures["calibrate"] < 10 else 1


if __name__ == "__main__":
    sys.exit(main())
