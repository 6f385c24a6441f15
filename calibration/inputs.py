"""Label and verdict records, and the readers of their JSONL files.

A label is one annotator's categorical judgement of one case; a verdict is one judge's. Both carry
optional ledger details (`key`, `evidence_event`); other fields (scenario, trace, rationale, ...) are
ignored, so the labels of `labels/` and the plain pairs of any other labelled set read the same way.
Labels are appended, never rewritten: when an annotator labels a case twice, the later line wins.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterator, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from calibration.errors import CalibrationInputError

Fingerprint = dict[str, Any] | str


def _as_category(value: Any) -> Any:
    """Categorical values may be written as strings, numbers or booleans; compare them as text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return value


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    _file: str | None = PrivateAttr(default=None)
    _line: int | None = PrivateAttr(default=None)

    case: str = Field(min_length=1)
    key: str | None = None
    evidence_event: str | None = None

    def where(self) -> dict[str, Any]:
        """The file and line this record was read from (empty when built in memory)."""
        return {"file": self._file, "line": self._line}


class LabelRecord(_Record):
    """One annotator's label of one case."""

    label: str = Field(min_length=1)
    annotator: str = Field(min_length=1)

    _category = field_validator("label", mode="before")(_as_category)


class VerdictRecord(_Record):
    """One judge's verdict on one case. `confidence` is the judge's probability that its verdict is
    right; judges that give none (hard verdicts only) leave it out."""

    model_config = ConfigDict(extra="ignore", frozen=True, allow_inf_nan=False)

    verdict: str = Field(min_length=1)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    judge: Fingerprint

    _category = field_validator("verdict", mode="before")(_as_category)


RecordT = TypeVar("RecordT", LabelRecord, VerdictRecord)


def _jsonl_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
        if not files:
            raise CalibrationInputError("no *.jsonl files in this folder", file=str(path))
        return files
    if path.is_file():
        return [path]
    raise CalibrationInputError("no such file or folder", file=str(path))


def _parse_lines(file: Path, model: type[RecordT]) -> Iterator[RecordT]:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationInputError(f"cannot read: {exc}", file=str(file)) from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CalibrationInputError(f"not valid JSON ({exc.msg})", file=str(file),
                                        line=number) from exc
        if not isinstance(data, dict):
            raise CalibrationInputError("expected a JSON object", file=str(file), line=number)
        try:
            record = model.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or None
            raise CalibrationInputError(first["msg"], file=str(file), line=number,
                                        field=field) from exc
        record._file, record._line = str(file), number
        yield record


def _read(path: str | Path, model: type[RecordT], what: str) -> list[RecordT]:
    path = Path(path)
    records = [record for file in _jsonl_files(path) for record in _parse_lines(file, model)]
    if not records:
        raise CalibrationInputError(f"no {what} records", file=str(path))
    return records


def read_labels(path: str | Path) -> list[LabelRecord]:
    """Read label records from a JSONL file, or from every ``*.jsonl`` under a folder (sorted)."""
    return _read(path, LabelRecord, "label")


def read_verdicts(path: str | Path) -> list[VerdictRecord]:
    """Read verdict records from a JSONL file or folder; a case may have one verdict only."""
    verdicts = _read(path, VerdictRecord, "verdict")
    check_unique_cases(verdicts)
    return verdicts


def check_unique_cases(verdicts: list[VerdictRecord]) -> None:
    """A verdict set holds one verdict per case; a second one is an error naming both lines."""
    seen: dict[str, VerdictRecord] = {}
    for verdict in verdicts:
        if verdict.case in seen:
            first = seen[verdict.case].where()
            at = f" (first at {first['file']}:{first['line']})" if first["file"] else ""
            raise CalibrationInputError(f"a second verdict for case {verdict.case!r}{at}",
                                        field="case", **verdict.where())
        seen[verdict.case] = verdict


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces: equal values give equal text, so hashes and comparisons are stable."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def labels_sha256(labels: list[LabelRecord]) -> str:
    """sha256 of the label set: every record's (case, label, annotator, key, evidence_event) as
    canonical JSON, sorted, one per line. Other fields and the order of lines do not count."""
    lines = sorted(canonical_json(record.model_dump(include={"case", "label", "annotator", "key",
                                                             "evidence_event"}))
                   for record in labels)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
