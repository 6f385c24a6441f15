"""Calibration records on disk: write NAME.json + NAME.png, load, find by key, and say why a record
no longer fits a judge (its fingerprint changed) or a label set (its sha256 changed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from calibration.errors import CalibrationInputError
from calibration.files import replace_atomically
from calibration.inputs import Fingerprint, canonical_json, read_text
from calibration.plot import reliability_diagram
from calibration.record import CalibrationRecord, check_name


def write_record(record: CalibrationRecord, out_dir: str | Path, name: str) -> tuple[Path, Path]:
    """Write `out_dir/NAME.json` (the record) and `out_dir/NAME.png` (its reliability diagram),
    each to a temporary file in the folder first, renamed into place: a crash or a full disk never
    leaves half a record, and the previous one survives."""
    check_name(name)
    out = Path(out_dir)
    json_path, png_path = out / f"{name}.json", out / f"{name}.png"
    try:
        out.mkdir(parents=True, exist_ok=True)
        replace_atomically(json_path, (record.model_dump_json(indent=2) + "\n").encode("utf-8"))
        reliability_diagram(record.reliability, png_path, title=f"{name} (n={record.n})",
                            ece=record.ece)
    except OSError as exc:
        raise CalibrationInputError(f"cannot write: {exc.strerror}",
                                    file=exc.filename or str(out)) from exc
    return json_path, png_path


def load_record(path: str | Path) -> CalibrationRecord:
    """Read one record; a file that is not a valid record is an error naming the file and field."""
    path = Path(path)
    text = read_text(path)  # within the size limit of every reader
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalibrationInputError(f"not valid JSON ({exc.msg})", file=str(path),
                                    line=exc.lineno) from None
    except (ValueError, RecursionError) as exc:  # an over-long integer, deep nesting
        raise CalibrationInputError(f"not a calibration record: {type(exc).__name__}", file=str(path)) from None
    try:
        return CalibrationRecord.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise CalibrationInputError(f"not a calibration record: {first['msg']}", file=str(path),
                                    field=".".join(str(p) for p in first["loc"]) or None) from exc


def find_record(directory: str | Path, fingerprint: Fingerprint,
                labels_sha256: str | None = None) -> CalibrationRecord | None:
    """The newest record in `directory` (its *.json files) for this fingerprint and, when given,
    this label set; None when there is none (the calibration is then stale or missing)."""
    directory = Path(directory)
    if not directory.is_dir():
        return None
    wanted = canonical_json(fingerprint)
    matching = [record for record in map(load_record, sorted(directory.glob("*.json")))
                if canonical_json(record.fingerprint) == wanted
                and (labels_sha256 is None or record.labels_sha256 == labels_sha256)]
    return max(matching, key=lambda record: record.created_at, default=None)


def stale_reasons(record: CalibrationRecord, fingerprint: Fingerprint,
                  labels_sha256: str | None = None) -> list[str]:
    """What changed since `record` was made, one sentence each (empty: the record still holds).

    Fingerprint fields are named by what they are: prompt hash, prompt, model, backend, code, params.
    """
    reasons = _fingerprint_changes(record.fingerprint, fingerprint)
    if labels_sha256 is not None and labels_sha256 != record.labels_sha256:
        reasons.append(f"labels changed (label set sha256 {_short(record.labels_sha256)} -> "
                       f"{_short(labels_sha256)})")
    return reasons


def _fingerprint_changes(old: Fingerprint, new: Fingerprint) -> list[str]:
    if canonical_json(old) == canonical_json(new):
        return []
    if not isinstance(old, dict) or not isinstance(new, dict):
        return [f"judge fingerprint changed ({_short(old)} -> {_short(new)})"]
    before, after = _flatten(old), _flatten(new)
    return [f"{_aspect(key)} changed ({key}: {_short(before.get(key, '(absent)'))} -> "
            f"{_short(after.get(key, '(absent)'))})"
            for key in sorted(before.keys() | after.keys())
            if canonical_json(before.get(key)) != canonical_json(after.get(key))
            or (key in before) != (key in after)]


def _flatten(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, dict) and item:
            flat |= _flatten(item, f"{prefix}{key}.")
        else:
            flat[f"{prefix}{key}"] = item
    return flat


def _aspect(key: str) -> str:
    lowered = key.lower()
    if "prompt" in lowered and any(word in lowered for word in ("sha", "hash", "digest")):
        return "prompt hash"
    for aspect in ("prompt", "model", "backend", "code"):
        if aspect in lowered:
            return aspect
    return "params"


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else canonical_json(value)
    return text[:12] + "..." if len(text) > 16 else text
