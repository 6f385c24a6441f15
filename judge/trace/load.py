"""Stream a native JSONL trace: validate every line and redact it before anyone downstream sees it.

A trace can hold millions of events, so events are yielded one at a time; what is kept is what the
validation needs (seen ids, issued call ids), never the events themselves, and that compactly:
numbered ids (`e17`, `c4`) cost a bit or two bytes each instead of a string in a set.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from judge.errors import TraceError
from judge.model import EVENT_KINDS, Event, RunHeader, ToolCallEvent, ToolResultEvent
from judge.model.limits import MAX_LINE_BYTES, DepthError, depth_message
from judge.trace.redact import Redactor, line_needs_redaction, redact_event_dict, redact_header_dict

_EVENT = TypeAdapter(Event)
# The core validator behind `_EVENT.validate_json` (same defaults), without the per-call wrapper.
_VALIDATE_JSON = _EVENT.validator.validate_json


_DIGITS = "0123456789"
LONG_LINE = 1 << 16


def _numbered(name: str) -> tuple[str, int] | None:
    """(`e`, 17) for `e17`: a name ending in a decimal number without a leading zero (so that the
    number gives the name back), of at most 9 digits; None otherwise."""
    head = name.rstrip(_DIGITS)
    k = len(head)
    d = len(name) - k
    if d == 0 or d > 9 or (d > 1 and name[k] == "0"):
        return None
    return head, int(name[k:])


# IdSet and CallTable start as a plain set and dict (the fastest) and turn compact once they hold
# this many entries: a trace of a few hundred thousand events pays nothing for compactness, and
# what a longer trace keeps stays small (a few MB at most for these two, whatever its length).
PLAIN_LIMIT = 1 << 17


class IdSet:
    """An exact set of ids (`add` says whether the id is new). Past PLAIN_LIMIT ids it keeps a
    numbered id as one bit of a bitmap per prefix, and any other id, or one the bitmaps have no
    room for, as a string. Bitmaps grow only within a budget earned by the ids they hold (16 bytes
    each, plus 64 KiB), so sparse or hostile numbering cannot make them large: such ids go to the
    string set instead."""

    __slots__ = ("_bits", "_strings", "_budget", "_plain")

    def __init__(self) -> None:
        self._bits: dict[str, bytearray] = {}
        self._strings: set[str] = set()
        self._budget = 1 << 16
        self._plain = True

    def _compact(self) -> None:
        names, self._strings, self._plain = self._strings, set(), False
        for name in names:
            self.add(name)

    def add(self, name: str) -> bool:
        strings = self._strings
        if name in strings:
            return False
        if self._plain:
            strings.add(name)
            if len(strings) >= PLAIN_LIMIT:
                self._compact()
            return True
        head = name.rstrip(_DIGITS)
        k = len(head)
        d = len(name) - k
        if 0 < d <= 9 and (d == 1 or name[k] != "0"):
            n = int(name[k:])
            byte, mask = n >> 3, 1 << (n & 7)
            bits = self._bits.get(head)
            if bits is None or byte >= len(bits):
                size = len(bits) if bits is not None else 0
                grow = max(byte + 1 - size, size >> 1, 64)
                if grow > self._budget:
                    strings.add(name)
                    return True
                if bits is None:
                    bits = self._bits[head] = bytearray()
                bits.extend(bytes(grow))
                self._budget -= grow
            elif bits[byte] & mask:
                return False
            bits[byte] |= mask
            self._budget += 16
            return True
        strings.add(name)
        return True

    def __contains__(self, name: str) -> bool:
        if name in self._strings:
            return True
        numbered = _numbered(name)
        if numbered is None:
            return False
        bits = self._bits.get(numbered[0])
        byte = numbered[1] >> 3
        return bits is not None and byte < len(bits) and bool(bits[byte] & (1 << (numbered[1] & 7)))


class CallTable:
    """call id -> tool name, exact (a mapping with `get`, `in` and assignment). Past PLAIN_LIMIT
    entries a numbered call id costs two bytes (the tool's number in an array per prefix) instead
    of a dict entry and its string; other ids, ids past the budget (as IdSet's, 32 bytes an entry)
    and tools past the 65535th stay in a plain dict."""

    __slots__ = ("_slots", "_other", "_tools", "_tool_no", "_budget", "_plain")

    def __init__(self) -> None:
        self._slots: dict[str, array] = {}
        self._other: dict[str, str] = {}
        self._tools: list[str] = [""]  # number 0: no call
        self._tool_no: dict[str, int] = {}
        self._budget = 1 << 16
        self._plain = True

    def _compact(self) -> None:
        entries, self._other, self._plain = self._other, {}, False
        for call_id, tool in entries.items():
            self[call_id] = tool

    def get(self, call_id: str, default: Any = None) -> Any:
        other = self._other
        if self._plain:
            return other.get(call_id, default)
        if other and call_id in other:
            return other[call_id]
        head = call_id.rstrip(_DIGITS)
        k = len(head)
        d = len(call_id) - k
        if 0 < d <= 9 and (d == 1 or call_id[k] != "0"):
            slots = self._slots.get(head)
            if slots is not None:
                n = int(call_id[k:])
                if n < len(slots) and slots[n]:
                    return self._tools[slots[n]]
        return default

    def __contains__(self, call_id: str) -> bool:
        return self.get(call_id) is not None

    def add(self, call_id: str, tool: str) -> bool:
        """Map a new call id to its tool; False (and nothing changed) when the id is known."""
        if self.get(call_id) is not None:
            return False
        self[call_id] = tool
        return True

    def __setitem__(self, call_id: str, tool: str) -> None:
        other = self._other
        if self._plain:
            other[call_id] = tool
            if len(other) >= PLAIN_LIMIT:
                self._compact()
            return
        if other and call_id in other:
            other[call_id] = tool
            return
        no = self._tool_no.get(tool)
        if no is None and len(self._tools) < 0xFFFF and isinstance(tool, str):
            no = self._tool_no[tool] = len(self._tools)
            self._tools.append(tool)
        head = call_id.rstrip(_DIGITS)
        k = len(head)
        d = len(call_id) - k
        if no is not None and 0 < d <= 9 and (d == 1 or call_id[k] != "0"):
            n = int(call_id[k:])
            slots = self._slots.get(head)
            if slots is None or n >= len(slots):
                size = len(slots) if slots is not None else 0
                grow = max(n + 1 - size, size >> 1, 64)
                if 2 * grow <= self._budget:
                    if slots is None:
                        slots = self._slots[head] = array("H")
                    slots.frombytes(bytes(2 * grow))
                    self._budget -= 2 * grow
                else:
                    slots = None
            if slots is not None:
                if not slots[n]:
                    self._budget += 32
                slots[n] = no
                return
        other[call_id] = tool


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
        validate_json, needs_redaction = _VALIDATE_JSON, line_needs_redaction
        # The per-line work of `_event` and `_check_call_ids`, inlined for the common case: a text
        # line with nothing to redact goes to pydantic's JSON parser straight (a blank or invalid
        # line fails there and takes `_event`, which skips it or names the problem).
        for lineno, raw in self._lines:
            event = None
            # pydantic's JSON parser refuses nesting past its recursion limit (200): such a line takes
            # the slow path, which names the field too deep. A long line goes to the slow path
            # straight: the detectors' own gates cost what the precheck would.
            fast = type(raw) is str and len(raw) < LONG_LINE and not needs_redaction(raw)
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
