#!/usr/bin/env python3
"""`make demo`: grade every bundled example with a judge, then say what was graded and what it showed.

    .venv/bin/python scripts/demo.py --judge local

Each folder of examples/ with a scenario.yaml is graded as a user would grade it (`judge grade
SCENARIO clean.jsonl drift.jsonl [over-*.jsonl] --judge J`), its report printed as it comes. Every
run has a designed outcome: `clean.jsonl` passes, every other run fails (each is a drift the
scenario was written to catch). The closing tally counts the scenarios and runs graded, the runs
that failed by design, any run whose outcome was not the designed one (the demo then exits 1), the
time it took, and the command to run next. Grading uses the CLI (subprocesses), so the demo shows
exactly what a user's shell shows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEXT = ".venv/bin/judge init my-agent   (a scenario and runs of your own to start from; see docs/start.md)"


@dataclass
class Tally:
    """What the demo graded and how each run came out against its designed outcome."""

    scenarios: int = 0
    runs: int = 0
    clean_passed: int = 0
    failed_by_design: int = 0
    vetoed: int = 0
    unexpected: list[str] = field(default_factory=list)

    def add(self, trace: Path, outcome: str, vetoed: bool) -> None:
        self.runs += 1
        designed = "pass" if trace.name == "clean.jsonl" else "fail"
        if outcome != designed:
            self.unexpected.append(f"{shown(trace)}: {outcome} (designed: {designed})")
        elif designed == "pass":
            self.clean_passed += 1
        else:
            self.failed_by_design += 1
            self.vetoed += vetoed

    def lines(self, judge: str, seconds: float) -> list[str]:
        out = [f"demo: graded {self.scenarios} scenarios, {self.runs} runs, with the '{judge}' judge in {seconds:.0f} s:",
               f"  {self.clean_passed} clean runs passed",
               f"  {self.failed_by_design} drifting runs failed, as designed ({self.vetoed} of them vetoed: a "
               "safety-critical key violated); each '(exit code 1)' above is such a run caught"]
        if self.unexpected:
            out.append(f"  {len(self.unexpected)} runs did NOT come out as designed:")
            out += [f"    {line}" for line in self.unexpected]
        else:
            out.append("  every run came out as designed")
        out.append(f"demo: next: {NEXT}")
        return out


def shown(path: Path) -> str:
    """`path` relative to the repository when inside it (as a user types it there)."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def example_runs(folder: Path) -> list[Path]:
    """A folder's runs in the order they are graded: clean, drift, then over-*."""
    runs = [folder / "clean.jsonl", folder / "drift.jsonl"] + sorted(folder.glob("over-*.jsonl"))
    return [r for r in runs if r.is_file()]


def grade(folder: Path, runs: list[Path], judge: str, judge_cli: str, report: Path) -> int:
    """`judge grade` on the folder's runs, its output passed through; the JSON report to `report`."""
    print(f"== {shown(folder)}/", flush=True)
    command = [judge_cli, "grade", str(folder / "scenario.yaml"), *map(str, runs), "--judge", judge,
               "--json", str(report)]
    code = subprocess.run(command, cwd=ROOT).returncode
    note = ": a drifting run was caught, as designed" if code == 1 else ""
    print(f"(exit code {code}{note})\n", flush=True)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judge", default="local")
    parser.add_argument("--examples", type=Path, default=ROOT / "examples")
    args = parser.parse_args(argv)
    judge_cli = str(Path(sys.executable).parent / "judge")
    started, tally = time.monotonic(), Tally()
    folders = sorted(p.parent for p in args.examples.glob("*/scenario.yaml"))
    with tempfile.TemporaryDirectory(prefix="judge-demo-") as tmp:
        for i, folder in enumerate(folders):
            runs = example_runs(folder)
            if not runs:
                continue
            report = Path(tmp) / f"{i}.json"
            code = grade(folder, runs, args.judge, judge_cli, report)
            tally.scenarios += 1
            if code in (2, 4) or not report.is_file():
                tally.runs += len(runs)
                tally.unexpected.append(f"{shown(folder)}: judge grade exited {code}")
                continue
            by_trace = {os.path.realpath(r["trace"]): r for r in json.loads(report.read_text())["runs"]}
            for run in runs:
                graded = by_trace.get(os.path.realpath(run))
                if graded is None:
                    tally.runs += 1
                    tally.unexpected.append(f"{shown(run)}: not in the report")
                else:
                    tally.add(run, graded["outcome"], graded.get("veto") is not None)
    print("\n".join(tally.lines(args.judge, time.monotonic() - started)))
    return 1 if tally.unexpected else 0


if __name__ == "__main__":
    raise SystemExit(main())
