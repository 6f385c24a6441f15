"""The GenAI semantic-convention examples (../shared/data/otel-genai-semconv) as OTLP/JSON files.

The spec's examples are property tables, not exports: each (section, subsection) becomes one trace
(ids from the table where given, else made up; the spans in table order, one second apart, half a
second long). A table with no span name is the `gen_ai.client.inference.operation.details` event of
the span with its id: it becomes an OTLP log record bound to that span.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

EXAMPLES = Path("otel-genai-semconv/docs/gen-ai/non-normative/examples-llm-calls.json-blocks.json")
T0 = 1_700_000_000_000_000_000


def any_value(value: Any) -> dict:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {"arrayValue": {"values": [{"stringValue": v} for v in value]}}
    return {"stringValue": json.dumps(value)}  # structured content travels as a JSON string


def kvs(attrs: dict) -> list[dict]:
    return [{"key": k, "value": any_value(v)} for k, v in attrs.items()]


def example_groups(data_dir: Path) -> dict[str, list[dict]]:
    doc = json.loads((data_dir / EXAMPLES).read_text(encoding="utf-8"))
    groups: dict[str, list[dict]] = {}
    for table in doc["span_tables"]:
        name = table["section"] + (f" / {table['subsection']}" if table["subsection"] else "")
        groups.setdefault(name, []).append(table)
    return groups


def to_otlp(name: str, tables: list[dict]) -> list[dict]:
    """One example group -> OTLP/JSON batches (a traces batch, and a logs batch when an event
    record is part of the example)."""
    trace_id = hashlib.sha256(name.encode()).hexdigest()[:32]
    spans, logs = [], []
    for i, table in enumerate(tables):
        attrs = dict(table["attributes"])
        tid = attrs.pop("Trace id", None) or trace_id
        sid = attrs.pop("Span id", None) or f"{i + 1:016x}"
        start = T0 + i * 1_000_000_000
        if table["span_name"] is None:
            logs.append({"timeUnixNano": str(start), "eventName": "gen_ai.client.inference.operation.details",
                         "traceId": tid, "spanId": sid, "attributes": kvs(attrs)})
            continue
        spans.append({"traceId": tid, "spanId": sid, "name": table["span_name"], "kind": 3,
                      "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 500_000_000),
                      "attributes": kvs(attrs), "status": {}})
    resource = {"attributes": kvs({"service.name": "semconv-example"})}
    out = [{"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "example"},
                                                                     "spans": spans}]}]}]
    if logs:
        out.append({"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": logs}]}]})
    return out


def write_jsonl(path: Path, batches: list[dict]) -> Path:
    path.write_text("".join(json.dumps(b) + "\n" for b in batches), encoding="utf-8")
    return path
