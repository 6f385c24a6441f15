"""Every benchmark has a `--quick` size (issue 26): it finishes in minutes on a loaded machine, beside
its baseline, and says in its output which run it was. bench_llm_judge.py is another change's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
ELSEWHERE = {"bench_llm_judge.py"}  # its --quick belongs to the LLM client's change
SCRIPTS = sorted(p for p in BENCHMARKS.glob("bench_*.py") if p.name not in ELSEWHERE)


def test_there_are_benchmarks():
    assert len(SCRIPTS) >= 9


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_benchmark_takes_quick_and_says_which_run_it_was(script):
    text = script.read_text(encoding="utf-8")
    assert 'add_argument("--quick"' in text, f"{script.name} has no --quick"
    assert "--quick" in text.split('"""', 2)[1], f"{script.name}'s docstring does not say what --quick measures"
    assert "args.quick" in text, f"{script.name} ignores --quick"


def test_quick_defaults_fill_only_what_was_not_given():
    sys.path.insert(0, str(BENCHMARKS))
    from argparse import Namespace

    from _results import quick_defaults, run_kind

    args = Namespace(quick=True, sizes=None, repeat=5)
    quick_defaults(args, {"sizes": [1], "repeat": 1}, {"sizes": [1, 2], "repeat": 3})
    assert args.sizes == [1] and args.repeat == 5
    args = Namespace(quick=False, sizes=None)
    quick_defaults(args, {"sizes": [1]}, {"sizes": [1, 2]})
    assert args.sizes == [1, 2]
    assert run_kind(True, "small", "big").startswith("**Run:** `--quick` (small)")


def test_the_suite_benchmark_parses_quick():
    done = subprocess.run([sys.executable, str(BENCHMARKS / "bench_suite.py"), "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--quick" in done.stdout
