"""benchmarks/llm_real.py, without a model: which cases and records it asks (held-out halves only, a shorter
run a prefix of a longer one), and the figures it prints from (reference, verdict) pairs."""

from __future__ import annotations

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


def test_a_judge_that_never_answered_is_a_row_of_errors_not_of_zeros():
    labels = {"checkpoints": 2, "cases": 6, "ties": 0, "errors": 6, "llm": None,
              "local": llm_real.label_figures([("upheld", "upheld")] * 5 + [("violated", "violated")]),
              "upheld": llm_real.label_figures([("upheld", "upheld")] * 5 + [("violated", "upheld")]),
              "usage": {"requests": 2, "attempts": 6, "cache_hits": 0, "input_tokens": 10, "output_tokens": 5}}
    text = llm_real.report("tiny", "a note", labels, None, 60.0, 2)
    assert "| **tiny** | 0 / 6 | 6 | - | - | - |" in text
    assert "the first 2 of 26 checkpoints in a seeded order" in text and "R-Judge, odd ids" not in text
