"""Read OpenTelemetry trace exports as JSON and hand them over one trace at a time.

**Formats.** A file is read as a sequence of JSON values (so JSONL, one pretty-printed document and
the concatenated objects a console exporter prints all work). Each value is a batch: OTLP/JSON
`{"resourceSpans": [...]}` (the collector's file exporter writes one per line), OTLP/JSON
`{"resourceLogs": [...]}` (log records with a trace and span id: their attributes join that span,
e.g. the GenAI `gen_ai.client.inference.operation.details` event), an SDK span as
`span.to_json()` writes it (`context.trace_id`, `parent_id`, ISO times, flat `attributes`), or a
JSON list of any of these. Ids may be hex (OTLP/JSON) or base64 (protobuf's JSON mapping).

**Streaming.** Spans are buffered per trace id. A trace is handed over once its root span (no
parent) has arrived and a later batch brings nothing of it, or at the end of the file: memory holds
the traces still open (one, for an agent that runs one conversation at a time), not the file. A
span of a trace already handed over is an error (`whole=True` reads the whole file first).

**Malformed input** is an error naming the file, the line where the batch starts and the field:
a span without `traceId` or `spanId`, or without a start time; a batch that is none of the above.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError

_HEX = re.compile(r"^[0-9a-fA-F]+$")
_WS = re.compile(r"\s*")
_STATUS = {0: "unset", 1: "ok", 2: "error", "STATUS_CODE_UNSET": "unset", "STATUS_CODE_OK": "ok",
           "STATUS_CODE_ERROR": "error", "UNSET": "unset", "OK": "ok", "ERROR": "error"}


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status: str = "unset"  # unset | ok | error
    status_message: str | None = None
    resource: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)  # {name, time_ns, attributes}
    order: int = 0  # arrival order in the file


def any_value(value: Any) -> Any:
    """An OTLP/JSON AnyValue -> a plain value (intValue comes as a string in OTLP/JSON)."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(kvs: Any) -> dict[str, Any]:
    """OTLP key/value list (or an already flat dict) -> dict."""
    if isinstance(kvs, dict):
        return dict(kvs)
    out: dict[str, Any] = {}
    for kv in kvs or []:
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = any_value(kv.get("value"))
    return out


def norm_id(value: Any) -> str | None:
    """Hex (lowercased); base64 of 8 or 16 bytes -> hex; `0x` prefixes dropped; empty -> None."""
    if not isinstance(value, str) or not value or set(value) == {"0"}:
        return None
    text = value[2:] if value.startswith("0x") else value
    if _HEX.match(text) and len(text) in (16, 32):
        return text.lower()
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text
    return raw.hex() if len(raw) in (8, 16) else text


def _ns(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        if value.isdigit():
            return int(value)
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1_000_000) * 1000
    return None


def iso(ns: int) -> str:
    """Nanoseconds since the epoch -> ISO 8601 UTC with microseconds."""
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).isoformat().replace("+00:00", "Z")


class _Batch:
    def __init__(self, file: str, line: int) -> None:
        self.file, self.line = file, line

    def error(self, where: str | None, message: str) -> JudgeInputError:
        return JudgeInputError(message, file=self.file, line=self.line, field=where)


def json_values(path: Path) -> Iterator[tuple[int, Any]]:
    """Each top-level JSON value of the file with the line it starts on, read incrementally."""
    decoder = json.JSONDecoder()
    try:
        handle = path.open("r", encoding="utf-8")
    except OSError as exc:
        raise JudgeInputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    with handle:
        buf, pos, line, eof, want = "", 0, 1, False, 1 << 16
        while True:
            m = _WS.match(buf, pos)
            assert m is not None  # `\s*` matches everywhere
            line += buf.count("\n", pos, m.end())
            pos = m.end()
            if pos >= len(buf):
                if eof:
                    return
                chunk = _read(handle, path, want)
                eof, buf, pos = not chunk, chunk, 0
                continue
            try:
                value, end = decoder.raw_decode(buf, pos)
            except json.JSONDecodeError as exc:
                if eof:
                    raise JudgeInputError(f"not JSON: {exc.msg}", file=str(path),
                                          line=line + buf.count("\n", pos, exc.pos)) from None
                rest = buf[pos:]
                want = max(want, 2 * len(rest))  # doubling: a large document is parsed O(1) times
                chunk = _read(handle, path, want)
                eof, buf, pos = not chunk, rest + chunk, 0
                continue
            yield line, value
            line += buf.count("\n", pos, end)
            pos = end


def _read(handle: Any, path: Path, size: int) -> str:
    try:
        return handle.read(size)
    except UnicodeDecodeError:
        raise JudgeInputError("not UTF-8 text", file=str(path)) from None


def _otlp_span(raw: Any, resource: dict, batch: _Batch, where: str, order: int) -> Span:
    if not isinstance(raw, dict):
        raise batch.error(where, "a span must be a JSON object")
    trace_id = norm_id(raw.get("traceId"))
    if trace_id is None:
        raise batch.error(f"{where}.traceId", "required field is missing")
    span_id = norm_id(raw.get("spanId"))
    if span_id is None:
        raise batch.error(f"{where}.spanId", "required field is missing")
    start = _ns(raw.get("startTimeUnixNano"))
    if start is None:
        raise batch.error(f"{where}.startTimeUnixNano", "required field is missing")
    end = _ns(raw.get("endTimeUnixNano"))
    status = raw.get("status") or {}
    events = [{"name": e.get("name"), "time_ns": _ns(e.get("timeUnixNano")) or start,
               "attributes": attributes(e.get("attributes"))}
              for e in raw.get("events") or [] if isinstance(e, dict)]
    return Span(trace_id=trace_id, span_id=span_id, parent_span_id=norm_id(raw.get("parentSpanId")),
                name=str(raw.get("name") or ""), start_ns=start, end_ns=end if end is not None else start,
                attributes=attributes(raw.get("attributes")), status=_STATUS.get(status.get("code"), "unset"),
                status_message=status.get("message") or None, resource=resource, events=events, order=order)


def _sdk_span(raw: dict, batch: _Batch, where: str, order: int) -> Span:
    context = raw.get("context") or {}
    trace_id = norm_id(context.get("trace_id"))
    if trace_id is None:
        raise batch.error(f"{where}.context.trace_id", "required field is missing")
    span_id = norm_id(context.get("span_id"))
    if span_id is None:
        raise batch.error(f"{where}.context.span_id", "required field is missing")
    start = _ns(raw.get("start_time"))
    if start is None:
        raise batch.error(f"{where}.start_time", "required field is missing")
    end = _ns(raw.get("end_time"))
    status = raw.get("status") or {}
    resource = raw.get("resource") or {}
    events = [{"name": e.get("name"), "time_ns": _ns(e.get("timestamp")) or start,
               "attributes": attributes(e.get("attributes"))}
              for e in raw.get("events") or [] if isinstance(e, dict)]
    return Span(trace_id=trace_id, span_id=span_id, parent_span_id=norm_id(raw.get("parent_id")),
                name=str(raw.get("name") or ""), start_ns=start, end_ns=end if end is not None else start,
                attributes=attributes(raw.get("attributes")),
                status=_STATUS.get(status.get("status_code"), "unset"),
                status_message=status.get("description") or None,
                resource=attributes(resource.get("attributes")) if isinstance(resource, dict) else {},
                events=events, order=order)


@dataclass
class LogRecord:
    trace_id: str
    span_id: str
    name: str | None
    time_ns: int | None
    attributes: dict[str, Any]


def batch_items(value: Any, batch: _Batch, counter: list[int]) -> Iterator[Span | LogRecord]:
    """The spans and span-bound log records of one top-level JSON value."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from _items(item, batch, counter, f"[{i}]")
    else:
        yield from _items(value, batch, counter, "")


def _items(value: Any, batch: _Batch, counter: list[int], prefix: str) -> Iterator[Span | LogRecord]:
    dot = f"{prefix}." if prefix else ""
    if isinstance(value, dict) and "resourceSpans" in value:
        for i, rs in enumerate(value.get("resourceSpans") or []):
            resource = attributes(((rs or {}).get("resource") or {}).get("attributes"))
            for j, ss in enumerate((rs or {}).get("scopeSpans") or (rs or {}).get("instrumentationLibrarySpans") or []):
                for k, raw in enumerate((ss or {}).get("spans") or []):
                    counter[0] += 1
                    yield _otlp_span(raw, resource, batch,
                                     f"{dot}resourceSpans[{i}].scopeSpans[{j}].spans[{k}]", counter[0])
        return
    if isinstance(value, dict) and "resourceLogs" in value:
        for rl in value.get("resourceLogs") or []:
            for sl in (rl or {}).get("scopeLogs") or []:
                for rec in (sl or {}).get("logRecords") or []:
                    trace_id, span_id = norm_id(rec.get("traceId")), norm_id(rec.get("spanId"))
                    if trace_id is None or span_id is None:
                        continue  # a log record outside any span says nothing about a trace
                    attrs = attributes(rec.get("attributes"))
                    yield LogRecord(trace_id, span_id, rec.get("eventName") or attrs.get("event.name"),
                                    _ns(rec.get("timeUnixNano")), attrs)
        return
    if isinstance(value, dict) and isinstance(value.get("context"), dict) and "name" in value:
        counter[0] += 1
        yield _sdk_span(value, batch, prefix or "(span)", counter[0])
        return
    raise batch.error(prefix or None, "not OTLP JSON: expected an object with resourceSpans or "
                      "resourceLogs, an SDK span (with `context`), or a list of them")


def read_traces(path: str | Path, *, whole: bool = False) -> Iterator[tuple[list[Span], list[LogRecord]]]:
    """Yield (spans, log records) per trace, as soon as each trace is complete (see above)."""
    path = Path(path)
    open_spans: dict[str, list[Span]] = {}
    open_logs: dict[str, list[LogRecord]] = {}
    rooted: set[str] = set()
    closed: set[str] = set()
    counter = [0]
    for line, value in json_values(path):
        batch = _Batch(str(path), line)
        touched: set[str] = set()
        for item in batch_items(value, batch, counter):
            if item.trace_id in closed:
                raise batch.error("traceId", f"a span of trace {item.trace_id} arrived after that trace's "
                                  "root span had been closed (pass --whole to read the file whole)")
            touched.add(item.trace_id)
            if isinstance(item, Span):
                open_spans.setdefault(item.trace_id, []).append(item)
                if item.parent_span_id is None:
                    rooted.add(item.trace_id)
            else:
                open_logs.setdefault(item.trace_id, []).append(item)
        if whole:
            continue
        for trace_id in [t for t in rooted if t not in touched]:
            rooted.discard(trace_id)
            closed.add(trace_id)
            yield open_spans.pop(trace_id, []), open_logs.pop(trace_id, [])
    for trace_id in list(open_spans):
        yield open_spans.pop(trace_id), open_logs.pop(trace_id, [])
    # Log records whose spans never arrived are dropped: they name no span we could attach them to.
