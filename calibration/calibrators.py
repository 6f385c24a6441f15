"""Calibrators from a judge's raw confidence to the probability that its verdict is right, and the
review threshold that reaches a target precision.

Two scikit-learn families compete: isotonic regression (monotone, non-parametric; Zadrozny & Elkan
2002, KDD) and Platt scaling (a logistic curve on the confidence; Platt 1999, "Probabilistic outputs
for support vector machines"). The one with the lower cross-validated log loss wins. A fitted
calibrator is stored as plain JSON (isotonic: its threshold arrays; Platt: coef and intercept), never
as a pickle, and predicts again from that JSON alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict, model_validator

from calibration.confidence import check_probabilities

if TYPE_CHECKING:  # scikit-learn is imported where a calibrator is fitted: reading a record needs none
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

N_FOLDS = 5
# Out-of-fold probabilities are clipped before log loss so that one isotonic 0/1 miss costs
# -log(1e-6) ~ 14 nats, not the ~36 of machine epsilon: large, but not the whole score.
LOG_LOSS_CLIP = 1e-6


class Calibrator(BaseModel):
    """A fitted calibrator, as stored in a calibration record. `predict(confidence)` -> P(correct)."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["isotonic", "platt", "constant"]
    x_thresholds: list[float] | None = None
    y_thresholds: list[float] | None = None
    coef: float | None = None
    intercept: float | None = None
    value: float | None = None
    cv_log_loss: dict[str, float] = {}
    n_folds: int | None = None
    n: int
    reason: str

    @model_validator(mode="after")
    def _has_its_parameters(self) -> Calibrator:
        needed = {"isotonic": ("x_thresholds", "y_thresholds"), "platt": ("coef", "intercept"),
                  "constant": ("value",)}[self.kind]
        missing = [name for name in needed if getattr(self, name) is None]
        if missing:
            raise ValueError(f"a {self.kind} calibrator needs {', '.join(missing)}")
        xs, ys = self.x_thresholds or [], self.y_thresholds or []
        if self.kind == "isotonic" and (len(xs) != len(ys) or not xs):
            raise ValueError("isotonic x_thresholds and y_thresholds must be non-empty and of equal length")
        return self

    def predict(self, confidence: ArrayLike) -> np.ndarray:
        """Calibrated probability that the verdict is right, for each raw confidence."""
        x = np.asarray(confidence, dtype=float)
        if self.kind == "isotonic":
            # IsotonicRegression.predict with out_of_bounds="clip" is this linear interpolation.
            assert self.x_thresholds is not None and self.y_thresholds is not None  # the validator's
            return np.asarray(np.interp(x, self.x_thresholds, self.y_thresholds))
        if self.kind == "platt":
            assert self.coef is not None and self.intercept is not None  # the validator's
            z = np.asarray(self.coef * x + self.intercept, dtype=float)
            return np.array([_expit(v) for v in z.ravel().tolist()], dtype=float).reshape(z.shape)
        return np.full_like(x, self.value)


def _expit(z: float) -> float:
    """The logistic function as scipy.special.expit computes it for a double, 1 / (1 + exp(-z)), with
    the same libm `exp` (math.exp): bit for bit the same (tests/test_calibration_predict.py holds it
    to scipy's), without importing scipy.special, which cost every judged grade ~0.2 CPU-s."""
    try:
        return 1.0 / (1.0 + math.exp(-z))
    except OverflowError:  # exp(-z) past the largest double: scipy's expit gives 0 there too
        return 0.0


def _distinct(outcome: np.ndarray, prob: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (confidence, outcome) pairs and their counts. Both fits below are weighted sums over
    cases, so fitting the pairs with counts as sample weights gives the same model; judges report
    few distinct confidences (0.8, 0.85, ...), which makes large label sets cheap to fit."""
    values, index = np.unique(prob, return_inverse=True)
    counts = np.bincount(index * 2 + outcome.astype(np.int64), minlength=2 * len(values))
    cell = np.flatnonzero(counts)
    return (cell % 2).astype(float), values[cell // 2], counts[cell].astype(float)


def _fit_isotonic(outcome: np.ndarray, prob: np.ndarray) -> IsotonicRegression:
    from sklearn.isotonic import IsotonicRegression

    y, x, weight = _distinct(outcome, prob)
    return IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True,
                              out_of_bounds="clip").fit(x, y, sample_weight=weight)


def _fit_platt(outcome: np.ndarray, prob: np.ndarray) -> LogisticRegression:
    from sklearn.linear_model import LogisticRegression

    # C=inf: no penalty, as in Platt's method; the single feature needs no shrinkage. Newton steps
    # converge in a few iterations on two parameters, where lbfgs takes dozens.
    y, x, weight = _distinct(outcome, prob)
    return LogisticRegression(C=np.inf, solver="newton-cholesky").fit(x.reshape(-1, 1), y,
                                                                      sample_weight=weight)


def _to_calibrator(kind: Literal["isotonic", "platt"], model: Any, n: int, **extra: Any) -> Calibrator:
    if kind == "isotonic":
        return Calibrator(kind=kind, x_thresholds=model.X_thresholds_.tolist(),
                          y_thresholds=model.y_thresholds_.tolist(), n=n, **extra)
    return Calibrator(kind=kind, coef=float(model.coef_[0, 0]), intercept=float(model.intercept_[0]),
                      n=n, **extra)


def _cross_validated_log_loss(outcome: np.ndarray, prob: np.ndarray, *, n_folds: int,
                              seed: int) -> dict[str, float]:
    from sklearn.metrics import log_loss
    from sklearn.model_selection import StratifiedKFold

    out_of_fold = {"isotonic": np.empty_like(prob), "platt": np.empty_like(prob)}
    folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    for train, test in folds.split(prob.reshape(-1, 1), outcome):
        out_of_fold["isotonic"][test] = _fit_isotonic(outcome[train], prob[train]).predict(prob[test])
        out_of_fold["platt"][test] = _fit_platt(outcome[train], prob[train]).predict_proba(
            prob[test].reshape(-1, 1))[:, 1]
    return {kind: float(log_loss(outcome, np.clip(p, LOG_LOSS_CLIP, 1 - LOG_LOSS_CLIP), labels=[0, 1]))
            for kind, p in out_of_fold.items()}


def fit_calibrator(y_true: ArrayLike, y_prob: ArrayLike, *, seed: int = 0,
                   n_folds: int = N_FOLDS) -> Calibrator:
    """Fit isotonic and Platt calibrators of correctness (y_true, 0/1) on raw confidence (y_prob),
    keep the one with the lower stratified `n_folds`-fold log loss (Platt on a tie), refit on all.

    With fewer than two right or two wrong verdicts nothing can be cross-validated: the calibrator
    is then the constant observed accuracy, and says so.
    """
    outcome, prob = check_probabilities(y_true, y_prob)
    n, n_right = len(outcome), int(outcome.sum())
    minority = min(n_right, n - n_right)
    if minority < 2:
        return Calibrator(kind="constant", value=n_right / n, n=n,
                          reason=f"{n_right} of {n} verdicts right: too few of one outcome to fit "
                                 "and cross-validate a curve, so the observed accuracy is used")
    folds = min(n_folds, minority)
    losses = _cross_validated_log_loss(outcome, prob, n_folds=folds, seed=seed)
    kind: Literal["isotonic", "platt"] = "isotonic" if losses["isotonic"] < losses["platt"] else "platt"
    model = _fit_isotonic(outcome, prob) if kind == "isotonic" else _fit_platt(outcome, prob)
    other = "platt" if kind == "isotonic" else "isotonic"
    return _to_calibrator(kind, model, n, cv_log_loss=losses, n_folds=folds,
                          reason=f"lower {folds}-fold cross-validated log loss "
                                 f"({losses[kind]:.4f} vs {other} {losses[other]:.4f})")


@dataclass(frozen=True)
class ReviewBand:
    """Verdicts with calibrated probability >= `threshold` are decided automatically; the rest go to
    human review. `threshold` is None when no threshold reaches the target (everything is reviewed)."""

    threshold: float | None
    coverage: float
    precision: float | None
    n_auto: int


def review_threshold(y_true: ArrayLike, y_prob: ArrayLike, *, target_precision: float = 0.95) -> ReviewBand:
    """The lowest calibrated probability t such that the verdicts with probability >= t are right at
    least `target_precision` of the time (precision = share of auto-decided verdicts that are right);
    coverage = share of verdicts auto-decided at t. Measured on the given (labelled) verdicts."""
    if not 0.0 < target_precision <= 1.0:
        raise ValueError(f"target_precision must lie in (0, 1]; got {target_precision!r}")
    outcome, prob = check_probabilities(y_true, y_prob)
    order = np.argsort(-prob, kind="stable")
    sorted_prob, sorted_outcome = prob[order], outcome[order]
    # Candidate thresholds are the distinct probabilities; the auto set at t ends at t's last copy.
    last_of_value = np.flatnonzero(np.append(sorted_prob[1:] != sorted_prob[:-1], True))
    precision = np.cumsum(sorted_outcome)[last_of_value] / (last_of_value + 1)
    reaching = np.flatnonzero(precision >= target_precision - 1e-12)
    if reaching.size == 0:
        return ReviewBand(threshold=None, coverage=0.0, precision=None, n_auto=0)
    best = reaching[-1]
    n_auto = int(last_of_value[best] + 1)
    return ReviewBand(threshold=float(sorted_prob[last_of_value[best]]), coverage=n_auto / len(prob),
                      precision=float(precision[best]), n_auto=n_auto)
