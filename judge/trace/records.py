"""Events as msgspec Structs: the grader's compiled read path.

The pydantic models of judge.model.events stay the source of the trace format and its JSON Schema;
these Structs mirror them field for field (tests/test_records.py holds them to that: the same
fields, defaults and constraints, and the same lines accepted and rejected, property-tested) so that
msgspec's decoder, a tagged union on `kind` with unknown fields forbidden, can read a clean line in
a fraction of pydantic's time. A line msgspec rejects is validated by pydantic after all (the reader
does it), so a line pydantic's lax mode accepts is still read, and an error still names its field
as precisely as before.

The grader's rules, windows and summaries read these Structs as they read pydantic events
(attributes, `kind`); `as_model` makes the pydantic event where a judge or an audit needs one,
`from_model` a Struct from a pydantic event (no second validation).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec
from msgspec import Meta, Struct
from pydantic import TypeAdapter

from judge.model import Event

NonEmpty = Annotated[str, Meta(min_length=1)]


class MetaRecord(Struct, forbid_unknown_fields=True, kw_only=True, gc=False):
    model: str | None = None
    prompt_version: str | None = None
    finish_reason: str | None = None
    latency_ms: Annotated[float, Meta(ge=0)] | None = None
    usage: dict[str, int] | None = None


class _Record(Struct, forbid_unknown_fields=True, kw_only=True, tag_field="kind", gc=False):
    kind: ClassVar[str]
    id: NonEmpty
    turn: Annotated[int, Meta(ge=0)]
    ts: str | float | None = None
    span_id: str | None = None
    parent_span_id: str | None = None
    meta: MetaRecord | None = None


class UserRecord(_Record, tag="user", kw_only=True):
    kind: ClassVar[Literal["user"]] = "user"
    text: str


class AssistantRecord(_Record, tag="assistant", kw_only=True):
    kind: ClassVar[Literal["assistant"]] = "assistant"
    text: str


class ToolCallRecord(_Record, tag="tool-call", kw_only=True):
    kind: ClassVar[Literal["tool-call"]] = "tool-call"
    call_id: NonEmpty
    tool: NonEmpty
    args: dict[str, Any] = {}


class ToolResultRecord(_Record, tag="tool-result", kw_only=True):
    kind: ClassVar[Literal["tool-result"]] = "tool-result"
    call_id: NonEmpty
    tool: str | None = None
    status: Literal["ok", "error", "timeout"]
    result: Any = None


class StateWriteRecord(_Record, tag="state-write", kw_only=True):
    kind: ClassVar[Literal["state-write"]] = "state-write"
    key: NonEmpty
    value: Any = None


class SummaryRecord(_Record, tag="summary", kw_only=True):
    kind: ClassVar[Literal["summary"]] = "summary"
    reason: Literal["compaction", "handoff"]
    text: str
    to: str | None = None


class SnapshotRecord(_Record, tag="snapshot", kw_only=True):
    kind: ClassVar[Literal["snapshot"]] = "snapshot"
    ref: NonEmpty
    phase: Literal["before", "after"] | None = None
    call_id: str | None = None
    digest: str | None = None
    state: dict[str, Any] | None = None


RECORDS: dict[str, type[_Record]] = {cls.kind: cls for cls in (
    UserRecord, AssistantRecord, ToolCallRecord, ToolResultRecord, StateWriteRecord, SummaryRecord, SnapshotRecord)}
Record = (UserRecord | AssistantRecord | ToolCallRecord | ToolResultRecord | StateWriteRecord | SummaryRecord
          | SnapshotRecord)
DECODE = msgspec.json.Decoder(Record).decode


class IdRecord(Struct, gc=False):
    """Just the id of an event line (the rest is skipped unread): to read a trace's ids again."""

    id: NonEmpty


DECODE_ID = msgspec.json.Decoder(IdRecord).decode
DecodeError = (msgspec.DecodeError, UnicodeError, RecursionError)  # what DECODE raises on a bad line (a str
# line holding a lone surrogate cannot even be encoded: UnicodeEncodeError)
_EVENT = TypeAdapter(Event)


def as_model(record: Any) -> Any:
    """The pydantic event of a record (a pydantic event is returned as it is)."""
    if not isinstance(record, _Record):
        return record
    return _EVENT.validate_python(msgspec.to_builtins(record))


def from_model(event: Any) -> _Record:
    """The record of a pydantic event, taking its (validated) values as they are."""
    cls = RECORDS[event.kind]
    fields = {name: getattr(event, name) for name in cls.__struct_fields__}
    meta = fields.get("meta")
    if meta is not None:
        fields["meta"] = MetaRecord(**{name: getattr(meta, name) for name in MetaRecord.__struct_fields__})
    return cls(**fields)
