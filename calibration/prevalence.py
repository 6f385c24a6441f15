"""The true violation rate of unlabelled runs, corrected for the judge's measured errors.

Rogan-Gladen estimator (Rogan & Gladen 1978, "Estimating prevalence from the results of a screening
test", Am. J. Epidemiol. 107(1)): with p_obs the share of unlabelled verdicts that say `positive`,
prevalence = (p_obs + TNR - 1) / (TPR + TNR - 1), clipped to [0, 1]. TPR and TNR come from the
labelled cases. The interval is a percentile bootstrap that resamples both the labelled cases and the
unlabelled verdicts, so it carries the uncertainty of the correction as well as of p_obs.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict

from calibration.bootstrap import Interval, check_n_boot, percentile_interval, resample_counts
from calibration.errors import CalibrationInputError
from calibration.inputs import Fingerprint, LabelRecord, VerdictRecord, canonical_json, check_unique_cases
from calibration.rates import RateStat, clopper_pearson, positive_counts
from calibration.record import matched_or_error, single_fingerprint


class PrevalenceEstimate(BaseModel):
    """Corrected share of unlabelled cases whose true label is `positive`."""

    model_config = ConfigDict(extra="forbid")
    positive: str
    fingerprint: Fingerprint
    prevalence: float
    interval: Interval
    observed_rate: float
    n_unlabeled: int
    n_labeled: int
    tpr: RateStat
    tnr: RateStat
    n_boot: int
    n_boot_undefined: int  # resamples where TPR + TNR <= 1, left out of the interval
    seed: int


def rogan_gladen(observed_rate: ArrayLike, tpr: ArrayLike, tnr: ArrayLike) -> np.ndarray:
    """(p_obs + TNR - 1) / (TPR + TNR - 1) clipped to [0, 1]; NaN where TPR + TNR <= 1."""
    observed_rate, tpr, tnr = (np.asarray(x, dtype=float) for x in (observed_rate, tpr, tnr))
    youden = tpr + tnr - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        corrected = np.clip((observed_rate + tnr - 1.0) / youden, 0.0, 1.0)
    return np.where(youden > 0, corrected, np.nan)


def estimate_prevalence(labels: list[LabelRecord], verdicts: list[VerdictRecord],
                        unlabeled_verdicts: list[VerdictRecord], *, seed: int = 0,
                        n_boot: int = 1000, positive: str = "violated") -> PrevalenceEstimate:
    """Rogan-Gladen corrected rate of `positive` among the unlabelled verdicts' cases, with a 95%
    bootstrap interval. The labelled and unlabelled verdicts must come from the same judge."""
    check_n_boot(n_boot)
    if not unlabeled_verdicts:
        raise CalibrationInputError("no unlabelled verdicts", field="verdict")
    check_unique_cases(unlabeled_verdicts)
    fingerprint = single_fingerprint(verdicts)
    if canonical_json(single_fingerprint(unlabeled_verdicts)) != canonical_json(fingerprint):
        raise CalibrationInputError("unlabelled verdicts come from another judge than the labelled "
                                    "ones: its error rates do not apply", field="judge",
                                    **unlabeled_verdicts[0].where())
    matched = matched_or_error(labels, verdicts)
    tp, n_pos, tn, n_neg = positive_counts(matched.y_true, matched.y_pred, positive=positive)
    if not n_pos or not n_neg:
        raise CalibrationInputError(f"the labelled cases need both '{positive}' and other reference "
                                    f"labels to measure TPR and TNR; got {n_pos} and {n_neg}",
                                    field="label")
    tpr, tnr = clopper_pearson(tp, n_pos), clopper_pearson(tn, n_neg)
    if tpr.value + tnr.value <= 1.0:
        raise CalibrationInputError(
            f"TPR + TNR = {tpr.value:.3f} + {tnr.value:.3f} <= 1 on the labelled cases: the judge's "
            f"'{positive}' verdicts carry no information, so its rate cannot be corrected",
            field="verdict")
    m = len(unlabeled_verdicts)
    k = sum(verdict.verdict == positive for verdict in unlabeled_verdicts)
    rng = np.random.default_rng(seed)
    # Labelled cells: [TP, FN, TN, FP]; unlabelled: the count of positive verdicts among m.
    cells = resample_counts(np.array([tp, n_pos - tp, tn, n_neg - tn]), n_boot=n_boot, rng=rng)
    observed = rng.binomial(m, k / m, size=check_n_boot(n_boot)) / m
    with np.errstate(divide="ignore", invalid="ignore"):
        boot_tpr = cells[:, 0] / (cells[:, 0] + cells[:, 1])
        boot_tnr = cells[:, 2] / (cells[:, 2] + cells[:, 3])
    replicates = rogan_gladen(observed, boot_tpr, boot_tnr)
    return PrevalenceEstimate(
        positive=positive, fingerprint=fingerprint,
        prevalence=float(rogan_gladen(k / m, tpr.value, tnr.value)),
        interval=percentile_interval(replicates), observed_rate=k / m, n_unlabeled=m,
        n_labeled=len(matched.references), tpr=tpr, tnr=tnr, n_boot=n_boot,
        n_boot_undefined=int(np.isnan(replicates).sum()), seed=seed)
