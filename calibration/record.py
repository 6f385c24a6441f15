"""The calibration record of one judge on one label set, and `calibrate`, which computes it.

A record is keyed by the judge's fingerprint and the sha256 of the label set: a change to either
makes it stale (see `calibration.store`).
"""

from __future__ import annotations

import platform
import re
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from calibration.annotators import InterAnnotator, inter_annotator
from calibration.bootstrap import Interval, check_n_boot, percentile_interval, resample_counts
from calibration.calibrators import Calibrator, fit_calibrator, review_threshold
from calibration.confidence import ReliabilityBin, brier_score, expected_calibration_error, reliability_bins
from calibration.errors import CalibrationInputError
from calibration.inputs import Fingerprint, LabelRecord, VerdictRecord, check_unique_cases, labels_sha256
from calibration.metrics import (
    ClassStats,
    Share,
    confusion,
    evidence_agreement,
    kappa_from_confusion,
    key_agreement,
    label_set,
    per_class,
)
from calibration.rates import RateStat, certify, sensitivity_specificity
from calibration.reference import Matched, match, reference_labels

RECORD_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
VERSIONED_PACKAGES = ("judge", "numpy", "scipy", "scikit-learn", "pydantic", "matplotlib")


class Confusion(BaseModel):
    """Rows = reference label, columns = judge verdict, both in `labels` order."""

    model_config = ConfigDict(extra="forbid")
    labels: list[str]
    matrix: list[list[int]]


class CalibrationRecord(BaseModel):
    """How far to trust one judge (by fingerprint) on one label set (by sha256)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    fingerprint: Fingerprint
    labels_sha256: str
    created_at: datetime
    package_versions: dict[str, str]
    positive: str
    n: int
    ties_excluded: int
    n_unmatched: int
    accuracy: float
    accuracy_ci: Interval
    cohen_kappa: float | None
    kappa_ci: Interval
    per_class: dict[str, ClassStats]
    confusion: Confusion
    key_agreement: Share
    evidence_agreement: Share
    inter_annotator: InterAnnotator
    ece: float | None
    brier: float | None
    reliability: list[ReliabilityBin] | None
    tpr: RateStat | None
    tnr: RateStat | None
    floor: float
    certified: bool
    certification_reason: str
    calibrator: Calibrator | None
    target_precision: float
    review_threshold: float | None
    coverage: float | None
    review_precision: float | None
    seed: int
    n_boot: int


def check_name(name: str) -> str:
    """Record names become file names: letters, digits, '.', '_' and '-' only."""
    if not isinstance(name, str) or not RECORD_NAME.match(name):
        raise CalibrationInputError(f"record name {name!r} must be letters, digits, '.', '_' or '-'",
                                    field="name")
    return name


def single_fingerprint(verdicts: list[VerdictRecord]) -> Fingerprint:
    """The fingerprint all verdicts share; verdicts of two judges in one set are an error."""
    first = verdicts[0].judge
    for verdict in verdicts:
        if verdict.judge != first:  # dict equality ignores key order, like canonical JSON
            raise CalibrationInputError(
                f"verdicts of more than one judge: this fingerprint differs from case "
                f"{verdicts[0].case!r}'s; calibrate one judge at a time", field="judge",
                **verdict.where())
    return verdicts[0].judge


def confidences(verdicts: list[VerdictRecord]) -> np.ndarray | None:
    """All verdicts' confidences, or None when no verdict has one; some but not all is an error."""
    missing = [verdict for verdict in verdicts if verdict.confidence is None]
    if len(missing) == len(verdicts):
        return None
    if missing:
        raise CalibrationInputError(f"no confidence, while {len(verdicts) - len(missing)} other "
                                    "verdicts have one: give all or none", field="confidence",
                                    **missing[0].where())
    return np.array([verdict.confidence for verdict in verdicts], dtype=float)


def _check_settings(target_precision: float, floor: float, n_boot: int) -> None:
    if not 0.0 < target_precision <= 1.0:
        raise CalibrationInputError(f"must lie in (0, 1]; got {target_precision!r}",
                                    field="target_precision")
    if not 0.0 < floor < 1.0:
        raise CalibrationInputError(f"must lie in (0, 1); got {floor!r}", field="floor")
    check_n_boot(n_boot)


def matched_or_error(labels: list[LabelRecord], verdicts: list[VerdictRecord]) -> Matched:
    """Verdicts paired with non-tied reference labels; an error when no case pairs up."""
    references = reference_labels(labels)
    matched = match(references, verdicts)
    if not matched.references:
        raise CalibrationInputError(
            f"no case has both a reference label and a verdict ({len(references)} labelled cases, "
            f"{matched.ties_excluded} of them ties; {len(verdicts)} verdicts)", field="case")
    return matched


def package_versions() -> dict[str, str]:
    """The Python version and the installed versions of the packages that decide a record's numbers."""
    versions = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def calibrate(labels: list[LabelRecord], verdicts: list[VerdictRecord], *, name: str,
              target_precision: float = 0.95, floor: float = 0.80, seed: int = 0,
              n_boot: int = 1000, positive: str = "violated") -> CalibrationRecord:
    """Measure one judge's verdicts against the majority labels of the same cases.

    Ties are left out and counted; intervals are 95% (bootstrap percentile for accuracy and kappa,
    Clopper-Pearson for TPR and TNR). Confidence statistics, the calibrator and the review band are
    None when the verdicts carry no confidence.
    """
    check_name(name)
    _check_settings(target_precision, floor, n_boot)
    if not verdicts:
        raise CalibrationInputError("no verdicts", field="verdict")
    check_unique_cases(verdicts)
    fingerprint = single_fingerprint(verdicts)
    confidences(verdicts)  # all or none, checked over the whole set
    matched = matched_or_error(labels, verdicts)
    y_true, y_pred = matched.y_true, matched.y_pred
    classes = label_set(y_true, y_pred)
    counts = confusion(y_true, y_pred, labels=classes)
    replicates = resample_counts(counts, n_boot=n_boot, rng=np.random.default_rng(seed))
    kappa = float(kappa_from_confusion(counts))
    tpr, tnr = sensitivity_specificity(y_true, y_pred, positive=positive)
    certified, reason = certify(tpr, tnr, floor=floor, positive=positive)
    fields: dict[str, Any] = dict(
        name=name, fingerprint=fingerprint, labels_sha256=labels_sha256(labels),
        created_at=datetime.now(UTC), package_versions=package_versions(),
        positive=positive, n=len(y_true), ties_excluded=matched.ties_excluded,
        n_unmatched=matched.n_unmatched, accuracy=float(np.trace(counts) / counts.sum()),
        accuracy_ci=percentile_interval(np.trace(replicates, axis1=1, axis2=2) / counts.sum()),
        cohen_kappa=None if np.isnan(kappa) else kappa,
        kappa_ci=percentile_interval(kappa_from_confusion(replicates)),
        per_class=per_class(y_true, y_pred, labels=classes),
        confusion=Confusion(labels=classes, matrix=counts.tolist()),
        key_agreement=key_agreement(matched, positive=positive),
        evidence_agreement=evidence_agreement(matched, positive=positive),
        inter_annotator=inter_annotator(labels), tpr=tpr, tnr=tnr, floor=floor,
        certified=certified, certification_reason=reason, target_precision=target_precision,
        seed=seed, n_boot=n_boot)
    fields |= _confidence_fields(matched, target_precision=target_precision, seed=seed)
    return CalibrationRecord(**fields)


def _confidence_fields(matched: Matched, *, target_precision: float, seed: int) -> dict[str, Any]:
    confidence = confidences(matched.verdicts)
    if confidence is None:
        return dict(ece=None, brier=None, reliability=None, calibrator=None, review_threshold=None,
                    coverage=None, review_precision=None)
    correct = (matched.y_true == matched.y_pred).astype(float)
    calibrator = fit_calibrator(correct, confidence, seed=seed)
    band = review_threshold(correct, calibrator.predict(confidence), target_precision=target_precision)
    return dict(ece=expected_calibration_error(correct, confidence),
                brier=brier_score(correct, confidence),
                reliability=reliability_bins(correct, confidence), calibrator=calibrator,
                review_threshold=band.threshold, coverage=band.coverage,
                review_precision=band.precision)
