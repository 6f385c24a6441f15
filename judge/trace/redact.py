"""Redact secrets and personal data before anything downstream (judge, cache, report) sees them.

What is found, and by what, is judge.trace.detect (text), judge.trace.names (secret-named fields)
and judge.trace.numbers (cards, SSNs, phones, IBANs: python-stdnum and phonenumbers decide). This
module applies them to every string of an event or run header: values, dict keys, tool names, refs,
`to`, ids (an id maps to a stable `[REDACTED:kind#n]`, so a call and its result still pair up), and
JSON held inside a string (parsed, redacted, written back). A secret-named field loses its value
whatever its type; an integer that is a card number becomes `[REDACTED:card_number]`. Only counts
by kind are recorded, never the values.

`line_needs_redaction` is the cheap test the trace reader runs on every raw JSONL line first: **a line
it clears needs no redaction** (it may say yes when nothing needs redacting: the slow path then
parses, redacts and finds nothing). tests/test_properties.py holds it to that.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from judge.model.limits import MAX_DEPTH, DepthError
from judge.trace.detect import spans
from judge.trace.hidden import HiddenValues
from judge.trace.names import is_pin_name, is_secret_name
from judge.trace.numbers import luhn_ok
from judge.trace.precheck import SURROGATE, line_needs_redaction, lines_needing_redaction

__all__ = ["Redactor", "line_needs_redaction", "lines_needing_redaction", "luhn_ok", "redact_event_dict",
           "redact_header_dict"]

class Redactor:
    """Replaces sensitive substrings with `[REDACTED:kind]` and counts them by kind. `hidden`: a
    scenario's no-leak values, redacted as `no_leak` (judge.trace.hidden)."""

    def __init__(self, hidden: Iterable[str] = ()) -> None:
        self.counts: Counter[str] = Counter()
        self._ids: dict[str, str] = {}
        values = HiddenValues(hidden)
        self.hidden: HiddenValues | None = values if values else None

    def sharing_ids(self) -> Redactor:
        """A redactor that counts apart but gives every id this one numbered the same number (to
        read lines again as they were first redacted)."""
        other = Redactor()
        other._ids = self._ids
        other.hidden = self.hidden
        return other

    def line_needs_redaction(self, line: str) -> bool:
        if self.hidden is not None and (self.hidden.in_raw(line) or not line.isascii()):
            return True
        return line_needs_redaction(line)

    def text(self, value: str, depth: int = 0) -> str:
        # A long string goes straight to the detectors, whose own gates cost what the precheck
        # would (the line it came from passed the precheck already).
        hidden = self.hidden
        if len(value) < 4096 and not line_needs_redaction(value) and (
                hidden is None or (value.isascii() and not hidden.in_text(value))):
            return value
        if not value.isascii() and SURROGATE(value) is not None:  # a lone surrogate: no UTF-8 holds it
            value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        nested = self._nested_json(value, depth)
        if nested is not None:
            return nested
        found = spans(value, hidden=self.hidden)
        if not found:
            return value
        out, pos = [], 0
        for start, end, kind in found:
            self.counts[kind] += 1
            out.append(value[pos:start])
            out.append(f"[REDACTED:{kind}]")
            pos = end
        out.append(value[pos:])
        return "".join(out)

    def _nested_json(self, value: str, depth: int) -> str | None:
        """A string that is JSON (an argument holding `{"password": ...}`): redacted as data."""
        text = value.strip()
        if text[:1] not in ("{", "[") or text[-1:] not in ("}", "]"):
            return None
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None
        before = sum(self.counts.values())
        try:
            redacted = self.value(data, depth + 1)
        except DepthError:
            return None
        if sum(self.counts.values()) == before:
            return value
        return json.dumps(redacted, ensure_ascii=False)

    def ident(self, value: str) -> str:
        """An id: unchanged, or (when it holds something to redact) a stable `[REDACTED:kind#n]`."""
        if value in self._ids:
            return self._ids[value]
        redacted = self.text(value)
        if redacted != value:
            redacted = self._ids[value] = f"{redacted}#{len(self._ids) + 1}"
        return redacted

    def value(self, value: Any, depth: int = 0) -> Any:
        """Redact every string inside a JSON-like value (dict keys too; secret-named fields whole)."""
        if isinstance(value, str):
            return self.text(value, depth)
        if depth > MAX_DEPTH:
            raise DepthError(depth)
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if isinstance(k, str) and _is_secret_field(k, v):
                    self.counts["secret_field"] += 1
                    out[self.text(k)] = "[REDACTED:secret_field]"
                else:
                    out[self.text(k) if isinstance(k, str) else k] = self.value(v, depth + 1)
            return out
        if isinstance(value, (list, tuple)):
            return [self.value(v, depth + 1) for v in value]
        if type(value) is int and 13 <= len(str(abs(value))) <= 19 and luhn_ok(str(abs(value))):
            self.counts["card_number"] += 1
            return "[REDACTED:card_number]"
        return value


def _is_secret_field(key: str, value: Any) -> bool:
    if value is None or isinstance(value, bool) or value == "" or value == [] or value == {}:
        return False
    return is_secret_name(key) or (is_pin_name(key) and _pin_like(value))


def _pin_like(value: Any) -> bool:
    """4-8 digits, as a string or an integer: what a PIN field holds when it holds a PIN."""
    text = str(value) if type(value) is int and value >= 0 else value
    return isinstance(text, str) and 4 <= len(text) <= 8 and text.isascii() and text.isdigit()


# Fields that pair events up or order them: redacted as ids (stable), never as text.
ID_FIELDS = ("id", "call_id", "span_id", "parent_span_id")
# Fields whose values are fixed vocabularies or structure.
STRUCTURAL = ("kind", "turn", "status", "reason", "phase")


def redact_event_dict(record: dict[str, Any], redactor: Redactor) -> dict[str, Any]:
    """Every field of an event but its kind, turn and vocabularies: ids stably, the rest as values."""
    for name, value in record.items():
        if name in STRUCTURAL:
            continue
        try:
            if name in ID_FIELDS and isinstance(value, str):
                record[name] = redactor.ident(value)
            else:
                record[name] = redactor.value(value)
        except DepthError as exc:
            exc.field = name
            raise
    return record


# The run header's fields that must match the scenario file stay as they are.
HEADER_KEPT = ("kind", "scenario", "session")


def redact_header_dict(record: dict[str, Any], redactor: Redactor) -> dict[str, Any]:
    for name, value in record.items():
        if name in HEADER_KEPT:
            continue
        try:
            record[name] = redactor.ident(value) if name == "run_id" and isinstance(value, str) \
                else redactor.value(value)
        except DepthError as exc:
            exc.field = name
            raise
    return record
