"""Two judges on the same labelled cases (paired test, kappa difference, flipped cases), and the
self-consistency of two verdict sets on the same cases (no labels needed)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from calibration.bootstrap import Interval, check_n_boot, percentile_interval, resample_counts
from calibration.errors import CalibrationInputError
from calibration.inputs import Fingerprint, LabelRecord, VerdictRecord, check_unique_cases
from calibration.metrics import confusion, kappa_from_confusion, label_codes, label_set
from calibration.record import single_fingerprint
from calibration.reference import reference_labels


class McNemar(BaseModel):
    """Exact McNemar test: under H0 (equal accuracy) the discordant cases split 50/50, so
    p = two-sided binomial test of `only_a_right` of `only_a_right + only_b_right` at 1/2
    (McNemar 1947, Psychometrika 12(2); exact form: Fagerland et al. 2013, BMC Med. Res. Methodol. 13:91)."""

    model_config = ConfigDict(extra="forbid")
    only_a_right: int
    only_b_right: int
    p_value: float


class FlippedCase(BaseModel):
    """A case one judge got right and the other wrong: `fixed` if B is right, `broken` if A was."""

    model_config = ConfigDict(extra="forbid")
    case: str
    reference: str
    verdict_a: str
    verdict_b: str
    change: Literal["fixed", "broken"]


class Comparison(BaseModel):
    """Judge B against judge A on the cases both judged that have a (non-tied) reference label."""

    model_config = ConfigDict(extra="forbid")
    fingerprint_a: Fingerprint
    fingerprint_b: Fingerprint
    n: int
    ties_excluded: int
    accuracy_a: float
    accuracy_b: float
    kappa_a: float | None
    kappa_b: float | None
    kappa_difference: float | None  # kappa_b - kappa_a
    kappa_difference_ci: Interval  # paired case-resampling bootstrap
    mcnemar: McNemar
    flipped: list[FlippedCase]
    seed: int
    n_boot: int


class Agreement(BaseModel):
    """Two verdict sets on their shared cases: Cohen's kappa and percent agreement."""

    model_config = ConfigDict(extra="forbid")
    fingerprint_a: Fingerprint
    fingerprint_b: Fingerprint
    n: int
    n_only_a: int
    n_only_b: int
    percent_agreement: float
    cohen_kappa: float | None
    labels: list[str]
    confusion: list[list[int]]  # rows = verdicts A, columns = verdicts B


def _none_if_nan(value: float | np.ndarray) -> float | None:
    return None if np.isnan(value) else float(value)


def compare_judges(labels: list[LabelRecord], verdicts_a: list[VerdictRecord],
                   verdicts_b: list[VerdictRecord], *, seed: int = 0, n_boot: int = 1000) -> Comparison:
    """Paired comparison of two judges on the same reference labels (majority; ties left out)."""
    check_n_boot(n_boot)
    for verdicts in (verdicts_a, verdicts_b):
        if not verdicts:
            raise CalibrationInputError("no verdicts", field="verdict")
        check_unique_cases(verdicts)
    references = reference_labels(labels)
    by_a = {v.case: v.verdict for v in verdicts_a}
    by_b = {v.case: v.verdict for v in verdicts_b}
    cases = [case for case, ref in references.items()
             if ref.label is not None and case in by_a and case in by_b]
    if not cases:
        raise CalibrationInputError("no labelled case was judged by both judges", field="case")
    truth = [label for case in cases if (label := references[case].label) is not None]  # cases have one
    a, b = [by_a[case] for case in cases], [by_b[case] for case in cases]
    classes = sorted(set(truth) | set(a) | set(b))
    k = len(classes)
    codes = (label_codes(truth, classes) * k + label_codes(a, classes)) * k + label_codes(b, classes)
    cells = np.bincount(codes, minlength=k**3).reshape(k, k, k)  # reference x A x B
    replicates = resample_counts(cells, n_boot=n_boot, rng=np.random.default_rng(seed))
    kappa_a, kappa_b = kappa_from_confusion(cells.sum(axis=2)), kappa_from_confusion(cells.sum(axis=1))
    # replicates: n_boot x reference x A x B; summing out B gives A's confusion, and vice versa.
    differences = (kappa_from_confusion(replicates.sum(axis=2))
                   - kappa_from_confusion(replicates.sum(axis=3)))
    right_a, right_b = np.array(truth) == np.array(a), np.array(truth) == np.array(b)
    only_a, only_b = int(np.sum(right_a & ~right_b)), int(np.sum(~right_a & right_b))
    from scipy.stats import binomtest

    p_value = binomtest(only_a, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
    flipped = [FlippedCase(case=case, reference=t, verdict_a=va, verdict_b=vb,
                           change="fixed" if rb else "broken")
               for case, t, va, vb, ra, rb in zip(cases, truth, a, b, right_a, right_b, strict=False) if ra != rb]
    return Comparison(
        fingerprint_a=single_fingerprint(verdicts_a), fingerprint_b=single_fingerprint(verdicts_b),
        n=len(cases), ties_excluded=sum(ref.label is None for ref in references.values()),
        accuracy_a=float(right_a.mean()), accuracy_b=float(right_b.mean()),
        kappa_a=_none_if_nan(kappa_a), kappa_b=_none_if_nan(kappa_b),
        kappa_difference=_none_if_nan(kappa_b - kappa_a),
        kappa_difference_ci=percentile_interval(differences),
        mcnemar=McNemar(only_a_right=only_a, only_b_right=only_b, p_value=float(p_value)),
        flipped=flipped, seed=seed, n_boot=n_boot)


def agreement(verdicts_a: list[VerdictRecord], verdicts_b: list[VerdictRecord]) -> Agreement:
    """Self-consistency: Cohen's kappa and percent agreement of two verdict sets on shared cases
    (e.g. one judge run twice, or with the candidates in both orders)."""
    for verdicts in (verdicts_a, verdicts_b):
        if not verdicts:
            raise CalibrationInputError("no verdicts", field="verdict")
        check_unique_cases(verdicts)
    by_a = {v.case: v.verdict for v in verdicts_a}
    by_b = {v.case: v.verdict for v in verdicts_b}
    shared = sorted(by_a.keys() & by_b.keys())
    if not shared:
        raise CalibrationInputError("the two verdict sets share no case", field="case")
    a, b = [by_a[case] for case in shared], [by_b[case] for case in shared]
    classes = label_set(a, b)
    counts = confusion(a, b, labels=classes)
    return Agreement(
        fingerprint_a=single_fingerprint(verdicts_a), fingerprint_b=single_fingerprint(verdicts_b),
        n=len(shared), n_only_a=len(by_a) - len(shared), n_only_b=len(by_b) - len(shared),
        percent_agreement=float(np.trace(counts) / len(shared)),
        cohen_kappa=_none_if_nan(float(kappa_from_confusion(counts))), labels=classes,
        confusion=counts.tolist())
