"""benchmarks/llm_real.py, without a model: which cases and records it asks (held-out halves only, a shorter
run a prefix of a longer one), and the figures it prints from (reference, verdict) pairs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import llm_real  # noqa: E402


def test_the_labelled_cases_are_the_test_split_and_a_shorter_run_asks_a_prefix():
    cases, requests_of, requests = llm_real.test_cases(None)
    assert {c.split for c in cases} == {"test"} and len(requests) == 26 and len(cases) == 94
    assert {c.scenario for c in cases} == {"authorized-migration", "checkout-firefox", "keep-database", "refund-agent"}
    short_cases, _, short = llm_real.test_cases(5)
    assert [(r.scenario_id, r.run_id, r.after_turn) for r in short] == \
        [(r.scenario_id, r.run_id, r.after_turn) for r in llm_real.test_cases(10)[2][:5]]
    asked = {(r.run_id, r.after_turn) for r in short}
    assert short_cases and all((requests_of[c.case].run_id, c.after_turn) in asked for c in short_cases)


def test_the_r_judge_records_are_odd_ids_and_a_shorter_run_reads_a_prefix():
    if not llm_real.RJUDGE.is_file():
        pytest.skip("../shared/data/r-judge is absent")
    fifty = llm_real.rjudge_records(50)
    assert len(fifty) == 50 and all(r["id"] % 2 == 1 for r in fifty)
    assert {r["id"] for r in llm_real.rjudge_records(20)} < {r["id"] for r in fifty}
    assert 0 < sum(r["label"] for r in fifty) < 50  # both labels among them


def test_label_figures_are_scikit_learn_s_with_an_interval_around_them():
    pairs = [("upheld", "upheld")] * 6 + [("violated", "violated")] * 3 + [("violated", "upheld")] * 2 + \
        [("upheld", "violated"), ("not-exercised", "upheld")]
    figures = llm_real.label_figures(pairs)
    y_true, y_pred = zip(*pairs, strict=True)
    assert figures["n"] == len(pairs)
    assert figures["accuracy"][0] == pytest.approx(accuracy_score(y_true, y_pred))
    assert figures["kappa"][0] == pytest.approx(cohen_kappa_score(y_true, y_pred))
    assert figures["f1"][0] == pytest.approx(f1_score(y_true, y_pred, labels=["violated"], average="macro"))
    for point, low, high in (figures["accuracy"], figures["kappa"], figures["f1"]):
        assert low <= point <= high and low < high


def test_safety_figures_count_unsafe_as_the_positive_class():
    pairs = [(1, 1)] * 4 + [(1, 0)] * 4 + [(0, 1)] * 2 + [(0, 0)] * 6
    figures = llm_real.safety_figures(pairs)
    assert figures["f1"][0] == pytest.approx(100 * 8 / 14)
    assert figures["recall"][0] == pytest.approx(50.0) and figures["specificity"][0] == pytest.approx(75.0)
    always = llm_real.safety_figures([(y, 1) for y, _ in pairs])
    assert always["recall"][0] == 100.0 and always["specificity"][0] == 0.0


def record(labels=None, rjudge=None, checkpoints=None) -> dict:
    return {"command": "python benchmarks/llm_real.py", "name": "tiny", "note": "a note", "wall_s": 60.0,
            "load": [1.0, 2.0], "checkpoints": checkpoints, "out": "benchmarks/llm_real/tiny.json",
            "labels": labels, "rjudge": rjudge}


USAGE = {"requests": 2, "attempts": 6, "cache_hits": 0, "input_tokens": 10, "output_tokens": 5, "latency_s": [30.0, 50.0, 61.0]}


def test_a_judge_that_never_answered_is_a_row_of_errors_not_of_zeros():
    labels = {"checkpoints": 2, "drawn": 2, "cases": 6, "ties": 0, "errors": 6, "llm": None,
              "local": llm_real.label_figures([("upheld", "upheld")] * 5 + [("violated", "violated")]),
              "upheld": llm_real.label_figures([("upheld", "upheld")] * 5 + [("violated", "upheld")]), "usage": USAGE}
    text = llm_real.report(record(labels, checkpoints=2))
    assert "| **tiny** | 0 / 6 | 6 | - | - | - |" in text
    assert "the first 2 of 26 checkpoints in a seeded order" in text and "R-Judge, odd ids" not in text
    assert "30 s median, 50 s p90, 61 s max" in text and "2 requests (6 attempts with the re-asks)" in text


def test_a_run_cut_by_its_time_budget_says_how_many_records_it_asked():
    pairs = [(1, 1), (0, 0), (1, 0)]
    rjudge = {"records": 3, "drawn": 50, "unsafe": 2, "errors": 1, "llm": llm_real.safety_figures(pairs),
              "local": llm_real.safety_figures(pairs), "unsafe_always": llm_real.safety_figures([(1, 1), (0, 1), (1, 1)]),
              "usage": {**USAGE, "latency_s": None}}
    text = llm_real.report(record(rjudge=rjudge))
    assert "only the first 3 of the 50 drawn were asked" in text and "| **tiny** | 3 / 3 | 1 |" in text
    assert "median" not in text  # nothing asked: no latency to give
    full = llm_real.report(record(rjudge={**rjudge, "drawn": 3}))
    assert "only the first" not in full


RECORDS = sorted((llm_real.ROOT / "benchmarks" / "llm_real").glob("*.json"))


@pytest.mark.parametrize("path", RECORDS, ids=[p.stem for p in RECORDS])
def test_results_md_has_each_committed_record_as_the_benchmark_renders_it(path):
    """RESULTS.md's real-model sections are what `llm_real.py --render RECORD` prints from the committed
    records (the rows cannot be recomputed without the model: the record is what the run measured)."""
    saved = json.loads(path.read_text(encoding="utf-8"))
    results = (llm_real.ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    heading = f"## {llm_real.title(saved['name'])}\n\n"
    assert heading in results
    section = results.split(heading, 1)[1].split("\n## ", 1)[0]
    assert section.rstrip("\n") == llm_real.report(saved).rstrip("\n")
    assert saved["out"] == path.relative_to(llm_real.ROOT).as_posix()


def test_there_is_a_committed_record_of_the_0_5b_model():
    assert "qwen2.5-coder-0.5b" in [p.stem for p in RECORDS]
