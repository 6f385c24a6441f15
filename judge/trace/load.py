"""Stream a native JSONL trace: validate every line and redact it before anyone downstream sees it.

A trace can hold millions of events, so events are yielded one at a time; what is kept is what the
validation needs (seen ids, issued call ids: judge.trace.ids, compactly), never the events.

A file is read a block of lines at a time (judge.trace.blocks): one automaton pass over the block
finds the lines that may need redacting (judge.trace.precheck), and every other line is decoded
straight from its bytes, by msgspec into a record (`records()`, the grader's path:
judge.trace.records) or by pydantic into an event (iterating the reader). A line either decoder
refuses takes the slow path: parsed, redacted, validated by pydantic, which names the problem.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from judge.errors import TraceError
from judge.model import EVENT_KINDS, Event, RunHeader, ToolCallEvent, ToolResultEvent
from judge.model.limits import MAX_LINE_BYTES, DepthError, depth_message
from judge.model.scenario import grades_traces_of
from judge.trace.blocks import CLEAN, SLOW, BlockReader, checked_items
from judge.trace.duplicates import (
    DuplicateKey,
    duplicate_path,
    keys_may_repeat,
    refuse_duplicates,
    repeated_message,
)
from judge.trace.ids import PLAIN_LIMIT, CallTable, IdSet
from judge.trace.normal import folded_text
from judge.trace.records import DECODE, DECODE_ID, DecodeError, ToolCallRecord, ToolResultRecord, from_model
from judge.trace.redact import Redactor, redact_event_dict, redact_header_dict

_EVENT = TypeAdapter(Event)
# The core validator behind `_EVENT.validate_json` (same defaults), without the per-call wrapper.
_VALIDATE_JSON = _EVENT.validator.validate_json
# An event read is a record (judge.trace.records) or, for `events()`, the pydantic model.
_TOOL_CALLS = (ToolCallRecord, ToolCallEvent)
_TOOL_RESULTS = (ToolResultRecord, ToolResultEvent)



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
                 raw_hook: Callable[[dict[str, Any]], None] | None = None, digest: bool = False,
                 hidden: Iterable[str] = ()) -> None:
        # raw_hook sees a record before redaction changes it (the no-leak rule needs the raw values);
        # `hidden`: the scenario's no-leak values, redacted too (a line holding one takes the slow path)
        self.raw_hook = raw_hook
        self.redactor = Redactor(hidden)
        self.events_read = 0
        self.last_turn = 0
        self.line = 0  # line number of the last event read (where `reread` can start again)
        self._file: BlockReader | None = None
        self.calls = CallTable()  # call id -> tool of every call read so far (the rules may share it)
        if isinstance(source, (str, Path)):
            self.name = name or str(source)
            self._file = BlockReader(Path(source), max_line=MAX_LINE_BYTES, digest=digest)
            self._lines: Iterator[tuple[int, Any, int]] = self._file.lines()
        else:
            self.name = name or "trace"
            self._lines = checked_items(source)
        self.header = self._read_header(expected_scenario)

    @property
    def sha256(self) -> str | None:
        """The file's sha256, once it was read to its end with `digest=True` (None before)."""
        return self._file.sha256() if self._file is not None else None

    @property
    def bytes_read(self) -> int | None:
        """The file's bytes, once it was read to its end (None before, and for lines given one by one)."""
        return self._file.bytes_read if self._file is not None else None

    @property
    def redactions(self) -> dict[str, int]:
        return dict(sorted(self.redactor.counts.items()))

    def _error(self, line: int, field: str | None, message: str) -> TraceError:
        return TraceError(message, file=self.name, line=line, field=field)

    def _read_header(self, expected_scenario: str | None) -> RunHeader:
        for lineno, raw, _ in self._lines:
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
            if expected_scenario is not None:
                if header.scenario is None:  # (grades_traces_of once raised a TypeError here: exit 4)
                    raise self._error(lineno, "scenario", "the run header names no scenario, so it is not a trace "
                                      f"of {expected_scenario!r} (a trace of no scenario is graded with --policy)")
                if not grades_traces_of(expected_scenario, header.scenario):
                    raise self._error(lineno, "scenario", f"trace is for scenario {header.scenario!r}, "
                                      f"not {expected_scenario!r}")
            return header
        raise TraceError("trace is empty: expected a run header and events", file=self.name)

    def _parse(self, lineno: int, raw: Any) -> dict[str, Any] | None:
        if isinstance(raw, dict):
            field = _nonfinite_field(raw)
            if field is not None:
                raise self._error(lineno, field, "NaN and infinite numbers are not JSON numbers")
            return raw
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise self._error(lineno, None, "not UTF-8 text") from None
        if not raw or raw.isspace():
            return None
        try:
            record = json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float,
                                object_pairs_hook=refuse_duplicates)
        except DuplicateKey as repeated:  # (a name of its own: mypyc types each `as` name once)
            raise self._error(lineno, duplicate_path(raw) or repeated.key, repeated_message(repeated.key)) from None
        except json.JSONDecodeError as exc:
            raise self._error(lineno, None, f"not a JSON object: {exc.msg} at column {exc.colno}") from None
        except RecursionError:
            raise self._error(lineno, None, depth_message()) from None
        except ValueError as exc:  # NaN, Infinity, 1e999, an integer of more than 4,300 digits
            raise self._error(lineno, None, f"not a JSON object: {exc}") from None
        if not isinstance(record, dict):
            raise self._error(lineno, None, "not a JSON object")
        return record

    def _refuse_repeated(self, lineno: int, raw: str | bytes) -> None:
        """Raise the error naming a repeated key of the line, if one repeats (judge.trace.duplicates)."""
        path = duplicate_path(raw)
        if path is not None:
            raise self._error(lineno, path, repeated_message(path.rsplit(".", 1)[-1]))

    def __iter__(self) -> Iterator[Event]:
        """The events, as pydantic models."""
        return self._events(False)

    def records(self) -> Iterator[Any]:
        """The events as msgspec records (judge.trace.records): the grader's path, several times
        cheaper per line; the same lines accepted and refused, with the same messages."""
        return self._events(True)

    def _events(self, as_records: bool) -> Iterator[Any]:
        # The per-line work of `_event` and `_check_call_ids`, inlined for the common case (a line
        # with nothing to redact, decoded from its bytes); the id set and call table stay plain
        # (a set, a dict) until they hold PLAIN_LIMIT entries, then turn compact.
        ids: set[str] | IdSet = set()
        calls = self.calls
        compact = False
        last_turn = -1
        validate_json = _VALIDATE_JSON
        decode = DECODE if as_records else validate_json
        refused = DecodeError if as_records else ValidationError
        hidden = self.redactor.hidden
        for lineno, raw, flag in self._lines:
            event = None
            if hidden is not None and flag != SLOW and _holds(hidden, raw):
                flag = SLOW
            if flag == CLEAN:
                try:
                    event = decode(raw)
                except refused:
                    pass
                else:  # JSON decoders keep the last of a repeated key: a cheap count says it has none
                    if keys_may_repeat(raw, event if as_records else from_model(event)):
                        self._refuse_repeated(lineno, raw)
            if event is None:
                event = self._validated(lineno, raw, flag, not as_records and flag == CLEAN)
                if event is None:
                    continue
                if as_records:
                    event = from_model(event)
            eid = event.id
            if compact:
                if not ids.add(eid):
                    raise self._error(lineno, "id", f"duplicate event id {eid!r}")
            elif eid in ids:
                raise self._error(lineno, "id", f"duplicate event id {eid!r}")
            else:
                ids.add(eid)
            turn = event.turn
            if turn < last_turn:
                raise self._error(lineno, "turn", f"turn goes backwards ({turn} after {last_turn})")
            last_turn = turn
            if isinstance(event, _TOOL_CALLS):  # (as cheap as comparing `kind`, and typed)
                if not calls.add(event.call_id, event.tool):
                    raise self._error(lineno, "call_id", f"call id {event.call_id!r} issued twice")
            elif isinstance(event, _TOOL_RESULTS):
                tool = calls.get(event.call_id)
                if tool is None or (event.tool is not None and event.tool != tool):
                    self._check_call_ids(lineno, event, calls)  # raises with the precise message
            self.events_read += 1
            self.last_turn = turn
            self.line = lineno
            if not compact and self.events_read >= PLAIN_LIMIT and isinstance(ids, set):  # (a set until then)
                ids, compact = _compacted(ids), True
            yield event

    @property
    def rereadable(self) -> bool:
        """Whether `reread` can read events again (a trace file; lines given one by one cannot)."""
        return self._file is not None

    def reread(self, line: int, count: int, *, ids_only: bool = False) -> Iterator[Any]:
        """`count` events as records from line number `line` (an event's `line`, already read), read
        again from the file: decoded and redacted as the first read did (redacted ids keep their
        numbers; the redaction counts and the raw hook are not touched again), the checks that need
        the trace before them (duplicate ids, call ids) not repeated. `ids_only`: just their ids
        (a line with nothing to redact is then not decoded beyond its id)."""
        if self._file is None:
            raise ValueError("only a trace file can be read again")
        if count <= 0:
            return
        redactor = self.redactor.sharing_ids()  # the counts and the raw hook are not touched again
        decode = DECODE_ID if ids_only else DECODE
        hidden = self.redactor.hidden
        for lineno, raw, flag in self._file.lines_from(line):
            event = None
            if hidden is not None and flag != SLOW and _holds(hidden, raw):
                flag = SLOW  # as the first read decided
            if flag == CLEAN:
                try:
                    event = decode(raw)
                except DecodeError:
                    pass
            if event is None:
                event = self._validated(lineno, raw, flag, False, redactor=redactor, hooked=False)
                if event is None:
                    continue
                event = from_model(event)
            yield event.id if ids_only else event
            count -= 1
            if not count:
                return

    def _validated(self, lineno: int, raw: Any, flag: int, tried: bool, *, redactor: Redactor | None = None,
                   hooked: bool = True) -> Event | None:
        """A line the fast decoder did not take: pydantic's JSON validation first when nothing needs
        redacting (it takes what its lax mode allows; `tried`: it already failed), else the slow
        path (`_event`: `redactor` the reader's own unless given; `hooked`: the raw hook sees the line)."""
        if flag != SLOW and not tried:
            try:
                event = _VALIDATE_JSON(raw)
            except ValidationError:
                pass
            else:
                if keys_may_repeat(raw, from_model(event)):
                    self._refuse_repeated(lineno, raw)
                return event
        return self._event(lineno, raw, flag != SLOW, redactor=redactor, hooked=hooked)

    def _event(self, lineno: int, raw: Any, tried_fast: bool | None = None, *, redactor: Redactor | None = None,
               hooked: bool = True) -> Event | None:
        """One event; `tried_fast`: whether the caller already ran the precheck and the fast path
        (True: it failed validation, False: the line needs the slow path), None: not yet.
        `redactor`: the reader's own unless given; `hooked`: whether the raw hook sees the line
        (`reread` gives a redactor of its own, and no hook: the first read did both)."""
        if redactor is None:
            redactor = self.redactor
        if tried_fast is None and isinstance(raw, str) and raw.strip() and not redactor.line_needs_redaction(raw):
            # Fast path: nothing to redact, let pydantic parse the JSON itself.
            try:
                event = _EVENT.validate_json(raw)
            except ValidationError:
                pass  # fall through for a precise message
            else:
                if keys_may_repeat(raw, from_model(event)):
                    self._refuse_repeated(lineno, raw)
                return event
        record = self._parse(lineno, raw)
        if record is None:
            return None
        kind = record.get("kind")
        if kind == "run":
            raise self._error(lineno, "kind", "a second run header inside the trace")
        if kind not in EVENT_KINDS:
            raise self._error(lineno, "kind", f"unknown event kind {kind!r} (expected one of "
                              f"{', '.join(EVENT_KINDS)})")
        if hooked and self.raw_hook is not None:
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

    def _check_call_ids(self, lineno: int, event: Any, calls: CallTable | dict[str, str]) -> None:
        if event.kind == "tool-call":
            if event.call_id in calls:
                raise self._error(lineno, "call_id", f"call id {event.call_id!r} issued twice")
            calls[event.call_id] = event.tool
        elif event.kind == "tool-result":
            tool = calls.get(event.call_id)
            if tool is None:
                raise self._error(lineno, "call_id", f"tool result for call id {event.call_id!r}, "
                                  "which no earlier tool-call issued")
            if event.tool is not None and event.tool != tool:
                raise self._error(lineno, "tool", f"result names tool {event.tool!r} but call "
                                  f"{event.call_id!r} was {tool!r}")


def _holds(hidden: Any, raw: Any) -> bool:
    """Does a raw line hold a hidden value: as written, JSON-escaped, or on its folded copy?"""
    if not isinstance(raw, (str, bytes)):
        return True  # an already parsed record: the slow path looks at every value
    if hidden.in_raw(raw):
        return True
    text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
    return not text.isascii() and hidden.in_text(folded_text(text))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is too large for a number (it would be infinite)")
    return value


def _nonfinite_field(record: dict[str, Any]) -> str | None:
    """The top-level field of an already parsed record (the service's) holding NaN or an infinity."""
    for name, value in record.items():
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, float) and (item != item or item in (float("inf"), float("-inf"))):
                return str(name)
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
    return None


def _compacted(ids: set[str]) -> IdSet:
    """The ids as an IdSet (which turns compact as it reaches PLAIN_LIMIT of them)."""
    compact = IdSet()
    for eid in ids:
        compact.add(eid)
    return compact


def read_trace(source: str | Path, *,
               expected_scenario: str | None = None) -> tuple[RunHeader, list[Event], dict[str, int]]:
    """Load a whole trace into memory (small traces, tests, the judge's slices)."""
    reader = TraceReader(source, expected_scenario=expected_scenario)
    events = list(reader)
    return reader.header, events, reader.redactions
