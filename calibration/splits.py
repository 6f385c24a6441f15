"""Development and test splits of a label set, what a record measured on which, and K-fold figures
with folds by scenario.

A label may carry `split: dev | test`. When any label of a set does, every case must have exactly
one split (its annotators agree on it): the record then certifies on the test cases only, fits what
it fits (the calibrator, the review threshold) on the dev cases only, and reports both halves. A
case's group, for folds and for leak checks, is its `scenario` field, else the first `/`-separated
part of its id (`scenario/run/turn/key`), else the whole id.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from calibration.errors import CalibrationInputError
from calibration.inputs import LabelRecord
from calibration.rates import RateStat

if TYPE_CHECKING:
    from calibration.calibrators import Calibrator
    from calibration.reference import Matched

SPLITS = ("dev", "test")


class SplitFigures(BaseModel):
    """The headline figures of one split (or one fold): cases, accuracy, kappa, TPR and TNR."""

    model_config = ConfigDict(extra="forbid")
    split: str
    n: int
    groups: int = Field(description="distinct scenarios among the cases")
    accuracy: float
    cohen_kappa: float | None
    tpr: RateStat | None
    tnr: RateStat | None
    coverage: float | None = Field(default=None, description=(
        "share auto-decided at the review threshold fitted on the other cases (dev, or the other folds)"))
    review_precision: float | None = Field(default=None, description="the share of those that are right")
    brier: float | None = Field(default=None, description="Brier score of the calibrated probability")


class HeldOut(BaseModel):
    """Which figures of a record are in-sample and which are held out, and when the test half was read.

    `figures`: `test` when the record's top-level figures (accuracy, kappa, TPR, TNR, per class, ECE,
    coverage) are on the test split; `all` when the labels declare no split, and every figure is
    in-sample for whatever was tuned on them. `test_reads` counts the records written from this label
    set's test half (kept across re-records at the same path, for any judge fingerprint); 1 means
    the test half was read once."""

    model_config = ConfigDict(extra="forbid")
    figures: Literal["test", "all"]
    in_sample: list[str] = Field(description="figures measured on the cases their fitted parts were fitted on")
    held_out: list[str] = Field(description="figures measured on cases nothing was fitted on")
    dev_cases: int
    test_cases: int
    leaking_groups: list[str] = Field(default_factory=list, description="scenarios with cases in both splits")
    test_first_read_at: datetime | None = None
    test_reads: int = 0
    judge_fitted_on: Literal["dev", "all", "none"] | None = Field(default=None, description=(
        "what the judge's own rules, thresholds or examples were fitted or written on, as its maker states "
        "it: `dev` (the test figures are held out for them), `all` (every agreement figure is in-sample for "
        "them; only the calibrator's band measured on test is held out), `none` (nothing fitted); None: "
        "not stated"))
    judge_note: str | None = Field(default=None, description="the maker's words on what the judge was fitted on")


class CrossValidation(BaseModel):
    """K-fold figures, folds by scenario (scikit-learn's GroupKFold): each fold's calibrator and
    review threshold fitted on the other folds and measured on it; `pooled` over all out-of-fold cases."""

    model_config = ConfigDict(extra="forbid")
    k: int
    on: str = Field(description="the cases folded: `dev` when the labels declare a split, else `all`")
    folds: list[SplitFigures]
    pooled: SplitFigures


def group_of(label: LabelRecord) -> str:
    """The scenario a case belongs to: its `scenario`, else the first part of its id."""
    return label.scenario or label.case.split("/", 1)[0]


def case_splits(labels: list[LabelRecord]) -> dict[str, str] | None:
    """Case -> `dev` or `test` when the labels declare splits; None when none does. A case with no
    split while others have one, or with two, is an error naming the line."""
    if not any(label.split is not None for label in labels):
        return None
    splits: dict[str, str] = {}
    for label in labels:
        if label.split is None:
            raise CalibrationInputError("this label has no split while others of the set have one: give "
                                        "every case split dev or test", field="split", **label.where())
        if splits.setdefault(label.case, label.split) != label.split:
            raise CalibrationInputError(f"case {label.case!r} is in split {splits[label.case]!r} on another "
                                        f"line and {label.split!r} here", field="split", **label.where())
    return splits


def leaking_groups(labels: list[LabelRecord], splits: dict[str, str]) -> list[str]:
    """Scenarios with cases in both splits."""
    seen: dict[str, set[str]] = {}
    for label in labels:
        seen.setdefault(group_of(label), set()).add(splits[label.case])
    return sorted(group for group, found in seen.items() if len(found) > 1)


def fold_indices(groups: list[str], k: int) -> list[np.ndarray]:
    """The test indices of each of `k` folds by group (GroupKFold: no group in two folds)."""
    from sklearn.model_selection import GroupKFold

    distinct = len(set(groups))
    if k < 2:
        raise CalibrationInputError(f"--cv needs at least 2 folds; got {k}", field="cv")
    if k > distinct:
        raise CalibrationInputError(f"--cv {k} needs at least {k} scenarios; the cases folded have {distinct}",
                                    field="cv")
    index = np.arange(len(groups))
    return [test for _, test in GroupKFold(n_splits=k).split(index, groups=groups)]


def group_names(matched: Matched, groups: dict[str, str]) -> list[str]:
    """The group of each matched case, in order."""
    return [groups.get(case, case.split("/", 1)[0]) for case in matched.cases]


def split_figures(split: str, matched: Matched, groups: list[str], *, positive: str,
                  calibrator: Calibrator | None = None, threshold: float | None = None) -> SplitFigures:
    """The figures of `matched`; with a calibrator fitted elsewhere, also the coverage, review precision
    and Brier score of its calibrated probabilities at `threshold` on these cases."""
    from calibration.metrics import confusion, kappa_from_confusion, label_set
    from calibration.rates import sensitivity_specificity

    y_true, y_pred = matched.y_true, matched.y_pred
    counts = confusion(y_true, y_pred, labels=label_set(y_true, y_pred))
    kappa = float(kappa_from_confusion(counts))
    tpr, tnr = sensitivity_specificity(y_true, y_pred, positive=positive)
    figures = SplitFigures(split=split, n=len(y_true), groups=len(set(groups)),
                           accuracy=float(np.trace(counts) / counts.sum()),
                           cohen_kappa=None if np.isnan(kappa) else kappa, tpr=tpr, tnr=tnr)
    if calibrator is None:
        return figures
    return figures.model_copy(update=band_on(matched, calibrator, threshold))


def band_on(matched: Matched, calibrator: Calibrator, threshold: float | None) -> dict[str, Any]:
    """Coverage, precision and Brier score on `matched` of a calibrator and review threshold fitted on
    other cases."""
    return _band(*_auto(matched, calibrator, threshold))


def _auto(matched: Matched, calibrator: Calibrator, threshold: float | None) -> tuple[np.ndarray, ...]:
    confidence = np.array([v.confidence for v in matched.verdicts], dtype=float)
    correct = (matched.y_true == matched.y_pred).astype(float)
    calibrated = np.clip(calibrator.predict(confidence), 0.0, 1.0)
    auto = np.zeros(len(correct), dtype=bool) if threshold is None else calibrated >= threshold - 1e-12
    return correct, calibrated, auto


def _band(correct: np.ndarray, calibrated: np.ndarray, auto: np.ndarray) -> dict[str, Any]:
    from calibration.confidence import brier_score

    return dict(coverage=float(auto.mean()), review_precision=float(correct[auto].mean()) if auto.any() else None,
                brier=brier_score(correct, calibrated))


def cross_validate(matched: Matched, groups: list[str], *, k: int, on: str, positive: str,
                   target_precision: float, seed: int) -> CrossValidation:
    """K folds by scenario over `matched`: per fold, the calibrator and review threshold fitted on the
    other folds (when the verdicts carry confidences) and every figure measured on the fold."""
    from calibration.reference import Matched

    folds, out_of_fold = [], []
    with_confidence = all(v.confidence is not None for v in matched.verdicts)
    for number, test in enumerate(fold_indices(groups, k), start=1):
        train = np.setdiff1d(np.arange(len(groups)), test)
        held = _subset(matched, test, Matched)
        fitted = _fit_band(_subset(matched, train, Matched), target_precision, seed) if with_confidence else None
        folds.append(split_figures(f"fold {number}", held, [groups[i] for i in test], positive=positive,
                                   **(fitted or {})))
        out_of_fold.append((held, fitted))
    pooled = split_figures("pooled", _subset(matched, np.arange(len(groups)), Matched), groups, positive=positive)
    if with_confidence:
        pooled = pooled.model_copy(update=_pooled_band(out_of_fold))
    return CrossValidation(k=k, on=on, folds=folds, pooled=pooled)


def _subset(matched: Matched, index: np.ndarray, kind: type[Matched]) -> Matched:
    return kind(references=[matched.references[i] for i in index], verdicts=[matched.verdicts[i] for i in index],
                ties_excluded=0, n_unmatched=0)


def _fit_band(train: Matched, target_precision: float, seed: int) -> dict[str, Any]:
    from calibration.calibrators import fit_calibrator, review_threshold

    confidence = np.array([v.confidence for v in train.verdicts], dtype=float)
    correct = (train.y_true == train.y_pred).astype(float)
    calibrator = fit_calibrator(correct, confidence, seed=seed)
    band = review_threshold(correct, calibrator.predict(confidence), target_precision=target_precision)
    return dict(calibrator=calibrator, threshold=band.threshold)


def _pooled_band(out_of_fold: list[tuple[Matched, dict[str, Any] | None]]) -> dict[str, Any]:
    parts = [_auto(held, fitted["calibrator"], fitted["threshold"]) for held, fitted in out_of_fold
             if fitted is not None]  # each fold has one when the verdicts carry confidences
    return _band(*(np.concatenate([part[i] for part in parts]) for i in range(3)))
