"""The event views (judge.model.event_view) are true of both forms an event has: every attribute a
kind's view declares is a field of that kind's pydantic model and of its msgspec record, of the same
type, and its `kind` is that kind's Literal; a sample event of each kind from the bundled examples'
traces, in both forms, is an instance of exactly the runtime-checkable views whose attributes it
has; the kind guards narrow by `kind` alone; and mypy accepts both forms where a view is asked for,
narrows a union of views on `event.kind`, and refuses an event of another kind."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

import pytest
from pydantic import TypeAdapter

from judge.model import EVENT_KINDS, Event
from judge.model import event_view as views
from judge.model import events as models
from judge.model.event_view import AnyEventLike, EventLike, ToolCallLike, is_tool_call, is_tool_result
from judge.trace.records import DECODE, RECORDS, from_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = {"user": models.UserEvent, "assistant": models.AssistantEvent, "tool-call": models.ToolCallEvent,
          "tool-result": models.ToolResultEvent, "state-write": models.StateWriteEvent,
          "summary": models.SummaryEvent, "snapshot": models.SnapshotEvent}
# No bundled trace has a snapshot event: its sample is made here (both forms, as for the others).
SNAPSHOT = models.SnapshotEvent(kind="snapshot", id="s1", turn=2, ref="order/7", phase="after", call_id="c1",
                                digest="sha256:ab", state={"status": "paid"})


def declared(view: type) -> dict[str, Any]:
    """The attributes a view declares (its properties and plain annotations, with its bases'),
    each with its type as the view's annotation reads."""
    out: dict[str, Any] = {}
    for cls in reversed(view.__mro__):
        if cls is object or cls is Protocol or not getattr(cls, "_is_protocol", False):
            continue
        space = vars(sys.modules[cls.__module__])
        for name, value in vars(cls).items():
            if isinstance(value, property) and value.fget is not None:
                out[name] = typing.get_type_hints(value.fget, space)["return"]
        out.update(typing.get_type_hints(cls, space))
    return out


def kind_of(view: type) -> str:
    """The event kind a view is of: the one value of its `kind` Literal."""
    kind = declared(view)["kind"]
    assert typing.get_origin(kind) is Literal, (view.__name__, kind)
    (value,) = typing.get_args(kind)
    return str(value)


def fields_of(cls: type) -> dict[str, Any]:
    """A model's or a record's fields and their types (Annotated constraints and ClassVar aside)."""
    if hasattr(cls, "model_fields"):
        return {name: info.annotation for name, info in cls.model_fields.items()}
    hints = typing.get_type_hints(cls)
    return {name: typing.get_args(hint)[0] if typing.get_origin(hint) is ClassVar else hint
            for name, hint in hints.items()}


def drift(view: type, cls: type) -> list[str]:
    """What a view declares that the model or record `cls` lacks, or types otherwise."""
    fields = fields_of(cls)
    return [f"{name}: {'missing' if name not in fields else f'{fields[name]} is not {hint}'}"
            for name, hint in declared(view).items() if fields.get(name, object()) != hint]


VIEWS = {kind_of(view): view for view in typing.get_args(AnyEventLike)}


def test_every_kind_has_one_view_in_the_union():
    assert list(VIEWS) == list(EVENT_KINDS)
    assert {"kind", "id", "turn"} <= set(declared(EventLike))
    for view in VIEWS.values():
        assert EventLike in view.__mro__ and getattr(view, "_is_runtime_protocol", False), view.__name__


@pytest.mark.parametrize("kind", EVENT_KINDS)
def test_every_attribute_a_view_declares_is_a_field_of_the_model_and_of_the_record(kind):
    view = VIEWS[kind]
    assert drift(view, MODELS[kind]) == [], (view.__name__, MODELS[kind].__name__)
    assert drift(view, RECORDS[kind]) == [], (view.__name__, RECORDS[kind].__name__)
    assert RECORDS[kind].kind == kind


def test_a_view_naming_an_attribute_the_event_lacks_is_drift():
    class Drifted(ToolCallLike, Protocol):
        @property
        def timeout(self) -> float: ...

    class Retyped(ToolCallLike, Protocol):
        @property
        def args(self) -> list[Any]: ...

    assert drift(Drifted, models.ToolCallEvent) == ["timeout: missing"]
    assert drift(Drifted, RECORDS["tool-call"]) == ["timeout: missing"]
    assert drift(Retyped, models.ToolCallEvent) == [f"args: {dict[str, Any]} is not {list[Any]}"]
    assert drift(views.UserLike, models.AssistantEvent) == ["kind: typing.Literal['assistant'] is not "
                                                            "typing.Literal['user']"]


def _samples() -> dict[str, tuple[Any, Any]]:
    """The first event of each kind in the bundled examples' traces: (pydantic event, record)."""
    adapter = TypeAdapter(Event)
    out: dict[str, tuple[Any, Any]] = {}
    for trace in sorted(ROOT.glob("examples/*/*.jsonl")):
        for line in trace.read_bytes().splitlines():
            kind = json.loads(line).get("kind")
            if kind != "run" and kind not in out:
                out[kind] = (adapter.validate_json(line), DECODE(line))
    return out


def test_a_sample_of_each_kind_in_both_forms_is_an_instance_of_the_views_it_has_the_attributes_of():
    samples = _samples()
    assert set(samples) == set(EVENT_KINDS) - {"snapshot"}, "the examples' traces lost a kind: sample it here"
    samples["snapshot"] = (SNAPSHOT, from_model(SNAPSHOT))
    for kind, forms in samples.items():
        for event in forms:
            assert event.kind == kind
            assert isinstance(event, VIEWS[kind]) and isinstance(event, EventLike), (kind, type(event).__name__)
            for view in VIEWS.values():  # a runtime check reads names only: UserLike fits an assistant event
                has = set(declared(view)) <= set(fields_of(type(event))) | {"kind"}
                assert isinstance(event, view) == has, (kind, type(event).__name__, view.__name__)


def test_the_guards_narrow_by_kind_for_models_and_records():
    call = models.ToolCallEvent(kind="tool-call", id="e1", turn=1, call_id="c1", tool="t")
    result = models.ToolResultEvent(kind="tool-result", id="e2", turn=1, call_id="c1", status="ok")
    user = models.UserEvent(kind="user", id="e0", turn=1, text="hi")
    for event in (call, from_model(call)):
        assert is_tool_call(event) and not is_tool_result(event)
    for event in (result, from_model(result)):
        assert is_tool_result(event) and not is_tool_call(event)
    for event in (user, from_model(user)):
        assert not is_tool_call(event) and not is_tool_result(event)


PROBE = '''
from judge.model import events as m
from judge.model.event_view import (AnyEventLike, AssistantLike, EventLike, SnapshotLike, StateWriteLike, SummaryLike,
                                    ToolCallLike, ToolResultLike, UserLike)
from judge.trace import records as r


def take(event: EventLike) -> None: ...
def user(event: UserLike) -> None: ...
def said(event: AssistantLike) -> None: ...
def call(event: ToolCallLike) -> None: ...
def result(event: ToolResultLike) -> None: ...
def write(event: StateWriteLike) -> None: ...
def summary(event: SummaryLike) -> None: ...
def snapshot(event: SnapshotLike) -> None: ...


def narrow(event: AnyEventLike) -> object:
    if event.kind == "tool-call":
        return event.args
    if event.kind == "tool-result":
        return event.call_id
    if event.kind == "state-write":
        return event.key
    if event.kind == "snapshot":
        return event.ref
    return event.text  # a user or assistant message, or a summary


def probe(a: m.UserEvent, b: m.AssistantEvent, c: m.ToolCallEvent, d: m.ToolResultEvent, e: m.StateWriteEvent,
          f: m.SummaryEvent, g: m.SnapshotEvent, h: r.UserRecord, i: r.AssistantRecord, j: r.ToolCallRecord,
          k: r.ToolResultRecord, l: r.StateWriteRecord, n: r.SummaryRecord, o: r.SnapshotRecord) -> None:
    user(a); said(b); call(c); result(d); write(e); summary(f); snapshot(g)
    user(h); said(i); call(j); result(k); write(l); summary(n); snapshot(o)
    take(a); take(o); narrow(c); narrow(o)
    call(a)  # refused
    result(h)  # refused
    user(i)  # refused: the kind's Literal tells a user message from an assistant's
'''


@pytest.mark.slow
def test_mypy_takes_both_forms_narrows_on_kind_and_refuses_another_kind(tmp_path):
    probe = tmp_path / "probe_events.py"
    text = inspect.cleandoc(PROBE) + "\n"
    probe.write_text(text, encoding="utf-8")
    done = subprocess.run([str(Path(sys.executable).parent / "mypy"), "--config-file", "pyproject.toml", str(probe)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    refused = [n for n, line in enumerate(text.splitlines(), start=1) if "# refused" in line]
    assert sorted({int(line.split(":")[1]) for line in errors}) == refused, done.stdout
    assert '"UserEvent"; expected "ToolCallLike"' in errors[0] and '"UserRecord"; expected "ToolResultLike"' in errors[1]
    assert '"AssistantRecord"; expected "UserLike"' in errors[2]
