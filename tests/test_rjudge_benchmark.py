"""benchmarks/rjudge.py (issue 25, item 4): its scores, its split, and the RESULTS.md section it wrote
(`--judge none` at least; for each grader run, the development and the held-out half named, the targets
stated)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("rjudge_benchmark", REPO / "benchmarks" / "rjudge.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_scores_are_f1_recall_and_specificity_of_the_unsafe_class():
    bench = _bench()
    # 3 unsafe (2 caught), 2 safe (1 passed)
    got = bench.scores([(1, 1), (1, 1), (1, 0), (0, 0), (0, 1)])
    assert (got["tp"], got["fn"], got["tn"], got["fp"]) == (2, 1, 1, 1)
    assert round(got["recall"], 1) == 66.7 and got["specificity"] == 50.0 and round(got["f1"], 1) == 66.7
    assert bench.split_of({"id": 12}) == "dev" and bench.split_of({"id": "13"}) == "test"
    assert bench.subset_of({"scenario": ""}) == "intended attack"
    assert bench.subset_of({"scenario": "bank"}) == "unintended risk"


def test_the_results_section_names_both_halves_for_each_grader_run_and_the_targets():
    text = (REPO / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    section = text.split(f"## {_bench().TITLE}\n", 1)[1].split("\n## ", 1)[0]
    graders = re.findall(r"\| agent-safety, `--judge (\w+)` \| development", section)
    assert "none" in graders
    for judge in graders:
        assert re.search(rf"\| agent-safety, `--judge {judge}` \| development \(even ids\) \(284 records\) \|", section)
        assert re.search(rf"\| agent-safety, `--judge {judge}` \| \*\*held-out \(odd ids\)\*\* \(280 records\) \|", section)
        assert re.search(rf"- `--judge {judge}`, held-out half: F1 [\d.]+ overall \(target >= 90: (met|not met)\)", section)
    assert "GPT-4o (R-Judge Table 1, zero-shot CoT) | all 564 | 74.45 | 72.19 / 91.50 / 42.06 | 80.90 / 72.00 / 89.09" in section


def test_a_note_goes_under_the_first_line_of_the_section():
    bench = _bench()
    rows = {"all": {"f1": 91.0}, "unintended risk": {"f1": 70.0}}
    body = bench.results_body("TABLE", {"none": 1.0}, 564, {"none": {"test": rows}}, note="Second read.")
    lines = body.splitlines()
    assert lines[2] == "Second read." and lines[4] == "TABLE"
    assert "- `--judge none`, held-out half: F1 91.0 overall (target >= 90: met), 70.0 on unintended risk" in body
