"""The reviewer's answers: a labels JSONL that is appended to, never rewritten.

Each answer is one line in the label format of labels/ (DESIGN.md, "Labels"), so `judge calibrate
--labels FILE` reads it: case (`scenario/run_id/after_turn/key`), scenario, trace (relative to the
labels file's folder where possible), after_turn, key, label, evidence_event, annotator, note.
A second answer on a case is a new line; when the labels of a case differ (same annotator or not),
the case is in conflict and the page says so. Lines this page cannot read (another tool's, a hand
edit) are left alone.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judge.model.jsonl import dumps_line, split_lines
from judge.model.limits import read_capped

LABELS = ("violated", "upheld", "not-exercised")


class Answer(BaseModel):
    """What the review page posts for one case."""

    model_config = ConfigDict(extra="forbid")

    case: str = Field(min_length=1, max_length=1000)
    label: Literal["violated", "upheld", "not-exercised"]
    evidence_event: str | None = Field(default=None, max_length=200)
    annotator: str = Field(min_length=1, max_length=100)
    note: str | None = Field(default=None, max_length=4000)

    @field_validator("annotator")
    @classmethod
    def _annotator(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("the annotator needs a name")
        return value

    @field_validator("note", "evidence_event")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None


class LabelStore:
    """One labels JSONL file; appends are serialised and each reaches the disk before it returns."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, row: dict[str, Any]) -> None:
        line = dumps_line(row) + "\n"  # U+2028, U+2029 and U+0085 escaped: one line for every reader
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+b") as fh:
                fh.seek(0, os.SEEK_END)
                if fh.tell() > 0:
                    fh.seek(-1, os.SEEK_END)
                    if fh.read(1) != b"\n":  # a hand-edited file without a final newline
                        line = "\n" + line
                fh.write(line.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())

    def rows(self) -> list[dict[str, Any]]:
        try:
            text = read_capped(self.path).decode("utf-8", "replace")
        except FileNotFoundError:
            return []
        except (OSError, ValueError):
            return []  # a labels file this page cannot read: the page shows no labels, writes nothing over it
        out = []
        for _, line in split_lines(text):  # "\n" only: JSON may hold U+2028 raw inside a string
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(row, dict) and isinstance(row.get("case"), str):
                out.append(row)
        return out

    def by_case(self) -> dict[str, list[dict[str, Any]]]:
        grouped: dict[str, list[dict[str, Any]]] = {}
        for row in self.rows():
            grouped.setdefault(row["case"], []).append(row)
        return grouped


def in_conflict(rows: list[dict[str, Any]]) -> bool:
    """Labels of one case that differ (a violated label's evidence event counts too)."""
    answers = {(r.get("label"), r.get("evidence_event") if r.get("label") == "violated" else None)
               for r in rows}
    return len(answers) > 1


def label_row(answer: Answer, *, scenario: str, after_turn: int, key: str, trace: str | None) -> dict[str, Any]:
    return {"case": answer.case, "scenario": scenario, "trace": trace, "after_turn": after_turn,
            "key": key, "label": answer.label,
            "evidence_event": answer.evidence_event if answer.label == "violated" else None,
            "annotator": answer.annotator, "note": answer.note}
