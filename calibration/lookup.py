"""Find a judge's calibration record, and say why a record no longer fits it, without importing the
statistics: the grader asks this of every judge it opens, and a whole record (calibration.record)
brings numpy and the calibrators with it (~0.3 CPU-s), which a judge with no matching record never
uses.

A record file's head (its name, fingerprint, label-set sha256 and creation time) is read from its
JSON; the one record that matches is then loaded whole by calibration.store.load_record. A file
that is not JSON, or whose head is not a record's, is an error naming the file, as a whole load is.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from calibration.errors import CalibrationInputError
from calibration.inputs import Fingerprint, canonical_json, read_text

M = TypeVar("M", bound=BaseModel)


class RecordHead(BaseModel):
    """The fields of a calibration record (calibration.record.CalibrationRecord) that find it. Not a
    format of its own: the rest of the record is ignored here and validated when the record is loaded."""

    model_config = ConfigDict(extra="ignore")

    name: str
    fingerprint: Fingerprint
    labels_sha256: str
    created_at: datetime


class Keyed(Protocol):
    """A record or its head: what `stale_reasons` compares."""

    fingerprint: Fingerprint
    labels_sha256: str


def record_json(path: Path) -> Any:
    """A record file's JSON, read within the size limit of every reader."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalibrationInputError(f"not valid JSON ({exc.msg})", file=str(path), line=exc.lineno) from None
    except (ValueError, RecursionError) as exc:  # an over-long integer, deep nesting
        raise CalibrationInputError(f"not a calibration record: {type(exc).__name__}", file=str(path)) from None


def not_a_record(exc: ValidationError, path: Path) -> CalibrationInputError:
    """The error of a record file that failed validation, naming it and the first field at fault."""
    first = exc.errors()[0]
    return CalibrationInputError(f"not a calibration record: {first['msg']}", file=str(path),
                                 field=".".join(str(p) for p in first["loc"]) or None)


def read_as(model: type[M], path: str | Path) -> M:
    """A record file read as `model` (the record, or its head); a file that is not one is an error
    naming the file and the first field at fault."""
    path = Path(path)
    try:
        return model.model_validate(record_json(path))
    except ValidationError as exc:
        raise not_a_record(exc, path) from exc


def read_head(path: str | Path) -> RecordHead:
    """The head of one record file; a file whose head is not a record's is an error naming it."""
    return read_as(RecordHead, path)


def find_record_path(directory: str | Path, fingerprint: Fingerprint,
                     labels_sha256: str | None = None) -> Path | None:
    """The file of the newest record in `directory` (its *.json files) for this fingerprint and, when
    given, this label set; None when there is none (the calibration is then stale or missing)."""
    directory = Path(directory)
    if not directory.is_dir():
        return None
    wanted = canonical_json(fingerprint)
    heads = [(path, read_head(path)) for path in sorted(directory.glob("*.json"))]
    matching = [(path, head) for path, head in heads if canonical_json(head.fingerprint) == wanted
                and (labels_sha256 is None or head.labels_sha256 == labels_sha256)]
    newest = max(matching, key=lambda pair: pair[1].created_at, default=None)
    return None if newest is None else newest[0]


def stale_reasons(record: Keyed, fingerprint: Fingerprint, labels_sha256: str | None = None) -> list[str]:
    """What changed since `record` (a record or its head) was made, one sentence each (empty: the
    record still holds).

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
