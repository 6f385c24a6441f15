"""calibrate(): the record, certification, calibrators, the review band, storage and staleness."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from calibration.calibrators import Calibrator, fit_calibrator, review_threshold
from calibration.errors import CalibrationInputError
from calibration.inputs import LabelRecord, VerdictRecord, labels_sha256
from calibration.metrics import cohen_kappa
from calibration.rates import cases_needed, certify, clopper_pearson
from calibration.record import CalibrationRecord, calibrate
from calibration.store import find_record, load_record, stale_reasons, write_record

FINGERPRINT = {"prompt": {"id": "goal-fidelity", "version": 1, "sha256": "a" * 64},
               "backend": "llm", "model": "openai/gpt-4o-mini", "sampling": {"temperature": 0}}


def simulate(n=400, *, seed=0, tpr=0.9, tnr=0.9, prevalence=0.3, fingerprint=FINGERPRINT,
             confidence=True):
    """Reference labels and a judge with known TPR/TNR and confidence that tracks correctness."""
    rng = np.random.default_rng(seed)
    labels, verdicts = [], []
    for i in range(n):
        truth = "violated" if rng.random() < prevalence else "upheld"
        right = rng.random() < (tpr if truth == "violated" else tnr)
        said = truth if right else ("upheld" if truth == "violated" else "violated")
        conf = float(np.clip(rng.normal(0.85 if right else 0.6, 0.1), 0, 1))
        labels.append(LabelRecord(case=f"c{i}", label=truth, annotator="a", key="k",
                                  evidence_event="e1"))
        verdicts.append(VerdictRecord(case=f"c{i}", verdict=said, judge=fingerprint,
                                      confidence=conf if confidence else None,
                                      evidence_event="e1" if i % 2 else "e2"))
    return labels, verdicts


def test_record_matches_direct_computation():
    labels, verdicts = simulate()
    record = calibrate(labels, verdicts, name="gpt", n_boot=200)
    y_true = np.array([lab.label for lab in labels])
    y_pred = np.array([v.verdict for v in verdicts])
    assert record.n == 400 and record.ties_excluded == 0 and record.n_unmatched == 0
    assert record.accuracy == pytest.approx(np.mean(y_true == y_pred))
    assert record.cohen_kappa == pytest.approx(cohen_kappa(y_true, y_pred))
    assert record.accuracy_ci.lower < record.accuracy < record.accuracy_ci.upper
    assert record.kappa_ci.lower < record.cohen_kappa < record.kappa_ci.upper
    assert record.confusion.labels == ["upheld", "violated"]
    assert sum(map(sum, record.confusion.matrix)) == 400
    positives = y_true == "violated"
    assert record.tpr.k == np.sum(positives & (y_pred == "violated"))
    assert record.tnr.n == np.sum(~positives)
    assert record.labels_sha256 == labels_sha256(labels)
    assert record.fingerprint == FINGERPRINT
    assert record.calibrator is not None and 0 < record.ece < 0.5 and 0 < record.brier < 0.5
    both = np.sum(positives & (y_pred == "violated"))
    assert record.evidence_agreement.n == both
    assert record.key_agreement.n == np.sum(positives | (y_pred == "violated"))
    CalibrationRecord.model_validate_json(record.model_dump_json())  # round-trips, extra=forbid


def test_bootstrap_intervals_are_seeded():
    labels, verdicts = simulate(n=100)
    first = calibrate(labels, verdicts, name="x", seed=3, n_boot=300)
    again = calibrate(labels, verdicts, name="x", seed=3, n_boot=300)
    other = calibrate(labels, verdicts, name="x", seed=4, n_boot=300)
    assert first.kappa_ci == again.kappa_ci
    assert first.kappa_ci != other.kappa_ci


def test_certified_when_both_lower_bounds_reach_the_floor():
    labels, verdicts = simulate(n=600, tpr=0.99, tnr=0.99, prevalence=0.4)
    record = calibrate(labels, verdicts, name="good", n_boot=50)
    assert record.tpr.lower >= 0.8 and record.tnr.lower >= 0.8
    assert record.certified
    assert record.certification_reason.startswith("Certified for 'violated'")


def test_not_certified_when_a_lower_bound_misses_the_floor():
    labels, verdicts = simulate(n=600, tpr=0.7, tnr=0.99, prevalence=0.4)
    record = calibrate(labels, verdicts, name="weak", n_boot=50)
    assert not record.certified
    assert "lower bound of TPR" in record.certification_reason
    assert "TNR" not in record.certification_reason  # only the failing rate is blamed


def test_a_perfect_judge_on_too_few_cases_is_not_certified_and_told_how_many_it_needs():
    tpr, tnr = clopper_pearson(10, 10), clopper_pearson(30, 30)
    certified, reason = certify(tpr, tnr, floor=0.8)
    assert not certified
    assert f"needs {cases_needed(0.8)} such cases" in reason
    assert cases_needed(0.8) == 17
    assert clopper_pearson(17, 17).lower >= 0.8 > clopper_pearson(16, 16).lower


def test_no_positive_reference_case_means_no_certification():
    certified, reason = certify(None, clopper_pearson(40, 40), floor=0.8)
    assert not certified and "TPR is unknown" in reason


def test_clopper_pearson_matches_the_beta_quantiles():
    from scipy.stats import beta
    stat = clopper_pearson(7, 20)
    assert stat.lower == pytest.approx(beta.ppf(0.025, 7, 14))
    assert stat.upper == pytest.approx(beta.ppf(0.975, 8, 13))


def test_calibrator_json_round_trip_predicts_like_sklearn():
    rng = np.random.default_rng(0)
    confidence = rng.random(300)
    correct = (rng.random(300) < confidence).astype(float)
    isotonic = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(confidence, correct)
    platt = LogisticRegression(C=np.inf).fit(confidence.reshape(-1, 1), correct)
    grid = np.linspace(-0.1, 1.1, 61)
    stored_isotonic = Calibrator(kind="isotonic", x_thresholds=isotonic.X_thresholds_.tolist(),
                                 y_thresholds=isotonic.y_thresholds_.tolist(), n=300, reason="t")
    stored_platt = Calibrator(kind="platt", coef=float(platt.coef_[0, 0]),
                              intercept=float(platt.intercept_[0]), n=300, reason="t")
    for stored, expected in ((stored_isotonic, isotonic.predict(grid)),
                             (stored_platt, platt.predict_proba(grid.reshape(-1, 1))[:, 1])):
        reloaded = Calibrator.model_validate(json.loads(stored.model_dump_json()))
        np.testing.assert_allclose(reloaded.predict(grid), expected, rtol=1e-12, atol=1e-12)


def test_fit_calibrator_keeps_the_lower_cross_validated_log_loss_and_is_deterministic():
    rng = np.random.default_rng(1)
    confidence = rng.random(500)
    correct = (rng.random(500) < np.where(confidence > 0.5, 0.95, 0.3)).astype(float)
    fitted = fit_calibrator(correct, confidence, seed=0)
    assert fitted.kind in ("isotonic", "platt")
    assert fitted.cv_log_loss[fitted.kind] == min(fitted.cv_log_loss.values())
    assert fit_calibrator(correct, confidence, seed=0) == fitted
    probability = fitted.predict(confidence)
    assert np.all((probability >= 0) & (probability <= 1))
    assert np.mean(probability[confidence > 0.5]) > np.mean(probability[confidence <= 0.5])


def test_calibrator_is_constant_when_one_outcome_is_too_rare():
    fitted = fit_calibrator(np.ones(50), np.linspace(0.5, 1, 50))
    assert fitted.kind == "constant" and fitted.value == 1.0
    assert "too few" in fitted.reason


def test_broken_calibrator_json_is_rejected():
    with pytest.raises(ValueError, match="needs coef, intercept"):
        Calibrator.model_validate({"kind": "platt", "n": 3, "reason": "r"})
    with pytest.raises(ValueError, match="extra"):
        Calibrator.model_validate({"kind": "constant", "value": 1, "n": 3, "reason": "r", "pickle": "x"})


@pytest.mark.parametrize("target", [0.8, 0.9, 0.95])
def test_review_threshold_is_the_lowest_one_that_reaches_the_target_precision(target):
    rng = np.random.default_rng(5)
    probability = np.round(rng.random(400), 2)
    correct = (rng.random(400) < probability).astype(float)
    band = review_threshold(correct, probability, target_precision=target)
    auto = probability >= band.threshold
    assert correct[auto].mean() >= target
    assert band.precision == pytest.approx(correct[auto].mean())
    assert band.coverage == pytest.approx(auto.mean())
    for lower in np.unique(probability[probability < band.threshold]):
        assert correct[probability >= lower].mean() < target


def test_review_threshold_is_none_when_no_threshold_reaches_the_target():
    band = review_threshold([0, 1, 0, 0], [0.9, 0.8, 0.7, 0.6], target_precision=0.95)
    assert band.threshold is None and band.coverage == 0.0


def test_calibrated_record_review_band_reaches_target_on_its_data():
    labels, verdicts = simulate(n=800, tpr=0.85, tnr=0.85)
    record = calibrate(labels, verdicts, name="x", target_precision=0.95, n_boot=50)
    assert record.review_threshold is not None and 0 < record.coverage < 1
    calibrated = record.calibrator.predict([v.confidence for v in verdicts])
    correct = np.array([lab.label == v.verdict for lab, v in zip(labels, verdicts, strict=False)])
    auto = calibrated >= record.review_threshold
    assert correct[auto].mean() >= 0.95
    assert auto.mean() == pytest.approx(record.coverage)


def test_verdicts_without_confidence_give_no_confidence_statistics():
    labels, verdicts = simulate(n=100, confidence=False)
    record = calibrate(labels, verdicts, name="hard", n_boot=50)
    assert record.ece is None and record.calibrator is None and record.review_threshold is None
    assert record.accuracy > 0.5


def test_some_but_not_all_confidences_is_an_error():
    labels, verdicts = simulate(n=10)
    verdicts[4] = verdicts[4].model_copy(update={"confidence": None})
    with pytest.raises(CalibrationInputError, match="give all or none") as caught:
        calibrate(labels, verdicts, name="x")
    assert caught.value.field == "confidence"


def test_verdicts_of_two_judges_are_an_error():
    labels, verdicts = simulate(n=10)
    verdicts[3] = verdicts[3].model_copy(update={"judge": "another"})
    with pytest.raises(CalibrationInputError, match="more than one judge"):
        calibrate(labels, verdicts, name="x")


@pytest.mark.parametrize(("kwargs", "field"), [({"name": "../evil"}, "name"),
                                               ({"name": "x", "floor": 1.2}, "floor"),
                                               ({"name": "x", "target_precision": 0}, "target_precision"),
                                               ({"name": "x", "n_boot": 0}, "n_boot")])
def test_bad_settings_are_errors_naming_the_setting(kwargs, field):
    labels, verdicts = simulate(n=10)
    with pytest.raises(CalibrationInputError) as caught:
        calibrate(labels, verdicts, **kwargs)
    assert caught.value.field == field


def test_no_overlap_between_labels_and_verdicts_is_an_error():
    labels, _ = simulate(n=5)
    _, verdicts = simulate(n=5)
    verdicts = [v.model_copy(update={"case": "other-" + v.case}) for v in verdicts]
    with pytest.raises(CalibrationInputError, match="no case has both"):
        calibrate(labels, verdicts, name="x")


def test_write_find_and_load_records(tmp_path):
    labels, verdicts = simulate(n=120)
    record = calibrate(labels, verdicts, name="gpt", n_boot=50)
    json_path, png_path = write_record(record, tmp_path / "records", "gpt")
    assert png_path.read_bytes().startswith(b"\x89PNG")
    assert load_record(json_path) == record
    other_fp = {**FINGERPRINT, "model": "ollama/llama3"}
    _, other_verdicts = simulate(n=120, fingerprint=other_fp)
    write_record(calibrate(labels, other_verdicts, name="llama", n_boot=50), tmp_path / "records", "llama")
    assert find_record(tmp_path / "records", FINGERPRINT, record.labels_sha256) == record
    assert find_record(tmp_path / "records", other_fp).name == "llama"
    assert find_record(tmp_path / "records", FINGERPRINT, "0" * 64) is None
    assert find_record(tmp_path / "absent", FINGERPRINT) is None


def test_a_broken_record_file_is_an_error_naming_it(tmp_path):
    (tmp_path / "bad.json").write_text('{"name": "x"}')
    with pytest.raises(CalibrationInputError, match="not a calibration record") as caught:
        find_record(tmp_path, FINGERPRINT)
    assert caught.value.file.endswith("bad.json")


def test_stale_reasons_name_what_changed():
    labels, verdicts = simulate(n=60)
    record = calibrate(labels, verdicts, name="gpt", n_boot=20)
    assert stale_reasons(record, FINGERPRINT, record.labels_sha256) == []
    new_prompt = {**FINGERPRINT, "prompt": {**FINGERPRINT["prompt"], "sha256": "b" * 64, "version": 2}}
    reasons = stale_reasons(record, new_prompt, record.labels_sha256)
    assert [r.split(" (")[0] for r in reasons] == ["prompt hash changed", "prompt changed"]
    assert "prompt.version: 1 -> 2" in reasons[1]
    assert stale_reasons(record, {**FINGERPRINT, "model": "m2"})[0].startswith("model changed")
    sampling = {**FINGERPRINT, "sampling": {"temperature": 0.7}}
    assert stale_reasons(record, sampling)[0].startswith("params changed (sampling.temperature")
    assert stale_reasons(record, FINGERPRINT, "f" * 64)[0].startswith("labels changed")
    assert stale_reasons(record, "some-string-fingerprint")[0].startswith("judge fingerprint changed")


@pytest.mark.parametrize("kind", ["isotonic", "platt"])
def test_fitting_distinct_pairs_with_counts_equals_fitting_every_case(kind):
    from calibration.calibrators import _fit_isotonic, _fit_platt, _to_calibrator
    rng = np.random.default_rng(9)
    confidence = np.round(rng.random(2000), 2)  # judges report few distinct confidences
    correct = (rng.random(2000) < confidence).astype(float)
    if kind == "isotonic":
        ours = _to_calibrator(kind, _fit_isotonic(correct, confidence), 2000, reason="t")
        theirs = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(confidence, correct)
        expected = theirs.predict(confidence)
    else:
        ours = _to_calibrator(kind, _fit_platt(correct, confidence), 2000, reason="t")
        theirs = LogisticRegression(C=np.inf, solver="newton-cholesky").fit(
            confidence.reshape(-1, 1), correct)
        expected = theirs.predict_proba(confidence.reshape(-1, 1))[:, 1]
    np.testing.assert_allclose(ours.predict(confidence), expected, atol=1e-8)
