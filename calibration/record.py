"""The calibration record of one judge on one label set, and `calibrate`, which computes it.

A record is keyed by the judge's fingerprint and the sha256 of the label set: a change to either
makes it stale (see `calibration.store`).
"""

from __future__ import annotations

import platform
import re
from datetime import UTC, datetime
from importlib import metadata
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from calibration.annotators import InterAnnotator, inter_annotator
from calibration.bias import BiasGate
from calibration.bootstrap import Interval, check_n_boot, percentile_interval, resample_counts
from calibration.calibrators import Calibrator, fit_calibrator, review_threshold
from calibration.confidence import ReliabilityBin, brier_score, expected_calibration_error, reliability_bins
from calibration.errors import CalibrationInputError
from calibration.inputs import (
    Fingerprint,
    LabelRecord,
    VerdictRecord,
    canonical_json,
    check_unique_cases,
    labels_sha256,
)
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
from calibration.splits import (
    CrossValidation,
    HeldOut,
    SplitFigures,
    band_on,
    case_splits,
    cross_validate,
    group_names,
    group_of,
    leaking_groups,
    split_figures,
)

RECORD_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# The packages whose versions a record keeps, by the key it keeps them under -> distribution name.
# judge is installed as `judge-drift` (pyproject.toml's [project] name; calibration cannot import judge).
DISTRIBUTION = "judge-drift"
VERSIONED_PACKAGES = {"judge": DISTRIBUTION, "numpy": "numpy", "scipy": "scipy", "scikit-learn": "scikit-learn",
                      "pydantic": "pydantic", "matplotlib": "matplotlib"}


class Confusion(BaseModel):
    """Rows = reference label, columns = judge verdict, both in `labels` order."""

    model_config = ConfigDict(extra="forbid")
    labels: list[str]
    matrix: list[list[int]]


class CalibrationRecord(BaseModel):
    """How far to trust one judge (by fingerprint) on one label set (by sha256).

    Certification has two gates: the rates gate (the 95% lower bounds of TPR and TNR reach
    `floor`) and, when the record has a `bias` section, the bias gate (no perturbation's flip rate
    above its `max_flip`; calibration.bias). `certified` requires both when both are present; a
    record without a `bias` section is certified by the rates gate alone, as before, and
    `certification_summary` says that the bias gate was not run. `rates_certified` and
    `rates_reason` keep the rates gate's own result once a bias section was added."""

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
    bias: BiasGate | None = None
    rates_certified: bool | None = None
    rates_reason: str | None = None
    held_out: HeldOut | None = None
    splits: dict[str, SplitFigures] | None = None
    cv: CrossValidation | None = None

    @property
    def certification_summary(self) -> str:
        """Why the record is (not) certified, naming the bias gate even when it was not run."""
        if self.bias is None:
            return f"{self.certification_reason} The bias gate was not run."
        return self.certification_reason


def with_bias_gate(record: CalibrationRecord, gate: BiasGate) -> CalibrationRecord:
    """`record` with its `bias` section set to `gate` (replacing an earlier one) and `certified`
    requiring both gates. The gate must be of the record's judge (fingerprint) and label set."""
    if canonical_json(gate.fingerprint) != canonical_json(record.fingerprint):
        raise CalibrationInputError("the bias gate was measured for another judge fingerprint than the "
                                    "record's", field="fingerprint")
    if gate.labels_sha256 is not None and gate.labels_sha256 != record.labels_sha256:
        raise CalibrationInputError(f"the bias gate was measured on another label set (sha256 "
                                    f"{gate.labels_sha256[:12]}..., the record's {record.labels_sha256[:12]}...)",
                                    field="labels_sha256")
    rates = record.certified if record.rates_certified is None else record.rates_certified
    rates_reason = record.certification_reason if record.rates_reason is None else record.rates_reason
    return record.model_copy(update=dict(
        bias=gate, rates_certified=rates, rates_reason=rates_reason, certified=rates and gate.certified,
        certification_reason=f"{rates_reason} {gate.reason}"))


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
    for key, distribution in VERSIONED_PACKAGES.items():
        try:
            versions[key] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
    return versions


def calibrate(labels: list[LabelRecord], verdicts: list[VerdictRecord], *, name: str,
              target_precision: float = 0.95, floor: float = 0.80, seed: int = 0,
              n_boot: int = 1000, positive: str = "violated", cv: int | None = None,
              judge_fitted_on: Literal["dev", "all", "none"] | None = None,
              judge_note: str | None = None) -> CalibrationRecord:
    """Measure one judge's verdicts against the majority labels of the same cases.

    Ties are left out and counted; intervals are 95% (bootstrap percentile for accuracy and kappa,
    Clopper-Pearson for TPR and TNR). Confidence statistics, the calibrator and the review band are
    None when the verdicts carry no confidence. When the labels declare splits (calibration.splits),
    the record's figures and certification are the test split's, the calibrator and review threshold
    are fitted on the dev split, and `splits` holds both halves' figures. `cv` K gives K-fold figures
    by scenario (of the dev split when there is one). `judge_fitted_on` (`dev`, `all`, `none`) and
    `judge_note` say what the judge's own parts were fitted on: the record's `held_out` section sorts
    its figures into in-sample and held out by it.
    """
    check_name(name)
    _check_settings(target_precision, floor, n_boot)
    if not verdicts:
        raise CalibrationInputError("no verdicts", field="verdict")
    check_unique_cases(verdicts)
    fingerprint = single_fingerprint(verdicts)
    confidences(verdicts)  # all or none, checked over the whole set
    splits = case_splits(labels)
    groups = {label.case: group_of(label) for label in labels}
    if splits is None:
        measured, fit_on = labels, None
    else:
        measured = [label for label in labels if splits[label.case] == "test"]
        dev = [label for label in labels if splits[label.case] == "dev"]
        fit_on = _split_matched(dev, verdicts, splits, "dev")
    matched = _split_matched(measured, verdicts, splits, "test") if splits else matched_or_error(labels, verdicts)
    fields = _figures(matched, positive=positive, floor=floor, seed=seed, n_boot=n_boot)
    fields.update(name=name, fingerprint=fingerprint, labels_sha256=labels_sha256(labels),
                  created_at=datetime.now(UTC), package_versions=package_versions(),
                  inter_annotator=inter_annotator(labels), target_precision=target_precision)
    fields |= _confidence_fields(matched, target_precision=target_precision, seed=seed, fit_on=fit_on)
    if fit_on is not None:  # the labels declare splits
        fields["splits"] = _halves(fit_on, matched, groups, fields, positive=positive)
    fields["held_out"] = _held_out(labels, splits, fields, judge_fitted_on, judge_note)
    if cv is not None:
        folded = fit_on if fit_on is not None else matched
        fields["cv"] = cross_validate(folded, group_names(folded, groups), k=cv, on="dev" if splits else "all",
                                      positive=positive, target_precision=target_precision, seed=seed)
    return CalibrationRecord(**fields)


def _split_matched(labels: list[LabelRecord], verdicts: list[VerdictRecord], splits: dict[str, str],
                   split: str) -> Matched:
    """The verdicts on one split's cases paired with their labels (verdicts of the other split are
    not unmatched: they are the other half's)."""
    other = {case for case, s in splits.items() if s != split}
    matched = match(reference_labels(labels), [v for v in verdicts if v.case not in other])
    if not matched.references:
        raise CalibrationInputError(f"no case of the {split} split has both a reference label and a verdict",
                                    field="split")
    return matched


def _figures(matched: Matched, *, positive: str, floor: float, seed: int, n_boot: int) -> dict[str, Any]:
    y_true, y_pred = matched.y_true, matched.y_pred
    classes = label_set(y_true, y_pred)
    counts = confusion(y_true, y_pred, labels=classes)
    replicates = resample_counts(counts, n_boot=n_boot, rng=np.random.default_rng(seed))
    kappa = float(kappa_from_confusion(counts))
    tpr, tnr = sensitivity_specificity(y_true, y_pred, positive=positive)
    certified, reason = certify(tpr, tnr, floor=floor, positive=positive)
    return dict(
        positive=positive, n=len(y_true), ties_excluded=matched.ties_excluded,
        n_unmatched=matched.n_unmatched, accuracy=float(np.trace(counts) / counts.sum()),
        accuracy_ci=percentile_interval(np.trace(replicates, axis1=1, axis2=2) / counts.sum()),
        cohen_kappa=None if np.isnan(kappa) else kappa,
        kappa_ci=percentile_interval(kappa_from_confusion(replicates)),
        per_class=per_class(y_true, y_pred, labels=classes),
        confusion=Confusion(labels=classes, matrix=counts.tolist()),
        key_agreement=key_agreement(matched, positive=positive),
        evidence_agreement=evidence_agreement(matched, positive=positive),
        tpr=tpr, tnr=tnr, floor=floor, certified=certified, certification_reason=reason,
        seed=seed, n_boot=n_boot)


def _halves(dev: Matched, test: Matched, groups: dict[str, str], fields: dict[str, Any], *,
            positive: str) -> dict[str, SplitFigures]:
    band = dict(calibrator=fields["calibrator"], threshold=fields["review_threshold"])
    if band["calibrator"] is None:
        band = {}
    return {"dev": split_figures("dev", dev, group_names(dev, groups), positive=positive, **band),
            "test": split_figures("test", test, group_names(test, groups), positive=positive, **band)}


CONFIDENCE_FIGURES = ["calibrator", "review_threshold"]
MEASURED_FIGURES = ["accuracy", "cohen_kappa", "per_class", "tpr", "tnr", "key_agreement",
                    "evidence_agreement", "ece", "brier", "reliability", "coverage", "review_precision"]


BAND_FIGURES = ["coverage", "review_precision"]


def _held_out(labels: list[LabelRecord], splits: dict[str, str] | None, fields: dict[str, Any],
              judge_fitted_on: Literal["dev", "all", "none"] | None, judge_note: str | None) -> HeldOut:
    """Which figures are in-sample and which held out: without splits, all in-sample; with them, the
    test figures are held out unless the judge's own parts were fitted on all cases, which leaves
    only the calibrator's band on test held out."""
    fitted = CONFIDENCE_FIGURES if fields.get("calibrator") is not None else []
    measured = [f for f in MEASURED_FIGURES if fields.get(f) is not None]
    if splits is None:
        return HeldOut(figures="all", in_sample=fitted + measured, held_out=[], dev_cases=0,
                       test_cases=0, judge_fitted_on=judge_fitted_on, judge_note=judge_note)
    counts = {s: sum(1 for v in splits.values() if v == s) for s in ("dev", "test")}
    in_sample = [f"{f} (fitted on dev)" for f in fitted] + ["splits.dev"]
    held_out = measured + ["splits.test"]
    if judge_fitted_on == "all":
        band = [f for f in BAND_FIGURES if f in measured]
        in_sample += [f for f in held_out if f not in band]
        held_out = band
    return HeldOut(figures="test", in_sample=in_sample, held_out=held_out, dev_cases=counts["dev"],
                   test_cases=counts["test"], leaking_groups=leaking_groups(labels, splits),
                   test_first_read_at=fields["created_at"], test_reads=1, judge_fitted_on=judge_fitted_on,
                   judge_note=judge_note)


def _confidence_fields(matched: Matched, *, target_precision: float, seed: int,
                       fit_on: Matched | None = None) -> dict[str, Any]:
    """Confidence statistics of `matched`, and the calibrator and review threshold fitted on `fit_on`
    (the dev split) or, without one, on `matched` itself (coverage and precision are then in-sample)."""
    confidence = confidences(matched.verdicts)
    if confidence is None:
        return dict(ece=None, brier=None, reliability=None, calibrator=None, review_threshold=None,
                    coverage=None, review_precision=None)
    correct = (matched.y_true == matched.y_pred).astype(float)
    source = fit_on if fit_on is not None else matched
    source_confidence = confidences(source.verdicts)
    if source_confidence is None:  # checked over the whole set: all or none carry one
        raise CalibrationInputError("the dev split's verdicts carry no confidence", field="confidence")
    source_correct = (source.y_true == source.y_pred).astype(float)
    calibrator = fit_calibrator(source_correct, source_confidence, seed=seed)
    band = review_threshold(source_correct, calibrator.predict(source_confidence),
                            target_precision=target_precision)
    fields = dict(ece=expected_calibration_error(correct, confidence), brier=brier_score(correct, confidence),
                  reliability=reliability_bins(correct, confidence), calibrator=calibrator,
                  review_threshold=band.threshold, coverage=band.coverage, review_precision=band.precision)
    if fit_on is not None:  # the band as it does on the test cases, not on the dev cases it was fitted on
        fields.update(coverage=band_on(matched, calibrator, band.threshold)["coverage"],
                      review_precision=band_on(matched, calibrator, band.threshold)["review_precision"])
    return fields
