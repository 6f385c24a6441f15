"""OpenTelemetry GenAI import: every spec example, the ordering and dedup rules, malformed OTLP."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import typer
from otel_examples import example_groups, kvs, to_otlp, write_jsonl
from typer.testing import CliRunner

from judge.cli.imports import register
from judge.errors import JudgeInputError
from judge.trace import TraceReader, read_trace
from judge.trace.otel import import_otel
from judge.trace.otlp import read_traces

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TRACE = "0af7651916cd43dd8448eb211c80319c"
T0 = 1_700_000_000_000_000_000
SEC = 1_000_000_000

# example group -> the event kinds its trace must hold, in order
EXPECTED_KINDS = {
    "Simple chat completion / GenAI client span when content capturing is disabled": [],
    "Simple chat completion / GenAI client span when content capturing is enabled on span attributes":
        ["user", "assistant"],
    "Simple chat completion / GenAI telemetry when content capturing is enabled on event attributes":
        ["user", "assistant"],
    "Tool calls (functions) / GenAI client spans when content capturing is disabled": ["tool-call", "tool-result"],
    "Tool calls (functions) / GenAI client spans when content capturing is enabled on span attributes":
        ["user", "tool-call", "tool-result", "assistant"],
    "System instructions along with chat history (content enabled)": ["user", "assistant"],
    "Chat completion with reasoning (content enabled)": ["user", "assistant"],
    "Tool calls (built-in)": ["user", "tool-call", "tool-result", "assistant"],
    "Chat completion with multiple choices / GenAI client span when content capturing is enabled on span attributes":
        ["user", "assistant"],
}


@pytest.fixture(scope="module")
def groups():
    if not (DATA / "otel-genai-semconv").is_dir():
        pytest.skip(f"the GenAI semconv examples are absent ({DATA / 'otel-genai-semconv'})")
    return example_groups(DATA)


def test_every_spec_example_imports_to_a_valid_trace(groups, tmp_path):
    assert set(groups) == set(EXPECTED_KINDS)
    for i, (name, tables) in enumerate(groups.items()):
        src = write_jsonl(tmp_path / f"ex{i}.jsonl", to_otlp(name, tables))
        summary = import_otel(src, tmp_path / f"ex{i}.trace.jsonl", scenario="otel-example")
        header, events, _ = read_trace(summary.files[0])  # validates
        assert [e.kind for e in events] == EXPECTED_KINDS[name], name
        assert header.scenario == "otel-example" and header.agent.model == "gpt-4"
        assert all(e.span_id for e in events) and all(e.ts for e in events)
        for e in events:
            if e.kind == "assistant":
                assert e.meta.model == "gpt-4-0613" and e.meta.finish_reason == "stop"
                assert e.meta.usage["input_tokens"] > 0 and e.meta.latency_ms == 500.0


def test_tool_call_example_keeps_arguments_result_and_meta(groups, tmp_path):
    name = "Tool calls (functions) / GenAI client spans when content capturing is enabled on span attributes"
    src = write_jsonl(tmp_path / "tool.jsonl", to_otlp(name, groups[name]))
    import_otel(src, tmp_path / "t.jsonl", scenario="s")
    _, (user, call, result, answer), _ = read_trace(tmp_path / "t.jsonl")
    assert user.text == "Weather in Paris?" and user.turn == call.turn == answer.turn == 1
    assert (call.tool, call.call_id, call.args) == ("get_weather", "call_VSPygqKTWdrhaFErNvMV18Yl", {"location": "Paris"})
    assert call.meta.finish_reason == "tool_call" and call.meta.usage == {"input_tokens": 47, "output_tokens": 17}
    assert (result.status, result.result) == ("ok", "rainy, 57°F")
    assert result.span_id != call.span_id  # the result comes from the execute_tool span
    assert "57" in answer.text


def test_multiple_choices_and_reasoning_are_counted_when_skipped(groups, tmp_path):
    skipped = {}
    for i, name in enumerate(["Chat completion with reasoning (content enabled)",
                              "Chat completion with multiple choices / GenAI client span when content "
                              "capturing is enabled on span attributes"]):
        src = write_jsonl(tmp_path / f"{i}.jsonl", to_otlp(name, groups[name]))
        skipped.update(import_otel(src, tmp_path / f"{i}.out.jsonl", scenario="s").skipped)
    assert skipped == {"part:reasoning": 1, "extra output choices": 1}


# ------------------------------------------------------------------ hand-made OTLP


def msg(role: str, *parts: dict) -> dict:
    return {"role": role, "parts": list(parts)}


def text(content: str) -> dict:
    return {"type": "text", "content": content}


def span(span_id: str, name: str, start: float, end: float, parent: str | None = None,
         trace: str = TRACE, status: dict | None = None, **attrs) -> dict:
    out = {"traceId": trace, "spanId": span_id, "name": name, "startTimeUnixNano": str(int(T0 + start * SEC)),
           "endTimeUnixNano": str(int(T0 + end * SEC)),
           "attributes": kvs({k.replace("__", "."): v for k, v in attrs.items()}), "status": status or {}}
    if parent:
        out["parentSpanId"] = parent
    return out


def batch(*spans: dict, resource: dict | None = None) -> dict:
    return {"resourceSpans": [{"resource": {"attributes": kvs(resource or {"service.name": "bot"})},
                               "scopeSpans": [{"spans": list(spans)}]}]}


def conversation_spans(trace: str = TRACE) -> list[dict]:
    """invoke_agent > chat (calls a tool) > execute_tool (fails) > chat (asks) ... user says yes twice."""
    u1, u2 = msg("user", text("Book a table")), msg("user", text("yes"))
    a1 = msg("assistant", {"type": "tool_call", "id": "c1", "name": "book", "arguments": '{"seats": 2}'})
    t1 = msg("tool", {"type": "tool_call_response", "id": "c1", "response": "Error: full"})
    a2 = msg("assistant", text("Fully booked. Try 8pm?"))
    a3 = msg("assistant", text("Booked for 8pm."))
    return [
        span("a000000000000001", "invoke_agent Concierge", 0, 10, trace=trace, gen_ai__operation__name="invoke_agent",
             gen_ai__agent__name="Concierge", gen_ai__agent__version="2.1", gen_ai__conversation__id="conv-9"),
        span("c000000000000001", "chat gpt-4o", 1, 2, "a000000000000001", trace=trace,
             gen_ai__operation__name="chat", gen_ai__request__model="gpt-4o",
             gen_ai__input__messages=[msg("system", text("be nice")), u1],
             gen_ai__output__messages=[{**a1, "finish_reason": "tool_calls"}]),
        span("b000000000000001", "execute_tool book", 3, 4, "a000000000000001", trace=trace,
             status={"code": 2, "message": "restaurant full"}, gen_ai__operation__name="execute_tool",
             gen_ai__tool__name="book", gen_ai__tool__call__id="c1"),
        span("c000000000000002", "chat gpt-4o", 5, 6, "a000000000000001", trace=trace,
             gen_ai__input__messages=[u1, a1, t1], gen_ai__output__messages=[a2],
             gen_ai__usage__input_tokens=30, gen_ai__usage__output_tokens=5),
        span("c000000000000003", "chat gpt-4o", 7, 8, "a000000000000001", trace=trace,
             gen_ai__operation__name="chat",
             gen_ai__input__messages=[u1, a1, t1, a2, u2, msg("assistant", text("Sure?")), u2],
             gen_ai__output__messages=[a3]),
        span("e000000000000001", "embeddings text-embedding-3", 7.5, 7.6, "c000000000000003", trace=trace,
             gen_ai__operation__name="embeddings"),
        span("f000000000000001", "GET /menu", 7.6, 7.7, "c000000000000003", trace=trace, http__method="GET"),
    ]


def _kinds(events) -> list[tuple]:
    return [(e.kind, e.turn, getattr(e, "text", None) or getattr(e, "tool", None)) for e in events]


EXPECTED = [("user", 1, "Book a table"), ("tool-call", 1, "book"), ("tool-result", 1, "book"),
            ("assistant", 1, "Fully booked. Try 8pm?"), ("user", 2, "yes"), ("assistant", 2, "Sure?"),
            ("user", 3, "yes"), ("assistant", 3, "Booked for 8pm.")]


def test_history_is_deduplicated_and_header_filled(tmp_path):
    src = write_jsonl(tmp_path / "c.jsonl", [batch(*conversation_spans())])
    summary = import_otel(src, tmp_path / "t.jsonl", scenario="dinner")
    header, events, _ = read_trace(tmp_path / "t.jsonl")
    assert _kinds(events) == EXPECTED  # "yes" twice is heard twice; the resent history once
    assert events[2].status == "error" and events[2].result == "Error: full"
    assert events[3].meta.usage == {"input_tokens": 30, "output_tokens": 5}
    assert events[0].parent_span_id == "a000000000000001"
    assert header.run_id == "conv-9" and header.trace_id == TRACE
    assert (header.agent.name, header.agent.version, header.agent.model) == ("Concierge", "2.1", "gpt-4o")
    assert len(header.metadata["system_sha256"]) == 64
    assert summary.skipped == {"operation:embeddings": 1, "non-genai": 1}


def test_spans_out_of_order_come_out_in_the_order_they_ran(tmp_path):
    spans = conversation_spans()
    shuffled = [batch(spans[4], spans[2]), batch(spans[3]), batch(spans[1], spans[5], spans[6], spans[0])]
    src = write_jsonl(tmp_path / "c.jsonl", shuffled)
    import_otel(src, tmp_path / "t.jsonl", scenario="dinner")
    assert _kinds(read_trace(tmp_path / "t.jsonl")[1]) == EXPECTED


def test_step_turns_and_timeout_status(tmp_path):
    spans = conversation_spans()
    spans[2]["status"] = {"code": "STATUS_CODE_ERROR", "message": "call timed out"}
    src = write_jsonl(tmp_path / "c.jsonl", [batch(*spans)])
    import_otel(src, tmp_path / "t.jsonl", scenario="dinner", turns="step")
    events = read_trace(tmp_path / "t.jsonl")[1]
    assert [e.turn for e in events] == [1, 1, 1, 2, 3, 3, 4, 4]
    assert events[2].status == "timeout"


@pytest.mark.parametrize("field", ["traceId", "spanId", "startTimeUnixNano"])
def test_missing_ids_or_times_are_errors_naming_line_and_field(tmp_path, field):
    spans = conversation_spans()
    del spans[3][field]
    src = write_jsonl(tmp_path / "c.jsonl", [batch(spans[0]), batch(*spans[1:])])
    with pytest.raises(JudgeInputError) as err:
        import_otel(src, tmp_path / "t.jsonl", scenario="s")
    assert err.value.line == 2 and err.value.field == f"resourceSpans[0].scopeSpans[0].spans[2].{field}"


def test_not_otlp_and_missing_scenario_are_errors(tmp_path):
    src = write_jsonl(tmp_path / "x.jsonl", [{"hello": 1}])
    with pytest.raises(JudgeInputError, match="not OTLP JSON"):
        import_otel(src, tmp_path / "t.jsonl", scenario="s")
    src = write_jsonl(tmp_path / "c.jsonl", [batch(*conversation_spans())])
    with pytest.raises(JudgeInputError, match="names no scenario"):
        import_otel(src, tmp_path / "t.jsonl")
    tagged = write_jsonl(tmp_path / "tagged.jsonl", [batch(*conversation_spans(),
                                                           resource={"judge.scenario": "from-resource"})])
    import_otel(tagged, tmp_path / "t2.jsonl")
    assert TraceReader(tmp_path / "t2.jsonl").header.scenario == "from-resource"


def test_streaming_hands_a_trace_over_before_reading_the_rest(tmp_path):
    other = "1" * 32
    src = tmp_path / "c.jsonl"
    src.write_text(json.dumps(batch(*conversation_spans())) + "\n"
                   + json.dumps(batch(*conversation_spans(other))) + "\n{broken\n", encoding="utf-8")
    traces = read_traces(src)
    spans, _ = next(traces)  # the first trace is complete once a batch brings nothing of it
    assert {s.trace_id for s in spans} == {TRACE} and len(spans) == 7
    with pytest.raises(JudgeInputError) as err:
        next(traces)
    assert err.value.line == 3


def test_several_traces_need_a_folder_and_late_spans_need_whole(tmp_path):
    other = "2" * 32
    src = write_jsonl(tmp_path / "c.jsonl", [batch(*conversation_spans()), batch(*conversation_spans(other))])
    with pytest.raises(JudgeInputError, match="more than one trace"):
        import_otel(src, tmp_path / "t.jsonl", scenario="s")
    summary = import_otel(src, tmp_path / "out", scenario="s")
    assert sorted(p.name for p in summary.files) == [f"{TRACE}.jsonl", f"{other}.jsonl"]
    one = import_otel(src, tmp_path / "one.jsonl", scenario="s", trace_id=other)
    assert one.runs == 1 and one.skipped == {"other trace": 1, "operation:embeddings": 1, "non-genai": 1}
    spans = conversation_spans()
    late = write_jsonl(tmp_path / "late.jsonl", [batch(*spans[:1]), batch(*conversation_spans(other)), batch(*spans[1:])])
    with pytest.raises(JudgeInputError, match="--whole") as err:
        import_otel(late, tmp_path / "late", scenario="s")
    assert err.value.line == 3
    assert import_otel(late, tmp_path / "late", scenario="s", whole=True).runs == 2


def test_base64_ids_and_sdk_span_json(tmp_path):
    spans = conversation_spans()
    for s in spans:
        s["traceId"] = base64.b64encode(bytes.fromhex(s["traceId"])).decode()
        s["spanId"] = base64.b64encode(bytes.fromhex(s["spanId"])).decode()
        if "parentSpanId" in s:
            s["parentSpanId"] = base64.b64encode(bytes.fromhex(s["parentSpanId"])).decode()
    src = write_jsonl(tmp_path / "b64.jsonl", [batch(*spans)])
    import_otel(src, tmp_path / "t.jsonl", scenario="s")
    header, events, _ = read_trace(tmp_path / "t.jsonl")
    assert header.trace_id == TRACE and _kinds(events) == EXPECTED

    def sdk(s: dict) -> dict:  # the Python SDK's span.to_json(), pretty-printed one after another
        attrs = {kv["key"]: next(iter(kv["value"].values())) for kv in s["attributes"]}
        return {"name": s["name"], "context": {"trace_id": "0x" + TRACE, "span_id": "0x" + bytes.fromhex(
                    base64.b64decode(s["spanId"]).hex()).hex()},
                "parent_id": ("0x" + base64.b64decode(s["parentSpanId"]).hex()) if "parentSpanId" in s else None,
                "start_time": "2023-11-14T22:13:%06.3fZ" % (20 + (int(s["startTimeUnixNano"]) - T0) / SEC),
                "end_time": "2023-11-14T22:13:%06.3fZ" % (20 + (int(s["endTimeUnixNano"]) - T0) / SEC),
                "status": {"status_code": "ERROR" if s["status"] else "UNSET"}, "attributes": attrs,
                "resource": {"attributes": {"service.name": "bot"}}}
    pretty = tmp_path / "sdk.json"
    pretty.write_text("\n".join(json.dumps(sdk(s), indent=2) for s in spans), encoding="utf-8")
    import_otel(pretty, tmp_path / "sdk.trace.jsonl", scenario="s")
    assert _kinds(read_trace(tmp_path / "sdk.trace.jsonl")[1]) == EXPECTED


def test_cli_import_otel(tmp_path):
    app = typer.Typer()

    @app.command()
    def _noop() -> None:
        pass

    register(app)
    src = write_jsonl(tmp_path / "c.jsonl", [batch(*conversation_spans())])
    result = CliRunner().invoke(app, ["import", "otel", str(src), "-o", str(tmp_path / "t.jsonl"), "--scenario", "s"])
    assert result.exit_code == 0, result.output
    rows = {line.split(None, 1)[0]: line.split(None, 1)[1].strip() for line in result.output.splitlines() if line}
    assert rows["events"].startswith("8 (") and rows["skipped"] == "non-genai 1, operation:embeddings 1"
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"nope": 1}])
    result = CliRunner().invoke(app, ["import", "otel", str(bad), "-o", str(tmp_path / "u.jsonl"), "--scenario", "s"])
    assert result.exit_code == 2 and result.output.startswith("error: ") and result.output.count("\n") == 1
