"""Agreement among human annotators: the ceiling a judge can be expected to reach.

Computed over cases that two or more annotators labelled (each annotator's latest label), with
Krippendorff's alpha for nominal data and the mean pairwise Cohen's kappa.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from pydantic import BaseModel, ConfigDict

from calibration.inputs import LabelRecord
from calibration.metrics import cohen_kappa
from calibration.reference import latest_labels


class InterAnnotator(BaseModel):
    """Annotator agreement on `n_cases` multiply-labelled cases (None where undefined)."""

    model_config = ConfigDict(extra="forbid")
    krippendorff_alpha: float | None
    pairwise_kappa: float | None
    n_cases: int
    n_annotators: int = 0
    n_pairs: int = 0


def krippendorff_alpha_nominal(value_counts: np.ndarray) -> float:
    """Krippendorff's alpha for nominal data from a units x categories matrix of label counts.

    Builds the coincidence matrix o_ck = sum_u n_uc (n_uk - [c = k]) / (m_u - 1) over units with
    m_u >= 2 values, n_c = sum_k o_ck, n = sum_c n_c, and returns
    alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k
    (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", Univ. of Pennsylvania,
    https://repository.upenn.edu/asc_papers/43). Units with fewer than two values are not pairable
    and are dropped. NaN when fewer than two categories occur among the pairable values (undefined).
    """
    counts = np.asarray(value_counts, dtype=float)
    if counts.ndim != 2:
        raise ValueError(f"value_counts must be units x categories; got shape {counts.shape}")
    if (counts < 0).any():
        raise ValueError("value_counts must be non-negative counts")
    values_per_unit = counts.sum(axis=1)
    pairable = counts[values_per_unit >= 2]
    weights = 1.0 / (values_per_unit[values_per_unit >= 2] - 1.0)
    coincidences = (pairable.T * weights) @ pairable - np.diag(weights @ pairable)
    per_category = coincidences.sum(axis=1)
    total = per_category.sum()
    disagreeing = total - np.trace(coincidences)
    expected = total * total - np.sum(per_category**2)
    if expected <= 0:
        return float("nan")
    return float(1.0 - (total - 1.0) * disagreeing / expected)


def mean_pairwise_kappa(labels_by_annotator: dict[str, dict[str, str]]) -> tuple[float, int]:
    """Mean Cohen's kappa over annotator pairs on the cases both labelled (Light 1971,
    "Measures of response agreement for qualitative data", Psychol. Bull. 76(5)).

    Pairs with no shared case, or whose kappa is undefined, are skipped. Returns (mean, pairs used);
    the mean is NaN when no pair counts.
    """
    kappas = []
    for first, second in combinations(sorted(labels_by_annotator), 2):
        a, b = labels_by_annotator[first], labels_by_annotator[second]
        shared = sorted(a.keys() & b.keys())
        if shared:
            kappa = cohen_kappa([a[case] for case in shared], [b[case] for case in shared])
            if not np.isnan(kappa):
                kappas.append(kappa)
    return (float(np.mean(kappas)) if kappas else float("nan")), len(kappas)


def inter_annotator(labels: list[LabelRecord]) -> InterAnnotator:
    """Krippendorff's alpha and mean pairwise kappa over the cases with two or more annotators."""
    latest = latest_labels(labels)
    annotators_per_case: dict[str, int] = {}
    for record in latest:
        annotators_per_case[record.case] = annotators_per_case.get(record.case, 0) + 1
    shared = [record for record in latest if annotators_per_case[record.case] >= 2]
    if not shared:
        return InterAnnotator(krippendorff_alpha=None, pairwise_kappa=None, n_cases=0)
    cases = sorted({record.case for record in shared})
    categories = sorted({record.label for record in shared})
    row, column = {c: i for i, c in enumerate(cases)}, {c: i for i, c in enumerate(categories)}
    value_counts = np.zeros((len(cases), len(categories)))
    by_annotator: dict[str, dict[str, str]] = {}
    for record in shared:
        value_counts[row[record.case], column[record.label]] += 1
        by_annotator.setdefault(record.annotator, {})[record.case] = record.label
    alpha = krippendorff_alpha_nominal(value_counts)
    kappa, pairs = mean_pairwise_kappa(by_annotator)
    return InterAnnotator(krippendorff_alpha=None if np.isnan(alpha) else alpha,
                          pairwise_kappa=None if np.isnan(kappa) else kappa, n_cases=len(cases),
                          n_annotators=len(by_annotator), n_pairs=pairs)
