"""calibration.bias: flip rates with exact and Wilson intervals, McNemar's test (exact and
continuity-corrected chi-square) against scipy and published values, the bias gate, and the bias
section of a calibration record (two gates; a record without one keeps its meaning)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom, binomtest, chi2

from calibration import CalibrationInputError, FlipObservation, LabelRecord, VerdictRecord, bias_gate, calibrate
from calibration.api import add_bias_file, calibrate_files
from calibration.bias import flip_rate, mcnemar_test, wilson
from calibration.record import with_bias_gate
from calibration.store import load_record, write_record

FP = {"backend": "test", "model": "m"}


def test_flip_rate_counts_changed_verdicts_with_the_exact_interval():
    base = ["upheld"] * 18 + ["violated"] * 2
    perturbed = ["upheld"] * 17 + ["violated"] * 3
    stat = flip_rate(base, perturbed)
    assert (stat.k, stat.n, stat.value) == (1, 20, 0.05)
    exact = binomtest(1, 20).proportion_ci(method="exact")
    assert stat.lower == pytest.approx(exact.low) and stat.upper == pytest.approx(exact.high)
    # Clopper-Pearson bounds by definition: the beta quantiles (Clopper & Pearson 1934)
    from scipy.stats import beta

    assert stat.lower == pytest.approx(beta.ppf(0.025, 1, 20), abs=1e-9)
    assert stat.upper == pytest.approx(beta.ppf(0.975, 2, 19), abs=1e-9)


def test_wilson_interval_matches_its_formula():
    k, n, z = 7, 40, 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    stat = wilson(k, n)
    assert stat.lower == pytest.approx(centre - half, abs=1e-9)
    assert stat.upper == pytest.approx(centre + half, abs=1e-9)
    assert flip_rate(["a"] * 33 + ["b"] * 7, ["a"] * 40, interval="wilson").upper == pytest.approx(stat.upper)


def test_mcnemar_exact_is_the_two_sided_binomial_test():
    base = ["violated"] * 6 + ["upheld"] * 10
    perturbed = ["upheld"] * 5 + ["violated"] + ["upheld"] * 9 + ["violated"]
    test = mcnemar_test(base, perturbed)
    assert (test.lost, test.gained, test.method) == (5, 1, "exact")
    assert test.p_value == pytest.approx(binomtest(5, 6, 0.5).pvalue)
    assert test.p_value == pytest.approx(min(1.0, 2 * binom.cdf(1, 6, 0.5)))  # 0.21875
    assert test.p_value == pytest.approx(0.21875)


def test_mcnemar_chi2_with_continuity_correction_reproduces_a_published_value():
    # Agresti (2002), Categorical Data Analysis, table 10.1: presidential approval, b = 150, c = 86.
    # (|b - c| - 1)^2 / (b + c) = 63^2 / 236 = 16.818; without correction 17.36 (as printed there).
    base = ["violated"] * (794 + 150) + ["upheld"] * (86 + 570)
    perturbed = ["violated"] * 794 + ["upheld"] * 150 + ["violated"] * 86 + ["upheld"] * 570
    test = mcnemar_test(base, perturbed)
    assert (test.lost, test.gained, test.method) == (150, 86, "chi2")
    assert test.statistic == pytest.approx(63 ** 2 / 236)
    assert (150 - 86) ** 2 / 236 == pytest.approx(17.36, abs=0.005)
    assert test.p_value == pytest.approx(chi2.sf(63 ** 2 / 236, 1))


def test_mcnemar_without_discordant_pairs_is_p_one():
    test = mcnemar_test(["upheld", "violated"], ["upheld", "violated"])
    assert (test.lost, test.gained, test.p_value) == (0, 0, 1.0)


@pytest.mark.parametrize("bad", [([], []), (["a"], ["a", "b"]), (np.zeros((2, 2)), np.zeros((2, 2)))])
def test_inputs_are_validated(bad):
    with pytest.raises(ValueError):
        flip_rate(*bad)
    with pytest.raises(ValueError):
        mcnemar_test(*bad)


def _obs(name, pairs):
    return [FlipObservation(case=f"c{i}", perturbation=name, base=b, perturbed=p) for i, (b, p) in enumerate(pairs)]


def test_the_gate_fails_on_one_perturbation_above_max_flip_and_names_it():
    steady = _obs("padding", [("upheld", "upheld")] * 40)
    biased = _obs("ledger-order", [("upheld", "violated")] * 4 + [("upheld", "upheld")] * 36)
    gate = bias_gate(steady + biased, fingerprint=FP, perturbations=["ledger-order", "padding", "distractor"])
    assert not gate.certified
    assert [r.name for r in gate.perturbations] == ["ledger-order", "padding", "distractor"]
    order, padding, distractor = gate.perturbations
    assert (order.flipped, order.n, order.passed) == (4, 40, False)
    assert order.flipped_cases == ["c0", "c1", "c2", "c3"]
    assert order.mcnemar.gained == 4 and order.mcnemar.p_value == pytest.approx(0.125)
    assert padding.passed is True and distractor.passed is None
    assert "ledger-order 0.100 (4/40" in gate.reason and "Not measured" in gate.reason and "distractor" in gate.reason


def test_the_gate_passes_at_max_flip_and_leaves_judge_errors_out():
    pairs = [("upheld", "violated")] * 2 + [("upheld", "upheld")] * 38 + [("upheld", None), (None, "upheld")]
    gate = bias_gate(_obs("padding", pairs), fingerprint=FP, max_flip=0.05)
    [result] = gate.perturbations
    assert (result.n, result.flipped, result.judge_errors, result.passed) == (40, 2, 2, True)
    assert gate.certified and gate.reason.startswith("Bias gate passed")


def test_a_gate_with_nothing_measured_does_not_certify():
    gate = bias_gate([], fingerprint=FP, perturbations=["padding"], not_applicable={"padding": 3})
    assert not gate.certified and gate.perturbations[0].not_applicable == 3


def test_bad_settings_are_errors():
    with pytest.raises(CalibrationInputError):
        bias_gate([], fingerprint=FP, max_flip=1.5)
    with pytest.raises(CalibrationInputError):
        bias_gate(_obs("x", [("a", "a")]), fingerprint=FP, perturbations=["y"])


# ---------------------------------------------------------------- the record's two gates


def _record(certified_rates: bool):
    labels, verdicts = [], []
    for i in range(40):
        truth = "violated" if i < 20 else "upheld"
        labels.append(LabelRecord(case=f"c{i}", label=truth, annotator="a"))
        said = truth if certified_rates or i % 2 else "upheld"
        verdicts.append(VerdictRecord(case=f"c{i}", verdict=said, judge=FP))
    return calibrate(labels, verdicts, name="j", floor=0.8 if certified_rates else 0.5, n_boot=50), labels, verdicts


def test_certified_requires_both_gates_when_a_bias_section_is_present():
    record, _, _ = _record(True)
    assert record.certified and record.bias is None
    assert record.certification_summary.endswith("The bias gate was not run.")
    failing = bias_gate(_obs("ledger-order", [("upheld", "violated")] * 10), fingerprint=FP,
                        labels_sha256=record.labels_sha256)
    both = with_bias_gate(record, failing)
    assert not both.certified and both.rates_certified and both.bias.certified is False
    assert "Bias gate failed" in both.certification_reason and "Certified for" in both.certification_reason
    passing = bias_gate(_obs("ledger-order", [("upheld", "upheld")] * 10), fingerprint=FP)
    again = with_bias_gate(both, passing)  # a rerun of the battery replaces the section
    assert again.certified and again.certification_reason.count("Bias gate") == 1


def test_a_failing_rates_gate_is_not_rescued_by_the_bias_gate():
    record, _, _ = _record(False)
    passing = bias_gate(_obs("padding", [("upheld", "upheld")] * 10), fingerprint=FP)
    assert not record.certified and not with_bias_gate(record, passing).certified


def test_a_gate_of_another_judge_or_label_set_is_refused():
    record, _, _ = _record(True)
    with pytest.raises(CalibrationInputError, match="fingerprint"):
        with_bias_gate(record, bias_gate(_obs("p", [("a", "a")]), fingerprint={"backend": "other"}))
    with pytest.raises(CalibrationInputError, match="label set"):
        with_bias_gate(record, bias_gate(_obs("p", [("a", "a")]), fingerprint=FP, labels_sha256="0" * 64))


def test_recalibrating_keeps_a_current_bias_section_and_the_file_round_trips(tmp_path):
    record, labels, verdicts = _record(True)
    write_record(record, tmp_path, "j")
    gate = bias_gate(_obs("padding", [("upheld", "violated")] * 3), fingerprint=FP, labels_sha256=record.labels_sha256)
    added = add_bias_file(tmp_path, "j", gate)
    assert not added.record.certified
    assert load_record(tmp_path / "j.json").bias == gate
    lab, ver = tmp_path / "l.jsonl", tmp_path / "v.jsonl"
    lab.write_text("".join(r.model_dump_json() + "\n" for r in labels))
    ver.write_text("".join(v.model_dump_json() + "\n" for v in verdicts))
    again = calibrate_files(lab, ver, tmp_path, "j", n_boot=50)
    assert again.record.bias == gate and not again.record.certified
    with pytest.raises(CalibrationInputError, match="no calibration record"):
        add_bias_file(tmp_path, "missing", gate)
