"""OpenTelemetry GenAI spans -> our trace (semantic conventions v1.41, `gen_ai.*`).

**Which spans.** The operation is `gen_ai.operation.name`, else the first word of the span name
(`chat gpt-4`, `execute_tool get_weather`). `chat`, `text_completion` and `generate_content` are
model calls; `invoke_agent` and `create_agent` name the agent (and may carry messages too);
`execute_tool` is a tool. Other GenAI operations (`embeddings`, `retrieval`, any unknown name) and
spans with no GenAI attributes (HTTP, DB) make no events: they are counted in the summary's
`skipped` (`operation:<name>`, `non-genai`), never silently lost.

**Order.** A model call's input messages happen at its start and its output at its end; a tool's
call at its start and its result at its end. Everything is ordered by those times (an end before a
start at the same instant, then parent before child, then file order), so spans out of order in
the file come out in the order they ran. Event `ts` is that time (ISO 8601, UTC).

**Dedup.** Each model call resends the conversation so far. A message (role + parts, arguments
parsed) is emitted only when this span holds more copies of it than were emitted before, so the
history is written once and a user who says "yes" twice is still heard twice. A tool call is
written once per call id (from the model's output, else from the `execute_tool` span), its result
once (from the `execute_tool` span when there is one: its status and latency are known there).

**Messages.** `gen_ai.input.messages` / `gen_ai.output.messages` (JSON strings or structured; on
the span, or on a `gen_ai.client.inference.operation.details` event or log record of it). Parts:
`text` -> user / assistant text; `tool_call` -> `tool-call`; `tool_call_response` -> `tool-result`;
`server_tool_call` (+`_response`) -> a tool call and result; blob/file/uri -> a `[type mime]`
placeholder; `reasoning` and unknown parts are skipped (counted). System messages and
`gen_ai.system_instructions` make no event (their SHA-256 goes to the header). Of several output
choices only the first is kept (the others are counted).

**Turns** (`turns="user"`, default): a new turn at each new user message. `turns="step"`: also at
each model output that follows a tool result (each further agent step of the same user turn).

**Meta** on the events of a model call's output: model (`gen_ai.response.model`, else request),
finish reason, latency (span duration) and usage (`gen_ai.usage.*` token counts); a tool result
carries its span's latency. Status: a tool span with error status -> `error` (`timeout` when
`error.type` or the status message says so), else `ok`.

**Header.** run_id: the argument, else `gen_ai.conversation.id`, else the trace id; scenario: the
argument, else a `judge.scenario` attribute (resource or span), else an error; agent: name and
version from `gen_ai.agent.*` (else the resource's `service.name` / `service.version`), model from
the first model call; metadata: `format: otlp`, provider, agent id/description, conversation id,
service name, system SHA-256 and what was skipped.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError
from judge.trace.build import (
    EventBuilder,
    ImportSummary,
    as_args,
    atomic_import,
    check_text_file,
    maybe_json,
    refuse_input,
    safe_name,
    write_trace,
)
from judge.trace.otlp import LogRecord, Span, iso, read_traces

MODEL_OPS = ("chat", "text_completion", "generate_content")
AGENT_OPS = ("invoke_agent", "create_agent")
TOOL_OPS = ("execute_tool",)
KNOWN_OPS = MODEL_OPS + AGENT_OPS + TOOL_OPS
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
TURN_RULES = ("user", "step")


def operation(span: Span) -> str | None:
    op = span.attributes.get("gen_ai.operation.name")
    if isinstance(op, str) and op:
        return op
    first = span.name.split(" ", 1)[0]
    if first in KNOWN_OPS:
        return first
    if any(k.startswith("gen_ai.") for k in span.attributes):
        return first or "(unnamed)"
    return None


def _messages(value: Any) -> list[dict[str, Any]]:
    value = maybe_json(value)
    if isinstance(value, dict):
        value = [value]
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def _norm_part(part: Any) -> Any:
    if isinstance(part, dict) and part.get("type") == "tool_call":
        return {**part, "arguments": as_args(part.get("arguments"))}
    if isinstance(part, dict) and part.get("type") == "tool_call_response":
        return {**part, "response": maybe_json(part.get("response"))}
    return part


def fingerprint(message: dict[str, Any]) -> str:
    parts = message.get("parts")
    parts = [_norm_part(p) for p in parts] if isinstance(parts, list) else message.get("content")
    return json.dumps([message.get("role"), parts], sort_keys=True, default=str)


def _usage(attrs: dict[str, Any]) -> dict[str, int] | None:
    usage = {k[len("gen_ai.usage."):]: int(v) for k, v in attrs.items()
             if k.startswith("gen_ai.usage.") and isinstance(v, (int, float)) and not isinstance(v, bool)}
    return usage or None


class _TraceMapper:
    """The events of one trace's spans (see the module docstring)."""

    def __init__(self, spans: list[Span], logs: list[LogRecord], turns: str, skipped: Counter) -> None:
        self.spans = spans
        self.turns = turns
        self.skipped = skipped
        self.b = EventBuilder()
        self.emitted: Counter[str] = Counter()
        self.after_tool = False
        self.system = hashlib.sha256()
        self.has_system = False
        self.first_model: str | None = None
        self.agent: dict[str, Any] = {}
        self.found: dict[str, Any] = {}
        self.responses: dict[str, Any] = {}  # tool call id -> response seen in a later model input
        by_id = {s.span_id: s for s in spans}
        for record in logs:  # content captured on a log record joins its span
            span = by_id.get(record.span_id)
            if span is not None:
                span.events.append({"name": record.name, "time_ns": record.time_ns or span.start_ns,
                                    "attributes": record.attributes})
        self.depth = {s.span_id: self._depth(s, by_id) for s in spans}

    @staticmethod
    def _depth(span: Span, by_id: dict[str, Span]) -> int:
        depth, seen, parent = 0, set(), span.parent_span_id
        while parent in by_id and parent not in seen and depth < 1000:
            seen.add(parent)
            depth += 1
            parent = by_id[parent].parent_span_id
        return depth

    def attrs(self, span: Span) -> dict[str, Any]:
        attrs = dict(span.attributes)
        for event in span.events:
            if event.get("name") == DETAILS_EVENT:
                for k, v in event["attributes"].items():
                    attrs.setdefault(k, v)
        return attrs

    def run(self) -> list[dict[str, Any]]:
        steps: list[tuple[int, int, int, int, str, Span, dict]] = []
        for span in self.spans:
            op = operation(span)
            if op is None:
                self.skipped["non-genai"] += 1
                continue
            if op not in KNOWN_OPS:
                self.skipped[f"operation:{op}"] += 1
                continue
            attrs = self.attrs(span)
            self._learn(span, op, attrs)
            d = self.depth[span.span_id]
            steps.append((span.start_ns, 1, d, span.order, "start", span, attrs))
            steps.append((span.end_ns, 0, -d, span.order, "end", span, attrs))
        steps.sort(key=lambda s: s[:4])
        # A tool span rarely records its result; the next model call's input usually does.
        for *_, phase, _span, attrs in steps:
            if phase == "start":
                for message in _messages(attrs.get("gen_ai.input.messages")):
                    for part in message.get("parts") or []:
                        if isinstance(part, dict) and part.get("type") == "tool_call_response":
                            self.responses.setdefault(str(part.get("id")), maybe_json(part.get("response")))
        for time_ns, _, _, _, phase, span, attrs in steps:
            op = operation(span)
            if op in TOOL_OPS:
                self._tool(span, attrs, phase, time_ns)
            elif phase == "start":
                self._emit(_messages(attrs.get("gen_ai.input.messages")), span, time_ns, None)
                self._system(attrs.get("gen_ai.system_instructions"))
            else:
                outputs = _messages(attrs.get("gen_ai.output.messages"))
                if len(outputs) > 1:
                    self.skipped["extra output choices"] += len(outputs) - 1
                meta = self._meta(span, attrs, outputs[0] if outputs else None) if op in MODEL_OPS else None
                self._emit(outputs[:1], span, time_ns, meta)
        return self.b.events

    def _learn(self, span: Span, op: str, attrs: dict[str, Any]) -> None:
        for key in ("gen_ai.conversation.id", "gen_ai.provider.name", "gen_ai.agent.id",
                    "gen_ai.agent.description", "judge.scenario"):
            if key in attrs and key not in self.found:
                self.found[key] = attrs[key]
        for key in ("service.name", "service.version", "judge.scenario"):
            if key in span.resource and key not in self.found:
                self.found[key] = span.resource[key]
        if op in AGENT_OPS:
            self.agent.setdefault("name", attrs.get("gen_ai.agent.name"))
            self.agent.setdefault("version", attrs.get("gen_ai.agent.version"))
        if op in MODEL_OPS and self.first_model is None:
            self.first_model = attrs.get("gen_ai.request.model") or attrs.get("gen_ai.response.model")

    def _system(self, instructions: Any) -> None:
        value = maybe_json(instructions)
        if value:
            self.system.update(json.dumps(value, sort_keys=True, default=str).encode() + b"\0")
            self.has_system = True

    def _meta(self, span: Span, attrs: dict[str, Any], output: dict | None) -> dict[str, Any] | None:
        reasons = attrs.get("gen_ai.response.finish_reasons")
        finish = (output or {}).get("finish_reason") or (reasons[0] if isinstance(reasons, list) and reasons
                                                         else reasons if isinstance(reasons, str) else None)
        meta = {"model": attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model"),
                "finish_reason": finish, "latency_ms": max(0.0, (span.end_ns - span.start_ns) / 1e6),
                "usage": _usage(attrs)}
        return {k: v for k, v in meta.items() if v is not None} or None

    def _ids(self, span: Span, time_ns: int) -> dict[str, Any]:
        return {"ts": iso(time_ns), "span_id": span.span_id, "parent_span_id": span.parent_span_id}

    def _emit(self, messages: list[dict[str, Any]], span: Span, time_ns: int, meta: dict | None) -> None:
        here: Counter[str] = Counter()
        for message in messages:
            fp = fingerprint(message)
            here[fp] += 1
            if here[fp] <= self.emitted[fp]:
                continue
            self.emitted[fp] += 1
            self._message(message, span, time_ns, meta)

    def _message(self, message: dict[str, Any], span: Span, time_ns: int, meta: dict | None) -> None:
        role = message.get("role")
        parts = message.get("parts")
        if not isinstance(parts, list):  # older instrumentations: {"role", "content"}
            parts = [{"type": "text", "content": message.get("content")}] if message.get("content") else []
        if role == "system":
            self._system(parts)
            return
        ids = self._ids(span, time_ns)
        texts: list[str] = []
        for part in parts:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                texts.append(str(part.get("content") or ""))
            elif kind in ("blob", "file", "uri"):
                texts.append(f"[{kind} {part.get('mime_type') or part.get('modality') or ''}]".replace(" ]", "]"))
            elif kind in ("tool_call", "server_tool_call"):
                self._flush_text(role, texts, ids, meta)
                call_id = part.get("id")
                if isinstance(call_id, str) and call_id and self.b.has_call(call_id):
                    continue
                args = part.get("arguments") if kind == "tool_call" else \
                    {k: v for k, v in (part.get("server_tool_call") or {}).items() if k != "type"}
                self._step()
                self.b.call(str(part.get("name") or "tool"), args, call_id or None, **ids, meta=meta)
            elif kind in ("tool_call_response", "server_tool_call_response"):
                self._flush_text(role, texts, ids, meta)
                call_id = part.get("id")
                if not (isinstance(call_id, str) and self.b.has_call(call_id)):
                    self.skipped["tool response without a call"] += 1
                    continue
                if self.b.answered(call_id):
                    continue
                response = part.get("response") if kind == "tool_call_response" else \
                    part.get("server_tool_call_response")
                self.b.result(call_id, "ok", maybe_json(response), **ids)
                self.after_tool = True
            else:
                self.skipped[f"part:{kind}"] += 1
        self._flush_text(role, texts, ids, meta)

    def _step(self) -> None:
        if self.turns == "step" and self.after_tool:
            self.b.next_turn()
        self.after_tool = False

    def _flush_text(self, role: Any, texts: list[str], ids: dict, meta: dict | None) -> None:
        if not texts:
            return
        text = "\n".join(texts)
        texts.clear()
        if role == "user":
            self.b.next_turn()
            self.after_tool = False
            self.b.add("user", text=text, **ids)
        elif role == "assistant":
            self._step()
            self.b.add("assistant", text=text, **ids, meta=meta)
        else:
            self.skipped[f"text of role {role}"] += 1

    def _tool(self, span: Span, attrs: dict[str, Any], phase: str, time_ns: int) -> None:
        call_id = attrs.get("gen_ai.tool.call.id")
        call_id = str(call_id) if call_id else f"span-{span.span_id}"
        name = attrs.get("gen_ai.tool.name") or span.name.removeprefix("execute_tool").strip() or "tool"
        ids = self._ids(span, time_ns)
        if phase == "start":
            if not self.b.has_call(call_id):
                self._step()
                self.b.call(str(name), attrs.get("gen_ai.tool.call.arguments"), call_id, **ids)
            return
        if not self.b.has_call(call_id) or self.b.answered(call_id):
            return
        status = "ok"
        result = maybe_json(attrs.get("gen_ai.tool.call.result"))
        if result is None:
            result = self.responses.get(call_id)
        if span.status == "error":
            why = f"{attrs.get('error.type') or ''} {span.status_message or ''}".lower()
            status = "timeout" if "timeout" in why or "timed out" in why else "error"
            if result is None:
                result = {"error": span.status_message or attrs.get("error.type") or "error"}
        latency = {"latency_ms": max(0.0, (span.end_ns - span.start_ns) / 1e6)}
        self.b.result(call_id, status, result, **ids, meta=latency)
        self.after_tool = True

    def header(self, trace_id: str, run_id: str | None, scenario: str | None, file: str) -> dict[str, Any]:
        scenario = scenario or self.found.get("judge.scenario")
        if not scenario:
            raise JudgeInputError(f"trace {trace_id} names no scenario: pass --scenario ID or set the "
                                  "`judge.scenario` resource attribute", file=file)
        agent = {"name": self.agent.get("name") or self.found.get("service.name"),
                 "version": self.agent.get("version") or self.found.get("service.version"),
                 "model": self.first_model}
        metadata = {"format": "otlp", "provider": self.found.get("gen_ai.provider.name"),
                    "agent_id": self.found.get("gen_ai.agent.id"),
                    "agent_description": self.found.get("gen_ai.agent.description"),
                    "conversation_id": self.found.get("gen_ai.conversation.id"),
                    "service": self.found.get("service.name"),
                    "system_sha256": self.system.hexdigest() if self.has_system else None,
                    "skipped": dict(self.skipped) or None}
        return {"kind": "run", "run_id": str(run_id or self.found.get("gen_ai.conversation.id") or trace_id),
                "scenario": str(scenario), "trace_id": trace_id,
                "agent": {k: str(v) for k, v in agent.items() if v is not None} or None,
                "metadata": {k: v for k, v in metadata.items() if v is not None}}


def spans_to_trace(spans: list[Span], logs: list[LogRecord] | None = None, *, scenario: str | None = None,
                   run_id: str | None = None, turns: str = "user", file: str = "otlp",
                   skipped: Counter | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One trace's spans -> (run header, events)."""
    if turns not in TURN_RULES:
        raise JudgeInputError(f"unknown turn rule {turns!r} (expected one of {', '.join(TURN_RULES)})")
    local: Counter = Counter()
    mapper = _TraceMapper(spans, logs or [], turns, local)
    events = mapper.run()
    header = mapper.header(spans[0].trace_id, run_id, scenario, file)
    if skipped is not None:
        skipped.update(local)
    return header, events


@atomic_import
def import_otel(path: str | Path, out: str | Path, *, scenario: str | None = None, run_id: str | None = None,
                turns: str = "user", whole: bool = False, trace_id: str | None = None) -> ImportSummary:
    """OTLP JSON -> traces. `out` names a folder when it is one, ends in `/` or has no suffix:
    then `out/<trace id>.jsonl` per trace; else it is the trace file, and the input must hold one
    trace (or pick one with `trace_id`)."""
    path = Path(path)
    folder = Path(out).is_dir() or str(out).endswith(("/", "\\")) or not Path(out).suffix
    out = Path(out)
    refuse_input(out, path)
    check_text_file(path)
    summary = ImportSummary()
    first_id: str | None = None
    for spans, logs in read_traces(path, whole=whole):
        if not spans:
            continue
        tid = spans[0].trace_id
        if trace_id is not None and tid != trace_id.lower():
            summary.skipped["other trace"] += 1
            continue
        if summary.runs and not folder:
            raise JudgeInputError(f"the file holds more than one trace ({first_id} written to {out}, then "
                                  f"{tid}): give -o a folder, or pick one with --trace-id", file=str(path))
        if summary.runs and run_id is not None:
            raise JudgeInputError("--run-id names one run, but the file holds several traces", file=str(path))
        first_id = first_id or tid
        header, events = spans_to_trace(spans, logs, scenario=scenario, run_id=run_id, turns=turns,
                                        file=str(path), skipped=summary.skipped)
        target = out / f"{safe_name(tid)}.jsonl" if folder else out
        refuse_input(target, path)
        write_trace(target, header, events)
        summary.add(target, events)
        if not events:
            summary.warnings.append(f"trace {tid}: no events (was content capture off?)")
    if summary.runs == 0:
        raise JudgeInputError("no trace found" + (f" with id {trace_id}" if trace_id else ""), file=str(path))
    return summary
