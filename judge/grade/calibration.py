"""Glue between the grader and the `calibration` package: find the calibration record of a judge
for its fingerprint and the label set, say what is stale, and put the calibrated confidence and
review marks into a grade report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.model import JudgeFingerprint, as_fingerprint


def package_records_dir() -> Path:
    """The built-in records: package data of the installed `calibration` package."""
    import calibration

    return Path(calibration.__file__).resolve().parent / "records"


def records_dir(project_root: Path | None = None) -> Path:
    """Where records are *read*: the user's calibration/records beside their pyproject.toml, else
    the built-in records."""
    if project_root is not None and (project_root / "calibration" / "records").is_dir():
        return project_root / "calibration" / "records"
    return package_records_dir()


def output_records_dir(project_root: Path | None = None) -> Path:
    """Where `judge calibrate` *writes* by default: the project's calibration/records (created when
    missing), else calibration/records under the working directory; never the installed package."""
    return (project_root or Path.cwd()) / "calibration" / "records"


def refuse_package_output(out: Path, project_root: Path | None = None) -> None:
    """A UsageError for an output folder inside the installed package's records (a pip install's
    site-packages); a source checkout that holds the package (this repository) may write its own."""
    from judge.errors import UsageError

    package = package_records_dir()
    inside = Path(out).resolve().is_relative_to(package)
    checkout = project_root is not None and package.is_relative_to(Path(project_root).resolve())
    if inside and not checkout:
        raise UsageError(f"refusing to write calibration records into the installed package ({package}); "
                         "records belong to your project: run from it (calibration/records beside its "
                         "pyproject.toml) or give --out DIR", file=str(out), field="--out")


def labels_dir(records: Path) -> Path | None:
    """The label set the records in `records` were measured on: `labels/` beside the
    `calibration/records/` folder (a project's own, or this repository's for the built-in records);
    None when there is none (an installed package ships records, not labels)."""
    folder = records.parent.parent / "labels"
    return folder if folder.is_dir() and any(folder.glob("*.jsonl")) else None


def labels_sha(labels: Path) -> str:
    from calibration import labels_sha256, read_labels

    return labels_sha256(read_labels(labels))


@dataclass
class CalibrationState:
    """The record made for exactly this fingerprint and label set, or why there is none."""

    record: Any = None
    path: Path | None = None
    stale_reasons: list[str] = field(default_factory=list)


def calibration_state(fingerprint: JudgeFingerprint | dict[str, Any], directory: Path, name: str,
                      labels: Path | None = None) -> CalibrationState:
    """The current record of judge `name` (matching its fingerprint, judge.model.JudgeFingerprint,
    and, when `labels` exists, the label set's sha256), else the reasons its calibration is stale.
    Records are matched on the fingerprint's JSON, exactly the fields the judge's backend sets."""
    # calibration.lookup reads the records' heads: a judge with no record of its own (an LLM judge
    # beside the shipped `local` record) never imports numpy and the record models.
    from calibration.lookup import find_record_path, read_head, stale_reasons

    fingerprint = as_fingerprint(fingerprint, judge=name).dump()
    sha = labels_sha(labels) if labels is not None and labels.exists() else None
    found = find_record_path(directory, fingerprint, sha)
    if found is not None:
        from calibration.store import load_record

        record = load_record(found)
        return CalibrationState(record=record, path=directory / f"{record.name}.json")
    path = directory / f"{name}.json"
    if not path.exists():
        return CalibrationState(stale_reasons=[f"no calibration record for judge {name!r} in {directory}"])
    return CalibrationState(stale_reasons=stale_reasons(read_head(path), fingerprint, sha)
                            or ["no record matches this fingerprint"])


def check_calibration(fingerprint: JudgeFingerprint | dict[str, Any], directory: Path, name: str,
                      labels: Path | None = None) -> list[str]:
    """Reasons the calibration of judge `name` is stale; empty when a record matches."""
    return calibration_state(fingerprint, directory, name, labels).stale_reasons


def apply_record(run: Any, record: Any) -> None:
    """Calibrated confidence beside the raw one on every finding of a run that has a confidence, and
    `needs_review` below the record's review threshold on the findings the judge decided (a
    deterministic verdict the judge agreed with needs no review; a disagreement has it already)."""
    calibrator = record.calibrator
    threshold = record.review_threshold
    for cp in run.checkpoints:
        for f in cp.findings:
            if f.confidence is None or calibrator is None:
                continue
            f.confidence_calibrated = round(float(calibrator.predict([f.confidence])[0]), 4)
            if f.source == "judge" and (threshold is None or f.confidence_calibrated < threshold):
                f.needs_review = True

