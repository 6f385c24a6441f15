"""The msgspec records mirror the pydantic events: the same fields and defaults, the same lines
accepted with the same values, and the reader's record path (msgspec first, pydantic for a line
msgspec refuses) reads exactly what the pydantic path reads, with the same error on a bad line.

msgspec alone is stricter than pydantic's lax mode (`"ts": true`, `"usage": {"a": 1.0}`, `NaN`,
lone surrogates): such a line is refused by msgspec and read by pydantic after all. The property that
matters is therefore: whatever msgspec accepts, pydantic accepts with the same values; and per line
and per trace, the record path and the pydantic path give the same events or the same one-line error.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import hypothesis
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from judge.errors import TraceError
from judge.model import EVENT_KINDS, Event
from judge.model.events import (
    AssistantEvent,
    SnapshotEvent,
    StateWriteEvent,
    SummaryEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserEvent,
)
from judge.trace import TraceReader
from judge.trace.records import DECODE, RECORDS, DecodeError, MetaRecord, as_model, from_model
from tests.hostile.planted import planted_trace
from tests.test_bad_input import TRACE_CASES

_EVENT = TypeAdapter(Event)
MODELS = {cls.model_fields["kind"].annotation.__args__[0]: cls for cls in (
    UserEvent, AssistantEvent, ToolCallEvent, ToolResultEvent, StateWriteEvent, SummaryEvent, SnapshotEvent)}
HEADER = json.dumps({"kind": "run", "run_id": "r-1", "scenario": "s"})


# ------------------------------------------------------------------ the same fields

@pytest.mark.parametrize("kind", EVENT_KINDS)
def test_each_record_has_the_fields_and_defaults_of_its_event(kind):
    model, record = MODELS[kind], RECORDS[kind]
    fields = {name: info for name, info in model.model_fields.items() if name != "kind"}
    assert set(record.__struct_fields__) == set(fields)
    info = msgspec.structs.fields(record)
    for field in info:
        pyd = fields[field.name]
        assert (field.required, pyd.is_required()) == (True, True) or not (field.required or pyd.is_required())
        if not field.required:
            default = field.default_factory() if field.default is msgspec.NODEFAULT else field.default
            assert default == pyd.get_default(call_default_factory=True), field.name


def test_meta_has_the_fields_of_event_meta():
    from judge.model.events import EventMeta
    assert set(MetaRecord.__struct_fields__) == set(EventMeta.model_fields)


# ------------------------------------------------------------------ generated lines

_SCALARS = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
            | st.text(max_size=6) | st.sampled_from(["", "ok", "x", "\u2028", "\ud800"]))
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
_TEXT = st.text(min_size=1, max_size=8) | st.sampled_from(["", " ", "a", "é", "\x00", "\u2028"])
_META = st.fixed_dictionaries({}, optional={
    "model": _TEXT, "prompt_version": _TEXT, "finish_reason": _TEXT,
    "latency_ms": st.floats(-1, 1e6, allow_nan=False) | st.integers(-1, 10**6),
    "usage": st.dictionaries(_TEXT, st.integers(-5, 2**40), max_size=2)})
_COMMON = {"ts": st.none() | _TEXT | st.floats(allow_nan=False) | st.integers(-2**66, 2**66),
           "span_id": st.none() | _TEXT, "parent_span_id": st.none() | _TEXT, "meta": st.none() | _META}
_FIELDS = {
    "user": ({"text": _TEXT}, {}),
    "assistant": ({"text": _TEXT}, {}),
    "tool-call": ({"call_id": _TEXT, "tool": _TEXT}, {"args": st.dictionaries(_TEXT, _JSON, max_size=3)}),
    "tool-result": ({"call_id": _TEXT, "status": st.sampled_from(["ok", "error", "timeout", "fine", ""])},
                    {"tool": st.none() | _TEXT, "result": _JSON}),
    "state-write": ({"key": _TEXT}, {"value": _JSON}),
    "summary": ({"reason": st.sampled_from(["compaction", "handoff", "other"]), "text": _TEXT},
                {"to": st.none() | _TEXT}),
    "snapshot": ({"ref": _TEXT}, {"phase": st.sampled_from([None, "before", "after", "during"]),
                                  "call_id": st.none() | _TEXT, "digest": st.none() | _TEXT,
                                  "state": st.none() | st.dictionaries(_TEXT, _JSON, max_size=2)}),
}


@st.composite
def events(draw) -> dict:
    """An event of any kind, usually valid, sometimes with a field missing, unknown, of another type
    or kind."""
    kind = draw(st.sampled_from(EVENT_KINDS))
    required, optional = _FIELDS[kind]
    event = {"id": draw(st.text(min_size=1, max_size=6)),
             "turn": draw(st.integers(0, 2**20) | st.sampled_from([0, 1, 2**63, 2**64, 2**70, -1]))}
    event["kind"] = kind
    event.update(draw(st.fixed_dictionaries(required, optional={**optional, **_COMMON})))
    change = draw(st.sampled_from(["none"] * 5 + ["drop", "extra", "retype", "rekind"]))
    names = sorted(event)
    if change == "drop":
        del event[draw(st.sampled_from(names))]
    elif change == "extra":
        event[draw(st.sampled_from(["mood", "Text", "kind2", "", "tool", "text"]))] = draw(_JSON)
    elif change == "retype":
        event[draw(st.sampled_from(names))] = draw(_JSON)
    elif change == "rekind":
        event["kind"] = draw(st.sampled_from([*EVENT_KINDS, "run", "thought", "User"]))
    return event


@st.composite
def lines(draw) -> str:
    event = draw(events())
    text = json.dumps(event, ensure_ascii=draw(st.booleans()))
    form = draw(st.sampled_from(["plain"] * 5 + ["spaced", "duplicate", "trailing"]))
    if form == "spaced":
        text = json.dumps(event, indent=None, separators=(" , ", " : "))
    elif form == "duplicate" and event:
        key = draw(st.sampled_from(sorted(event)))
        text = text[:-1] + f", {json.dumps(key)}: {json.dumps(draw(_JSON))}}}"
    elif form == "trailing":
        text += draw(st.sampled_from([" ", "\t", " x", "}", ",", "\r"]))
    return text


def _decoded(line: str):
    try:
        record = DECODE(line)
    except DecodeError:
        record = None
    try:
        event = _EVENT.validate_json(line)
    except ValidationError:
        event = None
    return record, event


def _read(line_list: list[str], *, records: bool, path: Path | None = None):
    """(the events as records, as text, and the redaction counts) or the one-line error, as a reader gives them."""
    if path is not None:
        path.write_text("".join(line + "\n" for line in line_list), encoding="utf-8", errors="surrogatepass")
    try:
        reader = TraceReader(path if path is not None else line_list, name="trace")
        read = list(reader.records()) if records else [from_model(event) for event in reader]
        return [repr(record) for record in read], reader.redactions  # repr: NaN equals itself
    except TraceError as exc:
        return str(exc)


def _both_paths_agree(line_list: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        by_pydantic = _read(line_list, records=False)
        assert _read(line_list, records=True) == by_pydantic
        try:
            "".join(line_list).encode("utf-8")
        except UnicodeEncodeError:
            return  # a lone surrogate in a str line: no file can hold it as UTF-8
        assert _read(line_list, records=True, path=path) == _read(line_list, records=False, path=path)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, derandomize=True)
@given(lines())
def test_what_msgspec_accepts_pydantic_accepts_with_the_same_values(line):
    record, event = _decoded(line)
    hypothesis.event(f"msgspec {'accepts' if record is not None else 'refuses'}, "
                     f"pydantic {'accepts' if event is not None else 'refuses'}")
    if record is not None:
        assert event is not None, line
        assert from_model(event) == record
        assert as_model(record) == event


@pytest.mark.slow
@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lines(), min_size=1, max_size=4))
def test_the_record_path_reads_what_the_pydantic_path_reads(line_list):
    _both_paths_agree([HEADER, *line_list])


@settings(max_examples=400, deadline=None, derandomize=True)
@given(events())
def test_a_valid_event_is_decoded_by_msgspec(event):
    """msgspec is no stricter than pydantic on what the format says, only on lax coercions: a line
    pydantic accepts and that holds no coercion (no bool or int where a float or a str is typed,
    no float where an int is) is decoded by msgspec, so the fast path is the common path."""
    line = json.dumps(event)
    record, pydantic_event = _decoded(line)
    if pydantic_event is not None and "\\ud8" not in line and "true" not in line and "false" not in line:
        meta = event.get("meta") or {}
        if not any(isinstance(v, float) for v in (meta.get("usage") or {}).values()):
            assert record is not None, line


# ------------------------------------------------------------------ hostile lines

def _hostile_lines() -> list[str]:
    base = {"id": "h1", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "t"}
    out = [json.dumps(record, ensure_ascii=ascii_) for record in planted_trace("s")[1:] for ascii_ in (True, False)]
    for depth in (150, 189, 190, 199, 200, 201, 260, 1100):
        out.append(json.dumps(base)[:-1] + ', "args": {"a": ' + "[" * depth + "]" * depth + "}}")
    out += [
        '{"id": "h1", "turn": 1, "kind": "user", "text": "x \\udc00 y"}',
        '{"id": "h1", "turn": 1, "kind": "user", "text": "x \\ud83d\\ude00 y"}',
        '{"id": "h1", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "t", "args": {"a": NaN}}',
        '{"id": "h1", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "t", "args": {"a": Infinity}}',
        '{"id": "h1", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "t", "args": {"a": 1e400}}',
        '{"id": "h1", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "t", "args": {"a": -0.0}}',
        '{"id": "h1", "turn": 1e0, "kind": "user", "text": "x"}',
        '{"id": "h1", "turn": "1", "kind": "user", "text": "x"}',
        '{"id": "h1", "turn": 1, "kind": "user", "text": "x", "ts": true}',
        '{"id": "h1", "turn": 1, "kind": "user", "text": "x", "meta": {"usage": {"in": "5"}}}',
        '{"id": "h1", "turn": 1, "kind": "user", "text": "x", "meta": {"latency_ms": "2.5"}}',
        '{"id": "h1", "turn": 1, "kind": "user", "kind": "assistant", "text": "x"}',
        '{"id": "h1", "turn": 1, "text": "x", "kind": "user"}',
        '\ufeff{"id": "h1", "turn": 1, "kind": "user", "text": "x"}',
        '{"id": "h1", "turn": 1, "kind": "user", "text": "x"}\x00',
        '{"id": "h1", "turn": 1, "kind": "user", "text": "tab\there"}',
        '{"id": "h1", "turn": 1, "kind": "user", "text": "x" } ',
        '  ', '', '{}', '[]', 'null', '"x"', '{"kind": null}', '{"kind": 1}',
        '{"id": "h1", "turn": 1, "kind": "user", "text": "' + "x" * 70_000 + '"}',
    ]
    for case in TRACE_CASES:
        if isinstance(case.records, list):
            out += [line if isinstance(line, str) else json.dumps(line) for line in case.records[1:]]
    return out


HOSTILE = _hostile_lines()


@pytest.mark.parametrize("index", range(len(HOSTILE)))
def test_each_hostile_line_is_read_alike_by_both_paths(index):
    line = HOSTILE[index]
    record, event = _decoded(line)
    if record is not None and event is not None:
        assert from_model(event) == record
    _both_paths_agree([HEADER, line])


def test_the_bad_input_traces_give_the_same_error_by_both_paths():
    for case in TRACE_CASES:
        if isinstance(case.records, list):
            line_list = [line if isinstance(line, str) else json.dumps(line) for line in case.records]
            by_pydantic = _read(line_list, records=False)
            assert _read(line_list, records=True) == by_pydantic, case.name


# ------------------------------------------------------------------ repeated keys

def _objects(value, path=""):
    """(dotted path, object) of every JSON object in `value`, itself first (list indices left out)."""
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from _objects(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item, path)


def _written(value, target, key, first, ascii_: bool, colon: str) -> str:
    """`value` as JSON, with `key` of the object `target` written twice: `first`, then its own value
    (so a decoder that keeps the last reads `value`)."""
    def dump(item) -> str:
        if isinstance(item, dict):
            pairs = [(k, v) for k, v in item.items()]
            if item is target:
                at = [k for k, _ in pairs].index(key)
                pairs.insert(at, (key, first))
            return "{" + ", ".join(json.dumps(k, ensure_ascii=ascii_) + colon + dump(v) for k, v in pairs) + "}"
        if isinstance(item, list):
            return "[" + ", ".join(dump(v) for v in item) + "]"
        return json.dumps(item, ensure_ascii=ascii_)
    return dump(value)


@settings(max_examples=600, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(events(), st.data())
def test_a_key_written_twice_anywhere_is_refused_by_both_paths_with_its_path(event, data):
    """However the line is spaced or escaped, and whatever the first copy holds (quotes, escapes, an
    object), a repeated key is a one-line error naming its dotted path: the cheap quote count lets
    none through (judge.trace.duplicates)."""
    once = json.dumps(event)
    if isinstance(_read([HEADER, once], records=True), str):
        return  # an event the reader refuses anyway
    path, target = data.draw(st.sampled_from([(p, o) for p, o in _objects(event) if o]))
    key = data.draw(st.sampled_from(sorted(target)))
    first = data.draw(_JSON | st.sampled_from(['"', 'a\\"b', "\\", {"k": '"'}, [1, '"'], None]))
    twice = _written(event, target, key, first, data.draw(st.booleans()),
                     data.draw(st.sampled_from([": ", ":", " : ", "\t:"])))
    field = f"{path}.{key}" if path else key
    for records in (True, False):
        found = _read([HEADER, twice], records=records)
        assert isinstance(found, str) and found.startswith("trace:2: ") and "duplicate key" in found, (twice, found)
        if field.isascii() and field.isprintable():  # (the error escapes other characters)
            assert found.startswith(f"trace:2: {field}: duplicate key"), (twice, found)


def test_a_line_read_with_an_explicit_null_or_empty_arguments_is_no_duplicate():
    """The lines whose quotes the count cannot foresee (an optional field written null, `"args": {}`)
    are parsed again and read as they are."""
    lines = ['{"id": "a", "turn": 1, "kind": "user", "text": "hi", "ts": null, "meta": null}',
             '{"id": "b", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "t", "args": {}}',
             '{"id": "c", "turn": 1, "kind": "tool-call", "call_id": "c2", "tool": "t", "args" : {}}',
             '{"id": "d", "turn": 1, "kind": "tool-result", "call_id": "c1", "status": "ok", "result": null}',
             '{"id": "e", "turn": 1, "kind": "assistant", "text": "say \\"hi\\": \\\\ done"}']
    for records in (True, False):
        found = _read([HEADER, *lines], records=records)
        assert not isinstance(found, str) and len(found[0]) == 5, found
