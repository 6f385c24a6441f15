"""A key's violation rate over a corpus of runs (`judge grade --policy P CORPUS`): the observed share
with its Wilson score interval, or, for the runs a judge decided, the share Rogan-Gladen corrected for
the judge's measured errors (calibration.prevalence's estimator, with a bootstrap interval).

Without numpy at import: a corpus graded by rules alone (`--judge none`), or by a judge without a
calibration record, takes the observed branch, and its grade (a cached rerun above all) no longer pays
for numpy and the record models (~0.07 CPU-s). The corrected branch imports them when it runs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from calibration.errors import CalibrationInputError
from calibration.interval import Interval

if TYPE_CHECKING:
    from calibration.rates import RateStat

WILSON_Z = 1.9599639845400545
"""The standard normal's 0.975 quantile, as scipy.stats.norm.isf(0.025) gives it (a test holds them equal)."""


def wilson_interval(count: int, nobs: int) -> tuple[float, float]:
    """The 95% Wilson score interval of count/nobs (Wilson 1927, JASA 22(158)), computed operation for
    operation as statsmodels' `proportion_confint(count, nobs, 0.05, method="wilson")` does, so the same
    floats (tests/test_corpus.py compares every count up to 300 runs), without importing statsmodels and
    scipy.stats: ~1 CPU-second, the largest part of a corpus report's rates before."""
    q = count / nobs
    crit2 = WILSON_Z**2
    denom = 1 + crit2 / nobs
    center = (q + crit2 / (2 * nobs)) / denom
    dist = WILSON_Z * math.sqrt(q * (1.0 - q) / nobs + crit2 / (4.0 * nobs**2))
    dist /= denom
    return min(max(center - dist, 0.0), 1.0), min(max(center + dist, 0.0), 1.0)


class CorpusRate(BaseModel):
    """The violation rate of one key over a corpus of runs: the observed share, and the share corrected
    for the judge's errors on the runs the judge decided (`corrected` False: no correction applied)."""

    model_config = ConfigDict(extra="forbid")
    rate: float
    interval: Interval
    observed_rate: float
    corrected: bool
    method: str


def corpus_rate(n: int, deterministic: int, judged: int, judged_positive: int, *, tpr: RateStat | None = None,
                tnr: RateStat | None = None, seed: int = 0, n_boot: int = 1000) -> CorpusRate:
    """The violation rate of a key over `n` runs: `deterministic` runs a rule found violating (taken as
    they are), `judged` runs the judge decided, `judged_positive` of them said violated.

    With the judge's TPR and TNR (from its calibration record) the judged share is Rogan-Gladen
    corrected, as `estimate_prevalence` corrects unlabelled verdicts: rate = (deterministic + judged x
    RG(judged_positive / judged)) / n, with a percentile bootstrap interval resampling the runs
    (multinomially over rule-violated, judged, other), the judged verdicts and the record's labelled
    cases (TPR, TNR). Without them, or with no judged run, or TPR + TNR <= 1, the observed share with
    its Wilson score interval (`wilson_interval`)."""
    if n < 1 or deterministic + judged > n or not 0 <= judged_positive <= judged:
        raise CalibrationInputError(f"inconsistent counts: n={n}, deterministic={deterministic}, judged={judged}, "
                                    f"judged_positive={judged_positive}", field="counts")
    observed = (deterministic + judged_positive) / n
    usable = tpr is not None and tnr is not None and tpr.value + tnr.value > 1.0
    if not judged or not usable:
        low, high = wilson_interval(deterministic + judged_positive, n)
        why = "no judged run" if not judged else ("no calibration record" if tpr is None or tnr is None
                                                    else "TPR + TNR <= 1: the judge's verdicts cannot be corrected")
        return CorpusRate(rate=observed, interval=Interval(lower=float(low), upper=float(high)),
                          observed_rate=observed, corrected=False, method=f"observed, Wilson interval ({why})")
    assert tpr is not None and tnr is not None  # usable says so
    import numpy as np

    from calibration.bootstrap import percentile_interval, resample_counts
    from calibration.prevalence import rogan_gladen

    rng = np.random.default_rng(seed)
    runs = resample_counts(np.array([deterministic, judged, n - deterministic - judged]), n_boot=n_boot, rng=rng)
    said = rng.binomial(runs[:, 1], judged_positive / judged)
    cells = resample_counts(np.array([tpr.k, tpr.n - tpr.k, tnr.k, tnr.n - tnr.k]), n_boot=n_boot, rng=rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        boot_tpr = cells[:, 0] / (cells[:, 0] + cells[:, 1])
        boot_tnr = cells[:, 2] / (cells[:, 2] + cells[:, 3])
        share = np.where(runs[:, 1] > 0, rogan_gladen(said / np.maximum(runs[:, 1], 1), boot_tpr, boot_tnr), 0.0)
    replicates = (runs[:, 0] + runs[:, 1] * share) / n
    point = (deterministic + judged * float(rogan_gladen(judged_positive / judged, tpr.value, tnr.value))) / n
    return CorpusRate(rate=point, interval=percentile_interval(replicates), observed_rate=observed, corrected=True,
                      method=f"Rogan-Gladen corrected on {judged} judged run(s) (TPR {tpr.k}/{tpr.n}, TNR "
                             f"{tnr.k}/{tnr.n}), percentile bootstrap interval ({n_boot} resamples)")
