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
    development = [r for r in result["runs"] if not r["held_out"]]
    assert development and all(r["outcome_match"] for r in development)
    assert all(r["divergence_match"] for r in development if r["reviewed_divergence"])
    held = result["by_set"]["held out examples"]
    assert held["runs"] >= 6 and held["outcomes"] >= 0.8 * held["runs"]  # issue 25's targets, held out
    # The first-divergence target holds on the examples held out at the split; with support-refund
    # (arrived later, held out too) it is missed, as RESULTS.md says: measured, not tuned on.
    at_split = [r for r in result["runs"] if r["held_out"] and r["example"] in bench.EXAMPLES_AT_SPLIT
                and r["reviewed_divergence"]]
    assert at_split and sum(r["divergence_match"] for r in at_split) >= 0.6 * len(at_split)


@pytest.mark.slow
def test_the_who_and_when_table_is_current(tmp_path, shared_dir):
    bench = _bench()
    result = bench.run_who_and_when(shared_dir / "data", tmp_path)
    assert bench.read_block("who-and-when", bench.RESULTS.read_text(encoding="utf-8")) == \
        bench.markdown_who_and_when(result)
    assert sum(c["logs"] for c in result.values()) == 184 and sum(c["drafted"] for c in result.values()) == 184


@pytest.mark.slow
def test_the_tau_bench_table_is_current(tmp_path, shared_dir):
    bench = _bench()
    result = bench.run_tau(shared_dir / "data", tmp_path)
    text = bench.RESULTS.read_text(encoding="utf-8")
    assert bench.read_block("tau", text) == bench.markdown_tau(result)
    assert bench.read_block("tau-policy-doc", text) == bench.markdown_policy_doc(result["policy_doc"])
    halves = result["policy_doc"]["halves"]
    assert set(halves) == {"development", "held out"} and all(h["runs"] == 100 for h in halves.values())
    assert not bench.TAU_DEV_TASKS & (set(range(bench.TAU_TASKS)) - bench.TAU_DEV_TASKS)
