"""How well a judge's confidence predicts whether its verdict is right.

`confidence` is the judge's probability that its verdict is right; `correct` is 1 where the verdict
equals the reference label, else 0. Scikit-learn convention: ``f(y_true=correct, y_prob=confidence)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict

N_BINS = 10


class ReliabilityBin(BaseModel):
    """One equal-width confidence bin [lower, upper) (the last one includes 1.0)."""

    model_config = ConfigDict(extra="forbid")
    lower: float
    upper: float
    count: int
    mean_confidence: float | None
    accuracy: float | None


def check_probabilities(y_true: ArrayLike, y_prob: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validate 0/1 outcomes and probabilities in [0, 1] of equal, non-zero length."""
    outcome, prob = np.asarray(y_true, dtype=float), np.asarray(y_prob, dtype=float)
    if outcome.shape != prob.shape or outcome.ndim != 1:
        raise ValueError(f"y_true and y_prob must be 1-d of equal length; got {outcome.shape} "
                         f"and {prob.shape}")
    if len(outcome) == 0:
        raise ValueError("no outcomes: y_true and y_prob are empty")
    bad = ~np.isin(outcome, (0.0, 1.0))
    if bad.any():
        raise ValueError(f"y_true must be 0/1 (correct or not); got {float(outcome[bad][0])!r}")
    bad = ~((prob >= 0.0) & (prob <= 1.0))
    if bad.any():
        raise ValueError(f"y_prob must lie in [0, 1]; got {float(prob[bad][0])!r}")
    return outcome, prob


def bin_index(y_prob: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """Equal-width bins on [0, 1]: bin b holds [b/n_bins, (b+1)/n_bins); 1.0 goes in the last."""
    return np.asarray(np.minimum((np.asarray(y_prob) * n_bins).astype(int), n_bins - 1))


def reliability_bins(y_true: ArrayLike, y_prob: ArrayLike, *, n_bins: int = N_BINS) -> list[ReliabilityBin]:
    """Per bin: count, mean confidence and accuracy (share correct); None for empty bins."""
    outcome, prob = check_probabilities(y_true, y_prob)
    index = bin_index(prob, n_bins)
    count = np.bincount(index, minlength=n_bins)
    confidence_sum = np.bincount(index, weights=prob, minlength=n_bins)
    correct_sum = np.bincount(index, weights=outcome, minlength=n_bins)
    return [ReliabilityBin(lower=b / n_bins, upper=(b + 1) / n_bins, count=int(count[b]),
                           mean_confidence=float(confidence_sum[b] / count[b]) if count[b] else None,
                           accuracy=float(correct_sum[b] / count[b]) if count[b] else None)
            for b in range(n_bins)]


def expected_calibration_error(y_true: ArrayLike, y_prob: ArrayLike, *, n_bins: int = N_BINS) -> float:
    """ECE = sum_b (n_b / N) * |accuracy_b - mean confidence_b| over `n_bins` equal-width bins,
    weighted by bin count (Guo et al. 2017, "On Calibration of Modern Neural Networks", ICML, eq. 3;
    Naeini et al. 2015, AAAI)."""
    outcome, prob = check_probabilities(y_true, y_prob)
    index = bin_index(prob, n_bins)
    gap = np.bincount(index, weights=outcome - prob, minlength=n_bins)
    return float(np.abs(gap).sum() / len(prob))


def brier_score(y_true: ArrayLike, y_prob: ArrayLike) -> float:
    """Brier score = mean (confidence - correct)^2 (Brier 1950, Monthly Weather Review 78(1));
    equals sklearn.metrics.brier_score_loss(correct, confidence). Lower is better."""
    outcome, prob = check_probabilities(y_true, y_prob)
    return float(np.mean((prob - outcome) ** 2))
