"""Agreement of a judge's verdicts with reference labels: accuracy, Cohen's kappa, per-class
precision/recall/F1, the confusion matrix, and the ledger-specific key and evidence agreement.

Functions follow scikit-learn's convention ``f(y_true, y_pred, *, ...)``: y_true are the reference
labels, y_pred the judge's verdicts, both 1-d sequences of categorical labels of equal length.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict

from calibration.reference import Matched


class ClassStats(BaseModel):
    """Precision, recall and F1 of one label (None where undefined: nothing predicted or present)."""

    model_config = ConfigDict(extra="forbid")
    precision: float | None
    recall: float | None
    f1: float | None
    support: int


class Share(BaseModel):
    """k of n; `value` is None when n is 0."""

    model_config = ConfigDict(extra="forbid")
    value: float | None
    k: int
    n: int


def share(k: int, n: int) -> Share:
    """K of n as a Share (its value None when n is 0)."""
    return Share(value=k / n if n else None, k=int(k), n=int(n))


def check_pair(y_true: ArrayLike, y_pred: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validate two label vectors: 1-d, equal length, not empty."""
    true, pred = np.asarray(y_true), np.asarray(y_pred)
    if true.ndim != 1 or pred.ndim != 1:
        raise ValueError(f"labels must be 1-d; got shapes {true.shape} and {pred.shape}")
    if len(true) != len(pred):
        raise ValueError(f"y_true has {len(true)} labels but y_pred has {len(pred)}")
    if len(true) == 0:
        raise ValueError("no labels: y_true and y_pred are empty")
    return true, pred


def label_set(y_true: ArrayLike, y_pred: ArrayLike) -> list[str]:
    """The sorted union of the labels in both vectors: the rows and columns of the confusion."""
    return sorted(set(np.asarray(y_true).tolist()) | set(np.asarray(y_pred).tolist()))


def accuracy(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Share of cases where the verdict equals the reference label."""
    true, pred = check_pair(y_true, y_pred)
    return float(np.mean(true == pred))


def label_codes(values: ArrayLike, labels: Sequence[str]) -> np.ndarray:
    """Each value's index in `labels`; a value not in `labels` is an error naming it."""
    index = {label: i for i, label in enumerate(labels)}
    try:
        return np.fromiter((index[value] for value in np.asarray(values).tolist()), dtype=np.int64)
    except KeyError as exc:
        raise ValueError(f"label {exc.args[0]!r} is not one of {list(labels)}") from None


def confusion(y_true: ArrayLike, y_pred: ArrayLike, *, labels: Sequence[str]) -> np.ndarray:
    """Counts with rows = reference label, columns = verdict, both in `labels` order; equals
    sklearn.metrics.confusion_matrix (computed here to avoid its single-label warning)."""
    true, pred = check_pair(y_true, y_pred)
    k = len(labels)
    cells = label_codes(true, labels) * k + label_codes(pred, labels)
    return np.bincount(cells, minlength=k * k).reshape(k, k)


def kappa_from_confusion(counts: np.ndarray) -> np.ndarray:
    """Cohen's kappa of one or many K x K confusion matrices (leading axes are batch axes).

    kappa = (p_o - p_e) / (1 - p_e), p_o = trace / n, p_e = sum_k row_k * col_k / n^2
    (Cohen 1960, "A coefficient of agreement for nominal scales", Educ. Psychol. Meas. 20(1)).
    NaN where p_e = 1 (both raters used a single, identical label), as in scikit-learn.
    """
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=(-2, -1))
    observed = np.trace(counts, axis1=-2, axis2=-1)
    expected = np.einsum("...i,...i->...", counts.sum(axis=-1), counts.sum(axis=-2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray((n * observed - expected) / (n * n - expected))


def cohen_kappa(y_true: ArrayLike, y_pred: ArrayLike, *, labels: Sequence[str] | None = None) -> float:
    """Cohen's kappa of verdicts against reference labels; equals sklearn.metrics.cohen_kappa_score.

    Symmetric in the two raters and unchanged by renaming labels. NaN when undefined (see
    `kappa_from_confusion`).
    """
    true, pred = check_pair(y_true, y_pred)
    labels = list(labels) if labels is not None else label_set(true, pred)
    return float(kappa_from_confusion(confusion(true, pred, labels=labels)))


def per_class(y_true: ArrayLike, y_pred: ArrayLike, *, labels: Sequence[str]) -> dict[str, ClassStats]:
    """Per-label precision = TP/(TP+FP), recall = TP/(TP+FN), F1 = their harmonic mean, support =
    number of reference cases with the label (sklearn.metrics.precision_recall_fscore_support)."""
    true, pred = check_pair(y_true, y_pred)
    from sklearn.metrics import precision_recall_fscore_support  # here: reading a record needs no sklearn

    precision, recall, f1, support = precision_recall_fscore_support(
        true, pred, labels=list(labels), zero_division=np.nan)
    return {label: ClassStats(precision=_finite(p), recall=_finite(r), f1=_finite(f), support=int(s))
            for label, p, r, f, s in zip(labels, precision, recall, f1, support, strict=False)}


def _finite(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def key_agreement(matched: Matched, *, positive: str = "violated") -> Share:
    """Violated-key agreement on ledger cases (reference with a `key`).

    Among the ledger cases that the reference or the judge says are `positive`, the share where both
    say so about the same key (the verdict names the reference key, or no key). This is the Jaccard
    index of the two sets of violated (case, key) pairs (Jaccard 1912).
    """
    either = both = 0
    for ref, verdict in zip(matched.references, matched.verdicts, strict=False):
        if ref.key is None:
            continue
        ref_says, judge_says = ref.label == positive, verdict.verdict == positive
        if ref_says or judge_says:
            either += 1
            both += ref_says and judge_says and verdict.key in (None, ref.key)
    return share(both, either)


def evidence_agreement(matched: Matched, *, positive: str = "violated") -> Share:
    """Evidence-event agreement on ledger cases.

    Among the cases where both the reference and the judge say `positive` and the annotators named an
    evidence event, the share where the judge's `evidence_event` is one named by an annotator who
    gave the reference label.
    """
    named = agreed = 0
    for ref, verdict in zip(matched.references, matched.verdicts, strict=False):
        if ref.label == positive and verdict.verdict == positive and ref.evidence_events:
            named += 1
            agreed += verdict.evidence_event in ref.evidence_events
    return share(agreed, named)
