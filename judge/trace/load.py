"""Stream a native JSONL trace: validate every line and redact it before anyone downstream sees it.

A trace can hold millions of events, so events are yielded one at a time; what is kept is what the
validation needs (seen ids, issued call ids), never the events themselves.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from judge.errors import TraceError
from judge.model import EVENT_KINDS, Event, RunHeader, ToolCallEvent, ToolResultEvent
from judge.trace.redact import Redactor, line_needs_redaction, redact_event_dict

_EVENT = TypeAdapter(Event)
# The core validator behind `_EVENT.validate_json` (same defaults), without the per-call wrapper.
_VALIDATE_JSON = _EVENT.validator.validate_json


def _pydantic_message(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"] if str(p) not in EVENT_KINDS]
    field = ".".join(loc) or "(line)"
    if err["type"] == "extra_forbidden":
        return field, "unknown field"
    if err["type"] == "missing":
        return field, "required field is missing"
    return field, err["msg"]


class TraceReader:
    """Iterate the events of one trace; `header` is read (and checked) on construction.

    `lines` may be a path or an iterable of JSONL strings / already-parsed dicts (the HTTP service).
    """

    def __init__(self, source: str | Path | Iterable[Any], *, name: str | None = None,
                 expected_scenario: str | None = None) -> None:
        self.redactor = Redactor()
        self.events_read = 0
        self.last_turn = 0
        if isinstance(source, (str, Path)):
            self.name = name or str(source)
            self._lines: Iterator[tuple[int, Any]] = enumerate(_read_lines(Path(source)), start=1)
        else:
            self.name = name or "trace"
            self._lines = enumerate(source, start=1)
        self.header = self._read_header(expected_scenario)

    @property
    def redactions(self) -> dict[str, int]:
        return dict(sorted(self.redactor.counts.items()))

    def _error(self, line: int, field: str | None, message: str) -> TraceError:
        return TraceError(message, file=self.name, line=line, field=field)

    def _read_header(self, expected_scenario: str | None) -> RunHeader:
        for lineno, raw in self._lines:
            record = self._parse(lineno, raw)
            if record is None:
                continue
            if record.get("kind") != "run":
                raise self._error(lineno, "kind", "the first line must be the run header "
                                  '({"kind": "run", "run_id": ..., "scenario": ...})')
            try:
                header = RunHeader.model_validate(record)
            except ValidationError as exc:
                field, message = _pydantic_message(exc)
                raise self._error(lineno, field, message) from None
            if expected_scenario is not None and header.scenario != expected_scenario:
                raise self._error(lineno, "scenario", f"trace is for scenario {header.scenario!r}, "
                                  f"not {expected_scenario!r}")
            return header
        raise TraceError("trace is empty: expected a run header and events", file=self.name)

    def _parse(self, lineno: int, raw: Any) -> dict[str, Any] | None:
        if isinstance(raw, dict):
            return raw
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise self._error(lineno, None, "not UTF-8 text") from None
        if not raw.strip():
            return None
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise self._error(lineno, None, f"not a JSON object: {exc.msg} at column {exc.colno}") from None
        if not isinstance(record, dict):
            raise self._error(lineno, None, "not a JSON object")
        return record

    def __iter__(self) -> Iterator[Event]:
        seen_ids: set[str] = set()
        calls: dict[str, str] = {}
        last_turn = -1
        validate_json, needs_redaction = _VALIDATE_JSON, line_needs_redaction
        # The per-line work of `_event` and `_check_call_ids`, inlined for the common case: a text
        # line with nothing to redact goes to pydantic's JSON parser straight (a blank or invalid
        # line fails there and takes `_event`, which skips it or names the problem).
        for lineno, raw in self._lines:
            event = None
            if type(raw) is str and not needs_redaction(raw):
                try:
                    event = validate_json(raw)
                except ValidationError:
                    pass
            if event is None:
                event = self._event(lineno, raw)
                if event is None:
                    continue
            event_id = event.id
            if event_id in seen_ids:
                raise self._error(lineno, "id", f"duplicate event id {event_id!r}")
            seen_ids.add(event_id)
            turn = event.turn
            if turn < last_turn:
                raise self._error(lineno, "turn", f"turn goes backwards ({turn} after {last_turn})")
            last_turn = turn
            kind = event.kind
            if kind == "tool-call" or kind == "tool-result":
                self._check_call_ids(lineno, event, calls)
            self.events_read += 1
            self.last_turn = turn
            yield event

    def _event(self, lineno: int, raw: Any) -> Event | None:
        redactor = self.redactor
        if isinstance(raw, str) and raw.strip() and not redactor.line_needs_redaction(raw):
            # Fast path: nothing to redact, let pydantic parse the JSON itself.
            try:
                return _EVENT.validate_json(raw)
            except ValidationError:
                pass  # fall through for a precise message
        record = self._parse(lineno, raw)
        if record is None:
            return None
        kind = record.get("kind")
        if kind == "run":
            raise self._error(lineno, "kind", "a second run header inside the trace")
        if kind not in EVENT_KINDS:
            raise self._error(lineno, "kind", f"unknown event kind {kind!r} (expected one of "
                              f"{', '.join(EVENT_KINDS)})")
        try:
            return _EVENT.validate_python(redact_event_dict(dict(record), redactor))
        except ValidationError as exc:
            field, message = _pydantic_message(exc)
            raise self._error(lineno, field, message) from None

    def _check_call_ids(self, lineno: int, event: Event, calls: dict[str, str]) -> None:
        if isinstance(event, ToolCallEvent):
            if event.call_id in calls:
                raise self._error(lineno, "call_id", f"call id {event.call_id!r} issued twice")
            calls[event.call_id] = event.tool
        elif isinstance(event, ToolResultEvent):
            tool = calls.get(event.call_id)
            if tool is None:
                raise self._error(lineno, "call_id", f"tool result for call id {event.call_id!r}, "
                                  "which no earlier tool-call issued")
            if event.tool is not None and event.tool != tool:
                raise self._error(lineno, "tool", f"result names tool {event.tool!r} but call "
                                  f"{event.call_id!r} was {tool!r}")


def _read_lines(path: Path) -> Iterator[str]:
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise TraceError(f"cannot read: {exc.strerror}", file=str(path)) from None
    with handle:
        head = handle.read(8192)
        if b"\x00" in head:
            raise TraceError("binary file, expected JSONL text", file=str(path))
        handle.seek(0)
        for lineno, raw in enumerate(handle, start=1):
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError:
                raise TraceError("not UTF-8 text", file=str(path), line=lineno) from None


def read_trace(source: str | Path, *, expected_scenario: str | None = None) -> tuple[RunHeader, list[Event], dict[str, int]]:
    """Load a whole trace into memory (small traces, tests, the judge's slices)."""
    reader = TraceReader(source, expected_scenario=expected_scenario)
    events = list(reader)
    return reader.header, events, reader.redactions
