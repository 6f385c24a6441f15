"""Stream a native JSONL trace: validate every line and redact it before anyone downstream sees it.

A trace can hold millions of events, so events are yielded one at a time; what is kept is what the
validation needs (seen ids, issued call ids: judge.trace.ids, compactly), never the events.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from judge.errors import TraceError
from judge.model import EVENT_KINDS, Event, RunHeader, ToolCallEvent, ToolResultEvent
from judge.model.limits import MAX_LINE_BYTES, DepthError, depth_message
from judge.trace.ids import CallTable, IdSet
from judge.trace.precheck import CHUNK, lines_needing_redaction
from judge.trace.redact import Redactor, redact_event_dict, redact_header_dict

_EVENT = TypeAdapter(Event)
# The core validator behind `_EVENT.validate_json` (same defaults), without the per-call wrapper.
_VALIDATE_JSON = _EVENT.validator.validate_json


LONG_LINE = 1 << 16


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
                 expected_scenario: str | None = None,
                 raw_hook: Callable[[dict[str, Any]], None] | None = None) -> None:
        # raw_hook sees a record before redaction changes it (the no-leak rule needs the raw values)
        self.raw_hook = raw_hook
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
                # The header reaches reports (run id, agent, metadata): redacted like an event.
                record = redact_header_dict(dict(record), self.redactor)
            except DepthError as exc:
                raise self._error(lineno, exc.field, depth_message()) from None
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
        if not raw or raw.isspace():
            return None
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise self._error(lineno, None, f"not a JSON object: {exc.msg} at column {exc.colno}") from None
        except RecursionError:
            raise self._error(lineno, None, depth_message()) from None
        if not isinstance(record, dict):
            raise self._error(lineno, None, "not a JSON object")
        return record

    def __iter__(self) -> Iterator[Event]:
        seen_ids = IdSet()
        calls = CallTable()
        last_turn = -1
        validate_json = _VALIDATE_JSON
        # The per-line work of `_event` and `_check_call_ids`, inlined for the common case: a text
        # line with nothing to redact goes to pydantic's JSON parser straight (a blank or invalid
        # line fails there and takes `_event`, which skips it or names the problem). The precheck
        # runs on CHUNK lines at a time (judge.trace.precheck.lines_needing_redaction).
        for lineno, raw, checked in _prechecked(self._lines):
            event = None
            # pydantic's JSON parser refuses nesting past its recursion limit (200): such a line takes
            # the slow path, which names the field too deep. A long line goes to the slow path
            # straight: the detectors' own gates cost what the precheck would.
            fast = checked == 0
            if fast:
                try:
                    event = validate_json(raw)
                except ValidationError:
                    pass
            if event is None:
                event = self._event(lineno, raw, fast)
                if event is None:
                    continue
            if not seen_ids.add(event.id):
                raise self._error(lineno, "id", f"duplicate event id {event.id!r}")
            turn = event.turn
            if turn < last_turn:
                raise self._error(lineno, "turn", f"turn goes backwards ({turn} after {last_turn})")
            last_turn = turn
            kind = event.kind
            if kind == "tool-call":
                if not calls.add(event.call_id, event.tool):
                    self._check_call_ids(lineno, event, calls)  # raises: issued twice
            elif kind == "tool-result":
                tool = calls.get(event.call_id)
                if tool is None or (event.tool is not None and event.tool != tool):
                    self._check_call_ids(lineno, event, calls)  # raises with the precise message
            self.events_read += 1
            self.last_turn = turn
            yield event

    def _event(self, lineno: int, raw: Any, tried_fast: bool | None = None) -> Event | None:
        """One event; `tried_fast`: whether the caller already ran the precheck and the fast path
        (True: it failed validation, False: the line needs the slow path), None: not yet."""
        redactor = self.redactor
        if tried_fast is None and isinstance(raw, str) and raw.strip() and not redactor.line_needs_redaction(raw):
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
        if self.raw_hook is not None:
            self.raw_hook(record)
        try:
            record = redact_event_dict(dict(record), redactor)  # also measures the nesting
        except DepthError as exc:
            raise self._error(lineno, exc.field, depth_message()) from None
        try:
            return _EVENT.validate_python(record)
        except ValidationError as exc:
            field, message = _pydantic_message(exc)
            raise self._error(lineno, field, message) from None

    def _check_call_ids(self, lineno: int, event: Event, calls: CallTable | dict[str, str]) -> None:
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


def _prechecked(lines: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any, int]]:
    """(line number, line, 0 when the line needs no redaction else 1), CHUNK lines at a time."""
    while batch := list(islice(lines, CHUNK)):
        texts = [raw for _, raw in batch if type(raw) is str and len(raw) < LONG_LINE]
        flags = iter(lines_needing_redaction(texts))
        for lineno, raw in batch:
            yield lineno, raw, next(flags) if type(raw) is str and len(raw) < LONG_LINE else 1


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
        readline = handle.readline
        lineno = 0
        while raw := readline(MAX_LINE_BYTES + 1):
            lineno += 1
            if len(raw) > MAX_LINE_BYTES:
                raise TraceError(f"line longer than the limit of {MAX_LINE_BYTES // (1024 * 1024)} MB",
                                 file=str(path), line=lineno)
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError:
                raise TraceError("not UTF-8 text", file=str(path), line=lineno) from None


def read_trace(source: str | Path, *, expected_scenario: str | None = None) -> tuple[RunHeader, list[Event], dict[str, int]]:
    """Load a whole trace into memory (small traces, tests, the judge's slices)."""
    reader = TraceReader(source, expected_scenario=expected_scenario)
    events = list(reader)
    return reader.header, events, reader.redactions
