"""Label and verdict records, and the readers of their JSONL files.

A label is one annotator's categorical judgement of one case; a verdict is one judge's. Both carry
optional ledger details (`key`, `evidence_event`). A label file is strict: the fields of the label
format (DESIGN.md, "Labels": case, label, annotator, key, evidence_event, scenario, trace,
after_turn, note, split) and no others, each of its type; a *ledger label* (one that names its
scenario, trace or after_turn) says `violated`, `upheld` or `not-exercised`, while a plain pair
(`case`, `label`, `annotator`) of any other labelled set may hold any category. A verdict file may
carry more fields (a judge's rationale), which are ignored. Labels are appended, never rewritten:
when an annotator labels a case twice, the later line wins.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from calibration.errors import CalibrationInputError

Fingerprint = dict[str, Any] | str


class _Record(BaseModel):
    # Categorical labels may be written as numbers (LLMBar's 1 and 2): they are compared as text.
    model_config = ConfigDict(extra="ignore", frozen=True, coerce_numbers_to_str=True)
    _file: str | None = PrivateAttr(default=None)
    _line: int | None = PrivateAttr(default=None)

    case: str = Field(min_length=1)
    key: str | None = None
    evidence_event: str | None = None

    def where(self) -> dict[str, Any]:
        """The file and line this record was read from (empty when built in memory)."""
        return {"file": self._file, "line": self._line}


LEDGER_LABELS = ("violated", "upheld", "not-exercised")


class LabelRecord(_Record):
    """One annotator's label of one case (a line of a labels file; unknown fields are errors)."""

    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)

    label: str = Field(min_length=1)
    annotator: str = Field(min_length=1)
    scenario: str | None = None
    trace: str | None = None
    after_turn: int | None = Field(default=None, ge=0)
    note: str | None = None
    split: Literal["dev", "test"] | None = None

    @model_validator(mode="after")
    def _ledger_verdict(self) -> LabelRecord:
        ledger = self.scenario is not None or self.trace is not None or self.after_turn is not None
        if ledger and self.label not in LEDGER_LABELS:
            raise ValueError(f"a ledger label is one of {', '.join(LEDGER_LABELS)} (got {self.label!r})")
        return self


class VerdictRecord(_Record):
    """One judge's verdict on one case. `confidence` is the judge's probability that its verdict is
    right; judges that give none (hard verdicts only) leave it out."""

    model_config = ConfigDict(extra="ignore", frozen=True, coerce_numbers_to_str=True,
                              allow_inf_nan=False)

    verdict: str = Field(min_length=1)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    judge: Fingerprint


RecordT = TypeVar("RecordT", LabelRecord, VerdictRecord)


def _jsonl_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.glob("*.jsonl") if p.is_file())
        if not files:
            raise CalibrationInputError("no *.jsonl files in this folder", file=str(path))
        return files
    if path.is_file():
        return [path]
    raise CalibrationInputError("no such file or folder", file=str(path))


MAX_FILE_BYTES = 64 * 1024 * 1024  # a labels or verdicts file is read whole: /dev/zero is refused


def read_text(file: Path) -> str:
    """A JSONL or JSON file read whole, within MAX_FILE_BYTES; not binary, UTF-8."""
    try:
        with file.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise CalibrationInputError(f"cannot read: {exc.strerror or exc}", file=str(file)) from None
    if b"\x00" in data[:8192]:
        raise CalibrationInputError("binary file, expected JSONL text", file=str(file))
    if len(data) > MAX_FILE_BYTES:
        raise CalibrationInputError(f"larger than the limit of {MAX_FILE_BYTES >> 20} MB", file=str(file))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CalibrationInputError(f"not UTF-8 text (byte {exc.start})", file=str(file)) from None


def _parse_lines(file: Path, model: type[RecordT]) -> Iterator[RecordT]:
    text = read_text(file)
    # Split on "\n" only: JSON may hold U+2028, U+2029 or U+0085 raw inside a string (a note), and
    # str.splitlines would cut the record there.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = model.model_validate_json(line)  # parses and validates in one pass
        except ValidationError as exc:
            raise _line_error(exc, file, number) from exc
        record._file, record._line = str(file), number
        yield record


def _line_error(exc: ValidationError, file: Path, number: int) -> CalibrationInputError:
    first = exc.errors()[0]
    if first["type"] == "json_invalid":
        return CalibrationInputError(f"not valid JSON ({first['ctx']['error']})", file=str(file),
                                     line=number)
    if first["type"] == "model_type":
        return CalibrationInputError("expected a JSON object", file=str(file), line=number)
    field = ".".join(str(part) for part in first["loc"]) or None
    message = "unknown field" if first["type"] == "extra_forbidden" else first["msg"].removeprefix("Value error, ")
    if field is None and first["type"] == "value_error":
        field = "label"
    return CalibrationInputError(message, file=str(file), line=number, field=field)


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
    """sha256 of the label set: the canonical JSON list of every record's
    [case, label, annotator, key, evidence_event], sorted. Other fields and line order do not count."""
    rows = [(r.case, r.label, r.annotator, r.key, r.evidence_event) for r in labels]
    # A total order with None (JSON null) before any string in the optional columns.
    rows.sort(key=lambda row: (row[0], row[1], row[2], row[3] is not None, row[3] or "",
                               row[4] is not None, row[4] or ""))
    return hashlib.sha256(canonical_json(rows).encode("utf-8")).hexdigest()
