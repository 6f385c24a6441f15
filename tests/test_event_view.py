"""The events-or-records Protocols (judge.model.event_view) are true of both forms an event has:
every member they declare is a field of the pydantic model and of the msgspec record of its kind, the
kind guards narrow by `kind` alone, and mypy accepts both forms where a Protocol is asked for and
refuses an event of another kind."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from judge.model import EVENT_KINDS
from judge.model import events as models
from judge.model.event_view import EventLike, ToolCallLike, ToolResultLike, is_tool_call, is_tool_result
from judge.trace.records import RECORDS, from_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = {"user": models.UserEvent, "assistant": models.AssistantEvent, "tool-call": models.ToolCallEvent,
          "tool-result": models.ToolResultEvent, "state-write": models.StateWriteEvent,
          "summary": models.SummaryEvent, "snapshot": models.SnapshotEvent}


def _members(protocol: type) -> set[str]:
    return {name for cls in protocol.__mro__ for name, value in vars(cls).items() if isinstance(value, property)}


@pytest.mark.parametrize(("protocol", "kinds"), [(EventLike, EVENT_KINDS), (ToolCallLike, ["tool-call"]),
                                                 (ToolResultLike, ["tool-result"])])
def test_every_member_is_a_field_of_the_model_and_of_the_record(protocol, kinds):
    members = _members(protocol)
    assert {"kind", "id", "turn"} <= members
    for kind in kinds:
        assert members <= set(MODELS[kind].model_fields), (protocol.__name__, kind)
        assert members - {"kind"} <= set(RECORDS[kind].__struct_fields__), (protocol.__name__, kind)
        assert RECORDS[kind].kind == kind


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
from judge.model import ToolCallEvent, ToolResultEvent, UserEvent
from judge.model.event_view import EventLike, ToolCallLike, ToolResultLike
from judge.trace.records import ToolCallRecord, ToolResultRecord, UserRecord


def take(event: EventLike) -> None: ...
def call(event: ToolCallLike) -> None: ...
def result(event: ToolResultLike) -> None: ...


def probe(a: ToolCallEvent, b: ToolResultEvent, c: UserEvent, d: ToolCallRecord, e: ToolResultRecord,
          f: UserRecord) -> None:
    take(a)
    take(b)
    take(c)
    take(d)
    take(e)
    take(f)
    call(a)
    call(d)
    result(b)
    result(e)
    call(c)  # refused
    result(f)  # refused
'''


@pytest.mark.slow
def test_mypy_takes_both_forms_and_refuses_another_kind(tmp_path):
    probe = tmp_path / "probe_events.py"
    probe.write_text(inspect.cleandoc(PROBE) + "\n", encoding="utf-8")
    done = subprocess.run([str(Path(sys.executable).parent / "mypy"), "--config-file", "pyproject.toml", str(probe)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["23", "24"], done.stdout
    assert '"UserEvent"; expected "ToolCallLike"' in errors[0] and '"UserRecord"; expected "ToolResultLike"' in errors[1]
