"""Sensitivity (TPR) and specificity (TNR) of a judge for one class, with exact binomial bounds, and
the certification rule built on them.

Positive = the reference label is `positive` (default `violated`); negative = any other reference
label. TPR = share of positive cases the judge calls positive; TNR = share of negative cases it
calls anything else.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict

from calibration.bootstrap import CI_LEVEL
from calibration.metrics import check_pair


class RateStat(BaseModel):
    """k of n with an exact (Clopper-Pearson) interval at `level`."""

    model_config = ConfigDict(extra="forbid")
    value: float
    lower: float
    upper: float
    n: int
    k: int
    level: float = CI_LEVEL


def clopper_pearson(k: int, n: int, *, level: float = CI_LEVEL) -> RateStat:
    """k/n with the exact binomial interval of Clopper & Pearson (1934, Biometrika 26(4)), via
    scipy.stats.binomtest(...).proportion_ci(method="exact")."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1; got k={k}, n={n}")
    from scipy.stats import binomtest  # here: reading a record needs no scipy.stats

    interval = binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="exact")
    return RateStat(value=k / n, lower=float(interval.low), upper=float(interval.high), n=int(n),
                    k=int(k), level=level)


def positive_counts(y_true: ArrayLike, y_pred: ArrayLike, *, positive: str) -> tuple[int, int, int, int]:
    """(true positives, positives, true negatives, negatives) for class `positive`."""
    true, pred = check_pair(y_true, y_pred)
    is_positive, says_positive = true == positive, pred == positive
    return (int(np.sum(is_positive & says_positive)), int(np.sum(is_positive)),
            int(np.sum(~is_positive & ~says_positive)), int(np.sum(~is_positive)))


def sensitivity_specificity(y_true: ArrayLike, y_pred: ArrayLike, *, positive: str = "violated",
                            level: float = CI_LEVEL) -> tuple[RateStat | None, RateStat | None]:
    """(TPR, TNR) with Clopper-Pearson intervals; each None when it has no case to count."""
    tp, n_pos, tn, n_neg = positive_counts(y_true, y_pred, positive=positive)
    return (clopper_pearson(tp, n_pos, level=level) if n_pos else None,
            clopper_pearson(tn, n_neg, level=level) if n_neg else None)


def cases_needed(floor: float, *, level: float = CI_LEVEL) -> int:
    """Fewest cases, all judged right, whose exact lower bound reaches `floor`: (alpha/2)^(1/n) >= floor."""
    return math.ceil(math.log((1.0 - level) / 2.0) / math.log(floor))


def certify(tpr: RateStat | None, tnr: RateStat | None, *, floor: float,
            positive: str = "violated") -> tuple[bool, str]:
    """Certified for `positive` only when the lower bounds of both TPR and TNR reach `floor`.

    Returns (certified, one sentence saying why).
    """
    if not 0.0 < floor < 1.0:
        raise ValueError(f"floor must lie in (0, 1); got {floor!r}")
    needed = cases_needed(floor, level=next((s.level for s in (tpr, tnr) if s), CI_LEVEL))
    shortfalls = []
    for name, stat, side in (("TPR", tpr, f"'{positive}'"), ("TNR", tnr, f"non-'{positive}'")):
        if stat is None:
            shortfalls.append(f"no reference case is {side}, so {name} is unknown")
        elif stat.lower < floor:
            hint = f"; even a perfect judge needs {needed} such cases" if stat.n < needed else ""
            shortfalls.append(f"the {stat.level:.0%} lower bound of {name} is {stat.lower:.3f} "
                              f"({stat.k}/{stat.n}), below the floor {floor:.2f}{hint}")
    if shortfalls:
        return False, f"Not certified for '{positive}': " + "; ".join(shortfalls) + "."
    assert tpr is not None and tnr is not None  # no shortfall: both were measured
    return True, (f"Certified for '{positive}': the {tpr.level:.0%} lower bounds of TPR "
                  f"({tpr.lower:.3f}, {tpr.k}/{tpr.n}) and TNR ({tnr.lower:.3f}, {tnr.k}/{tnr.n}) "
                  f"both reach the floor {floor:.2f}.")
