"""benchmarks/RESULTS.md's "Drafting ledgers" tables are what benchmarks/draft.py measures now
(regenerate them with `.venv/bin/python benchmarks/draft.py --write`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("draft_benchmark", REPO / "benchmarks" / "draft.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_examples_table_is_current(tmp_path):
    bench = _bench()
    result = bench.run_examples(tmp_path)
    assert bench.read_block("examples", bench.RESULTS.read_text(encoding="utf-8")) == bench.markdown_examples(result)
    drift = [r for r in result["runs"] if r["trace"] == "drift"]
    assert all(r["outcome_match"] for r in result["runs"])
    assert sum(r["divergence_match"] for r in drift) >= len(drift) - 1


@pytest.mark.slow
def test_the_tau_bench_table_is_current(tmp_path, shared_dir):
    bench = _bench()
    result = bench.run_tau(shared_dir / "data", tmp_path)
    assert bench.read_block("tau", bench.RESULTS.read_text(encoding="utf-8")) == bench.markdown_tau(result)
