"""Glue between the grader and the `calibration` package: find the calibration record of a judge,
say what is stale, and put the calibrated confidence and review marks into a grade report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def records_dir(project_root: Path | None = None) -> Path:
    """The user's calibration/records beside their pyproject.toml, else the built-in records."""
    if project_root is not None and (project_root / "calibration" / "records").is_dir():
        return project_root / "calibration" / "records"
    import calibration

    return Path(calibration.__file__).resolve().parent / "records"


def labels_sha(labels: Path) -> str:
    from calibration import labels_sha256, read_labels

    return labels_sha256(read_labels(labels))


def check_calibration(fingerprint: dict[str, Any], directory: Path, name: str,
                      labels: Path | None = None) -> list[str]:
    """Reasons the calibration of judge `name` is stale; empty when a record matches."""
    from calibration import find_record, load_record, stale_reasons

    sha = labels_sha(labels) if labels is not None and labels.exists() else None
    if find_record(directory, fingerprint, sha) is not None:
        return []
    path = directory / f"{name}.json"
    if not path.exists():
        return [f"no calibration record for judge {name!r} in {directory}"]
    return stale_reasons(load_record(path), fingerprint, sha) or ["no record matches this fingerprint"]


def current_record(fingerprint: dict[str, Any], directory: Path) -> Any:
    """The calibration record made for exactly this fingerprint, or None."""
    from calibration import find_record

    return find_record(directory, fingerprint)


def apply_record(run: Any, record: Any) -> None:
    """Calibrated confidence beside the raw one on every finding of a run that has a confidence, and
    `needs_review` below the record's review threshold."""
    calibrator = record.calibrator
    for cp in run.checkpoints:
        for f in cp.findings:
            if f.confidence is None or calibrator is None:
                continue
            f.confidence_calibrated = round(float(calibrator.predict([f.confidence])[0]), 4)
            threshold = record.review_threshold
            if threshold is None or f.confidence_calibrated < threshold:
                f.needs_review = True


def apply_calibration(report: Any, fingerprint: dict[str, Any], directory: Path, name: str) -> list[str]:
    """Calibrated confidence and needs_review on every judge finding; returns stale reasons."""
    record = current_record(fingerprint, directory)
    if record is None:
        return check_calibration(fingerprint, directory, name)
    for run in report.runs:
        apply_record(run, record)
    return []
