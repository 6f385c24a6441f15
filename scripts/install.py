#!/usr/bin/env python3
"""`make install`'s steps, each said with its elapsed time while it runs.

    python3 scripts/install.py --venv .venv --extras all,test,local-llm

1. the virtual environment (when absent); 2. torch 2.13.0, the CPU build, when the extras bring torch
(`all` or `sentence-transformers`; pinned first: unpinned, pip would pick a multi-GB CUDA build); 3. judge-drift, the distribution of the `judge` package (editable; an install under the old name
`judge` removed first), and its dependencies at the versions in constraints.txt; 4. a check that judge and calibration (and torch, when
installed) import. pip's own output goes to
`<venv>/install.log` (appended, one header per run); while a step runs, a line every `--every`
seconds says how long it has taken and what pip is doing (its last `Collecting`, `Downloading`,
`Building` or `Installing` line), so a slow machine is never silent. A failed step prints the log's
last lines and exits with pip's code. Only the standard library: this runs before the venv exists.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TORCH = "torch==2.13.0"
# pip's lines that say what it is doing now (the others are noise in a progress line)
DOING = ("Collecting", "Downloading", "Building", "Installing", "Preparing", "Obtaining", "Processing",
         "Attempting", "Successfully", "Requirement already satisfied")


def elapsed(seconds: float) -> str:
    """`37 s`, `2 min 05 s`."""
    seconds = int(round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


def last_doing(log: Path, start: int) -> str:
    """The last line pip wrote after byte `start` of `log` that says what it is doing, shortened."""
    try:
        with log.open("rb") as f:
            f.seek(start)
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    for line in reversed(lines):
        line = line.strip()
        if line.startswith(DOING):
            return line if len(line) <= 90 else line[:89] + "…"
    return ""


def run_step(label: str, command: Sequence[str], log: Path, *, every: float = 20.0,
             say: Callable[[str], None] = print) -> int:
    """Run `command` with its output appended to `log`; say `label`, a heartbeat every `every` s, and
    the elapsed time at the end (or the log's tail on failure). Returns the command's exit code."""
    say(f"install: {label}")
    started = time.monotonic()
    with log.open("ab") as out:
        start = out.tell()
        out.write(f"\n==== {label}\n$ {' '.join(command)}\n".encode())
        out.flush()
        process = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        done = threading.Event()

        def heartbeat() -> None:
            while not done.wait(every):
                doing = last_doing(log, start)
                say(f"install:   ... {elapsed(time.monotonic() - started)}" + (f" (pip: {doing})" if doing else ""))

        beat = threading.Thread(target=heartbeat, daemon=True)
        beat.start()
        code = process.wait()
        done.set()
        beat.join()
    took = elapsed(time.monotonic() - started)
    if code == 0:
        say(f"install:   done in {took}")
    else:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-25:]
        say(f"install:   FAILED after {took} (exit code {code}); the last lines of {log}:")
        for line in tail:
            say(f"  {line}")
    return code


TORCH_EXTRAS = {"all", "sentence-transformers"}  # the extras of pyproject.toml that bring torch


def steps(venv: Path, extras: str) -> list[tuple[str, list[str]]]:
    """The steps after the venv exists: (label, command)."""
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
    torch = bool(TORCH_EXTRAS & {extra.strip() for extra in extras.split(",")})
    check = "import judge, calibration" + (
        "; import torch; assert torch.__version__.startswith('2.13.0'), torch.__version__" if torch else "")
    python = str(venv / "bin" / "python")
    # The distribution's old name (now judge-drift): an editable `judge` left installed keeps its
    # metadata and script, and uninstalling it later would delete bin/judge.
    old_name = [python, "-c", "import importlib.metadata as m, subprocess, sys\n"
                "try: m.distribution('judge')\nexcept m.PackageNotFoundError: sys.exit(0)\n"
                "sys.exit(subprocess.call([sys.executable, '-m', 'pip', 'uninstall', '-y', 'judge']))"]
    first = ("2/5 torch 2.13.0, the CPU build (pinned first: unpinned, pip would pick a multi-GB CUDA build)",
             pip + [TORCH]) if torch else ("2/5 torch: not asked for (no extra of these brings it)", [python, "-c", ""])
    return [
        first,
        ("3/5 removing an install under the distribution's old name (judge), if any", old_name),
        (f"4/5 judge-drift (editable) and its dependencies at the versions in constraints.txt (extras: {extras})",
         pip + ["-c", "constraints.txt", "-e", f".[{extras}]"]),
        ("5/5 checking that judge, calibration" + (" and torch" if torch else "") + " import",
         [str(venv / "bin" / "python"), "-c", check]),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv")
    parser.add_argument("--extras", default="all,test")
    parser.add_argument("--every", type=float, default=20.0, help="seconds between progress lines")
    args = parser.parse_args(argv)
    venv = args.venv if args.venv.is_absolute() else ROOT / args.venv
    started = time.monotonic()
    if not (venv / "bin" / "python").exists():
        print(f"install: 1/5 creating the virtual environment {venv.name}/")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    else:
        print(f"install: 1/5 the virtual environment {venv.name}/ is there")
    log = venv / "install.log"
    print(f"install: pip's output goes to {log.relative_to(ROOT) if log.is_relative_to(ROOT) else log}")
    for label, command in steps(venv, args.extras):
        code = run_step(label, command, log, every=args.every)
        if code:
            return code
    print(f"install: done in {elapsed(time.monotonic() - started)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
