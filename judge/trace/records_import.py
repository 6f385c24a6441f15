"""`judge import records FILE -o DIR`: agent interaction records -> `DIR/<id>.jsonl` each, and their
labels -> a labels file the calibration commands read (judge.trace.agent_records has the mapping).

The labels file holds one plain pair per labelled record (`case` = the run id, `label` =
`violated` for an unsafe record, `upheld` for a safe one, `annotator`, and the record's rationale as
`note`): `judge calibrate --labels DIR/labels.jsonl --verdicts ...`, `judge estimate` and
`judge compare` read it as any labelled set. It is appended to, never rewritten (an annotator's
later line for a case wins), and written only when the whole import succeeded.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError
from judge.model.jsonl import dumps_line
from judge.model.limits import MAX_DEPTH, DepthError, check_depth, depth_message, read_capped
from judge.trace.agent_records import record_trace
from judge.trace.build import ImportSummary, atomic_import, check_text_file, refuse_input, safe_name, write_trace

LABELS = {1: "violated", 0: "upheld"}
"""A record's label (1 unsafe, 0 safe) as a ledger verdict of the run."""


def read_records(path: Path) -> Iterator[tuple[str, Any]]:
    """(where, record) of every record in a JSON list, a single JSON record, `{"records": [...]}`
    or a JSONL file (a record per line); read within the bounds every input file is held to."""
    file = str(path)
    try:
        text = read_capped(path).decode("utf-8")
    except OSError as exc:
        raise JudgeInputError(f"cannot read: {exc.strerror}", file=file) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise JudgeInputError(f"not agent interaction records: {exc}", file=file) from None
    try:
        doc = json.loads(text)
    except RecursionError:
        raise JudgeInputError(depth_message(), file=file) from None
    except json.JSONDecodeError:
        yield from _jsonl(text, file)
        return
    _bounded(doc, file, None)
    if isinstance(doc, dict) and isinstance(doc.get("records"), list):
        doc = doc["records"]
    if isinstance(doc, list):
        yield from ((f"[{i}]", record) for i, record in enumerate(doc))
    else:
        yield "", doc


def _bounded(value: Any, file: str, line: int | None) -> None:
    try:
        check_depth(value, MAX_DEPTH)
    except DepthError:
        raise JudgeInputError(depth_message(), file=file, line=line) from None


def _jsonl(text: str, file: str) -> Iterator[tuple[str, Any]]:
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise JudgeInputError(f"not JSON: {exc.msg} at column {exc.colno}", file=file, line=lineno) from None
        except RecursionError:
            raise JudgeInputError(depth_message(), file=file, line=lineno) from None
        _bounded(record, file, lineno)
        yield f"line {lineno}", record


def _append_labels(path: Path, rows: list[dict[str, Any]]) -> None:
    """Append label rows (one write of whole lines; the file is created when missing)."""
    if not rows:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(dumps_line(row, ensure_ascii=False) + "\n" for row in rows)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            if path.stat().st_size and not path.read_bytes().endswith(b"\n"):
                handle.write("\n")  # a last line without its newline stays a line of its own
            handle.write(text)
    except OSError as exc:
        raise JudgeInputError(f"cannot write: {exc.strerror}", file=str(path)) from None


def import_records(src: str | Path, out: str | Path, *, labels: str | Path | None = None,
                   annotator: str | None = None, scenario: str | None = None) -> ImportSummary:
    """Every record of `src` -> `out/<id>.jsonl`; the labels of labelled records appended to
    `labels` (default `out/labels.jsonl`). `scenario`: a scenario id for every header (default
    none: the traces are graded with --policy)."""
    src, out = Path(src), Path(out)
    if out.exists() and not out.is_dir():
        raise JudgeInputError("-o must be a folder", file=str(out))
    labels_path = Path(labels) if labels is not None else out / "labels.jsonl"
    refuse_input(labels_path, src)
    check_text_file(src)
    summary, rows = _traces(src, out, annotator or f"records:{src.stem}", scenario)
    _append_labels(labels_path, rows)  # after every trace is in place: a failed import leaves no labels
    if rows:
        summary.warnings.append(f"{len(rows)} label(s) appended to {labels_path}")
    return summary


@atomic_import
def _traces(src: Path, out: Path, annotator: str, scenario: str | None) -> tuple[ImportSummary, list[dict[str, Any]]]:
    summary = ImportSummary()
    rows: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for where, record in read_records(src):
        trace = record_trace(record, str(src), where)
        run_id = trace.header["run_id"]
        name = safe_name(run_id) + ".jsonl"
        if name in seen:
            raise JudgeInputError(f"records {seen[name] or 'the first'} and {where} would both be written to {name}",
                                  file=str(src), field=f"{where}.id".lstrip("."))
        seen[name] = where
        if scenario:
            trace.header["scenario"] = scenario
        target = out / name
        refuse_input(target, src)
        write_trace(target, trace.header, trace.events)
        summary.add(target, trace.events)
        if trace.label is not None:
            rows.append({"case": run_id, "label": LABELS[trace.label], "annotator": annotator,
                         **({"note": trace.note} if trace.note else {})})
    if not summary.runs:
        raise JudgeInputError("no records in this file", file=str(src))
    return summary, rows

