"""File-level entry points (what `judge calibrate|compare|estimate|agreement` call). No printing:
each reads JSONL label/verdict files or folders and returns a pydantic result model."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from calibration.bias import BiasGate
from calibration.compare import Agreement, Comparison, agreement, compare_judges
from calibration.errors import CalibrationInputError
from calibration.inputs import canonical_json, read_labels, read_verdicts
from calibration.prevalence import PrevalenceEstimate, estimate_prevalence
from calibration.record import CalibrationRecord, calibrate, with_bias_gate
from calibration.store import load_record, write_record


class CalibrateResult(BaseModel):
    """The record and where it was written (NAME.json and its reliability diagram NAME.png)."""

    model_config = ConfigDict(extra="forbid")
    record: CalibrationRecord
    json_path: str
    png_path: str


def calibrate_files(labels_path: str | Path, verdicts_path: str | Path, out_dir: str | Path,
                    name: str, *, target_precision: float = 0.95, floor: float = 0.80,
                    seed: int = 0, n_boot: int = 1000, positive: str = "violated", cv: int | None = None,
                    judge_fitted_on: Literal["dev", "all", "none"] | None = None,
                    judge_note: str | None = None) -> CalibrateResult:
    """Calibrate the judge of `verdicts_path` on `labels_path`; write out_dir/NAME.json and .png.

    The bias section of the record this one replaces is kept when it was measured for the same
    judge fingerprint and label set (the two gates may be measured in either order); otherwise the
    new record has none. When the labels declare splits, the count of reads of their test half and
    the time of the first are carried over from the record this one replaces (any fingerprint, the
    same label set): a test half read more than once is no longer quite held out, and the record
    says so."""
    record = calibrate(read_labels(labels_path), read_verdicts(verdicts_path), name=name,
                       target_precision=target_precision, floor=floor, seed=seed, n_boot=n_boot,
                       positive=positive, cv=cv, judge_fitted_on=judge_fitted_on,
                       judge_note=judge_note)
    path = Path(out_dir) / f"{name}.json"
    previous = _previous(path)
    kept = _current_bias(previous, record)
    if kept is not None:
        record = with_bias_gate(record, kept)
    record = _count_test_reads(previous, record)
    json_path, png_path = write_record(record, out_dir, name)
    return CalibrateResult(record=record, json_path=str(json_path), png_path=str(png_path))


def _previous(path: Path) -> CalibrationRecord | None:
    if not path.is_file():
        return None
    try:
        return load_record(path)
    except CalibrationInputError:
        return None  # not a record: it is replaced, as before


def _count_test_reads(previous: CalibrationRecord | None, record: CalibrationRecord) -> CalibrationRecord:
    held = record.held_out
    if held is None or held.figures != "test" or previous is None or previous.held_out is None:
        return record
    before = previous.held_out
    if previous.labels_sha256 != record.labels_sha256 or before.figures != "test" or not before.test_reads:
        return record
    held = held.model_copy(update=dict(test_reads=before.test_reads + 1,
                                       test_first_read_at=before.test_first_read_at or held.test_first_read_at))
    return record.model_copy(update=dict(held_out=held))


def _current_bias(previous: CalibrationRecord | None, record: CalibrationRecord) -> BiasGate | None:
    if previous is None:
        return None
    gate = previous.bias
    if gate is None or canonical_json(gate.fingerprint) != canonical_json(record.fingerprint):
        return None
    return gate if gate.labels_sha256 in (None, record.labels_sha256) else None


def add_bias_file(out_dir: str | Path, name: str, gate: BiasGate) -> CalibrateResult:
    """Add (or replace) the bias section of the record out_dir/NAME.json, which must exist and be of
    the gate's judge fingerprint and label set; `certified` then requires both gates."""
    path = Path(out_dir) / f"{name}.json"
    if not path.is_file():
        raise CalibrationInputError("no calibration record to add the bias gate to (calibrate the judge "
                                    "first)", file=str(path))
    record = with_bias_gate(load_record(path), gate)
    json_path, png_path = write_record(record, out_dir, name)
    return CalibrateResult(record=record, json_path=str(json_path), png_path=str(png_path))


def compare_files(labels_path: str | Path, verdicts_a: str | Path, verdicts_b: str | Path, *,
                  seed: int = 0, n_boot: int = 1000) -> Comparison:
    """Judge B against judge A on the same labels: McNemar, kappa difference, flipped cases."""
    return compare_judges(read_labels(labels_path), read_verdicts(verdicts_a),
                          read_verdicts(verdicts_b), seed=seed, n_boot=n_boot)


def estimate_files(labels_path: str | Path, verdicts_path: str | Path, unlabeled_path: str | Path,
                   *, seed: int = 0, n_boot: int = 1000,
                   positive: str = "violated") -> PrevalenceEstimate:
    """Corrected violation rate of the unlabelled verdicts, from the judge's labelled TPR/TNR."""
    return estimate_prevalence(read_labels(labels_path), read_verdicts(verdicts_path),
                               read_verdicts(unlabeled_path), seed=seed, n_boot=n_boot,
                               positive=positive)


def agreement_files(verdicts_a: str | Path, verdicts_b: str | Path) -> Agreement:
    """Self-consistency of two verdict sets on their shared cases."""
    return agreement(read_verdicts(verdicts_a), read_verdicts(verdicts_b))
