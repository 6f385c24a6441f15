"""Agreement and confidence metrics against scikit-learn and the krippendorff package."""

from __future__ import annotations

import itertools

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import (
    accuracy_score,
    brier_score_loss,
    cohen_kappa_score,
    confusion_matrix,
    precision_recall_fscore_support,
)

from calibration.annotators import krippendorff_alpha_nominal, mean_pairwise_kappa
from calibration.confidence import brier_score, expected_calibration_error, reliability_bins
from calibration.metrics import accuracy, cohen_kappa, confusion, kappa_from_confusion, label_set, per_class

SETTINGS = settings(max_examples=60, derandomize=True, deadline=None)
LABELS = st.sampled_from(["violated", "upheld", "not-exercised"])


@st.composite
def label_pairs(draw, min_size=1, max_size=60):
    n = draw(st.integers(min_size, max_size))
    return (draw(st.lists(LABELS, min_size=n, max_size=n)),
            draw(st.lists(LABELS, min_size=n, max_size=n)))


@pytest.mark.filterwarnings("ignore::UserWarning")  # sklearn's own warnings on one-label inputs
@SETTINGS
@given(label_pairs())
def test_agreement_metrics_equal_sklearn(pair):
    y_true, y_pred = pair
    labels = label_set(y_true, y_pred)
    assert accuracy(y_true, y_pred) == pytest.approx(accuracy_score(y_true, y_pred))
    np.testing.assert_array_equal(confusion(y_true, y_pred, labels=labels),
                                  confusion_matrix(y_true, y_pred, labels=labels))
    expected = cohen_kappa_score(y_true, y_pred, labels=labels)
    np.testing.assert_allclose(cohen_kappa(y_true, y_pred), expected, rtol=1e-12, atol=1e-12,
                               equal_nan=True)
    precision, recall, f1, support = precision_recall_fscore_support(
        y_true, y_pred, labels=labels, zero_division=np.nan)
    stats = per_class(y_true, y_pred, labels=labels)
    for i, label in enumerate(labels):
        got = stats[label]
        for mine, theirs in ((got.precision, precision[i]), (got.recall, recall[i]), (got.f1, f1[i])):
            assert (mine is None and np.isnan(theirs)) or mine == pytest.approx(theirs)
        assert got.support == support[i]


@SETTINGS
@given(label_pairs(min_size=2))
def test_kappa_is_symmetric_and_invariant_under_relabelling(pair):
    y_true, y_pred = pair
    kappa = cohen_kappa(y_true, y_pred)
    rename = {"violated": "A", "upheld": "B", "not-exercised": "C"}
    renamed = cohen_kappa([rename[x] for x in y_true], [rename[x] for x in y_pred])
    np.testing.assert_allclose(cohen_kappa(y_pred, y_true), kappa, equal_nan=True)
    np.testing.assert_allclose(renamed, kappa, equal_nan=True)


def test_kappa_of_a_batch_of_confusions_equals_each_one():
    rng = np.random.default_rng(3)
    batch = rng.integers(0, 20, size=(50, 3, 3))
    expected = [cohen_kappa_score(*_vectors(m)) for m in batch]
    np.testing.assert_allclose(kappa_from_confusion(batch), expected)


def _vectors(matrix):
    true, pred = [], []
    for (i, j), count in np.ndenumerate(matrix):
        true += [i] * count
        pred += [j] * count
    return true, pred


def test_kappa_is_nan_when_both_raters_use_one_label():
    assert np.isnan(cohen_kappa(["upheld"] * 5, ["upheld"] * 5))


def test_metrics_reject_bad_vectors():
    with pytest.raises(ValueError, match="3 labels but y_pred has 2"):
        accuracy(["a", "b", "c"], ["a", "b"])
    with pytest.raises(ValueError, match="empty"):
        cohen_kappa([], [])


@st.composite
def value_counts(draw):
    units = draw(st.integers(2, 25))
    categories = draw(st.integers(2, 4))
    counts = draw(st.lists(st.lists(st.integers(0, 4), min_size=categories, max_size=categories),
                           min_size=units, max_size=units))
    return np.array(counts)


@SETTINGS
@given(value_counts())
def test_krippendorff_alpha_equals_the_krippendorff_package(counts):
    pairable = counts[counts.sum(axis=1) >= 2]
    categories_used = np.count_nonzero(pairable.sum(axis=0))
    mine = krippendorff_alpha_nominal(counts)
    if categories_used < 2:
        assert np.isnan(mine)
        return
    theirs = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    assert mine == pytest.approx(theirs, abs=1e-10)


def test_krippendorff_alpha_from_reliability_data_matches_package():
    rng = np.random.default_rng(7)
    data = rng.integers(0, 3, size=(4, 40)).astype(float)  # raters x units
    data[rng.random(data.shape) < 0.2] = np.nan
    counts = np.stack([(data == c).sum(axis=0) for c in range(3)], axis=1)
    assert krippendorff_alpha_nominal(counts) == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def test_alpha_and_pairwise_kappa_are_one_for_identical_raters():
    rng = np.random.default_rng(1)
    truth = rng.choice(["violated", "upheld", "not-exercised"], size=30).tolist()
    counts = np.stack([[3 * (t == c) for c in ("violated", "upheld", "not-exercised")]
                       for t in truth])
    assert krippendorff_alpha_nominal(counts) == pytest.approx(1.0)
    raters = {name: dict(enumerate(truth)) for name in ("a", "b", "c")}
    kappa, pairs = mean_pairwise_kappa(raters)
    assert kappa == pytest.approx(1.0) and pairs == 3


def test_pairwise_kappa_is_the_mean_over_pairs_on_shared_cases():
    rng = np.random.default_rng(2)
    raters = {name: {case: rng.choice(["x", "y"]) for case in range(40) if rng.random() < 0.8}
              for name in ("a", "b", "c")}
    expected = []
    for first, second in itertools.combinations("abc", 2):
        shared = sorted(raters[first].keys() & raters[second].keys())
        expected.append(cohen_kappa_score([raters[first][c] for c in shared],
                                          [raters[second][c] for c in shared]))
    kappa, pairs = mean_pairwise_kappa(raters)
    assert kappa == pytest.approx(np.mean(expected)) and pairs == 3


@SETTINGS
@given(st.lists(st.tuples(st.booleans(), st.floats(0, 1)), min_size=1, max_size=80))
def test_brier_equals_sklearn_and_ece_equals_its_definition(rows):
    correct = np.array([float(c) for c, _ in rows])
    confidence = np.array([p for _, p in rows])
    assert brier_score(correct, confidence) == pytest.approx(
        brier_score_loss(correct, confidence, labels=[0, 1]))
    bins = reliability_bins(correct, confidence)
    assert sum(b.count for b in bins) == len(rows)
    expected = sum(b.count / len(rows) * abs(b.accuracy - b.mean_confidence) for b in bins if b.count)
    assert expected_calibration_error(correct, confidence) == pytest.approx(expected, abs=1e-12)


def test_ece_is_zero_for_a_perfectly_calibrated_judge():
    confidence, correct = [], []
    for b in range(10):
        level = (b + 0.5) / 10  # each bin's accuracy is set equal to its confidence
        right = round(level * 20)
        confidence += [level] * 20
        correct += [1.0] * right + [0.0] * (20 - right)
    assert expected_calibration_error(correct, confidence) == pytest.approx(0.0, abs=1e-12)
    overconfident = [min(1.0, c + 0.2) for c in confidence]
    assert expected_calibration_error(correct, overconfident) > 0.1


def test_confidence_metrics_reject_bad_values():
    with pytest.raises(ValueError, match=r"y_prob must lie in \[0, 1\]; got 1.5"):
        brier_score([1, 0], [0.5, 1.5])
    with pytest.raises(ValueError, match="0/1"):
        expected_calibration_error([2, 0], [0.5, 0.5])
