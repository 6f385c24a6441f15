"""What the grader reads of an event, in either of its two forms: the pydantic models of
judge.model.events (the trace format, and what a judge is shown) or the msgspec records of
judge.trace.records (the compiled read path, held to the models field for field by
tests/test_records.py). The rules, their trackers, the windows and the call logs take either, so
they are annotated with these read-only Protocols (one view per event kind) rather than with
`Event`; tests/test_event_views.py holds every view to both forms.

Each kind's view declares its `kind` as that kind's Literal (a pydantic event's field, a record's
ClassVar), so a union of views narrows on `event.kind == "tool-call"` as the code reads it;
`is_tool_call` and `is_tool_result` narrow a bare `EventLike` the same way.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, TypeGuard, runtime_checkable


@runtime_checkable
class EventLike(Protocol):
    """The fields every event has, model or record."""

    @property
    def kind(self) -> str:
        """The event's kind (`user`, `tool-call`, ...): judge.model.EVENT_KINDS."""
        ...

    @property
    def id(self) -> str:
        """The event's id, unique in its trace."""
        ...

    @property
    def turn(self) -> int:
        """The turn the event is in."""
        ...


@runtime_checkable
class UserLike(EventLike, Protocol):
    """A `user` event, model or record."""

    @property
    def kind(self) -> Literal["user"]:
        """`user`."""
        ...

    @property
    def text(self) -> str:
        """What the user said."""
        ...


@runtime_checkable
class AssistantLike(EventLike, Protocol):
    """An `assistant` event, model or record."""

    @property
    def kind(self) -> Literal["assistant"]:
        """`assistant`."""
        ...

    @property
    def text(self) -> str:
        """What the agent said."""
        ...


@runtime_checkable
class ToolCallLike(EventLike, Protocol):
    """A `tool-call` event, model or record."""

    @property
    def kind(self) -> Literal["tool-call"]:
        """`tool-call`."""
        ...

    @property
    def call_id(self) -> str:
        """The id its result answers."""
        ...

    @property
    def tool(self) -> str:
        """The tool called."""
        ...

    @property
    def args(self) -> dict[str, Any]:
        """The call's arguments."""
        ...


@runtime_checkable
class ToolResultLike(EventLike, Protocol):
    """A `tool-result` event, model or record."""

    @property
    def kind(self) -> Literal["tool-result"]:
        """`tool-result`."""
        ...

    @property
    def call_id(self) -> str:
        """The id of the call it answers."""
        ...

    @property
    def tool(self) -> str | None:
        """The tool, when the result names it."""
        ...

    @property
    def status(self) -> Literal["ok", "error", "timeout"]:
        """`ok`, `error` or `timeout`."""
        ...

    @property
    def result(self) -> Any:
        """What the tool returned."""
        ...


@runtime_checkable
class StateWriteLike(EventLike, Protocol):
    """A `state-write` event, model or record."""

    @property
    def kind(self) -> Literal["state-write"]:
        """`state-write`."""
        ...

    @property
    def key(self) -> str:
        """The ledger key written."""
        ...

    @property
    def value(self) -> Any:
        """The value written."""
        ...


@runtime_checkable
class SummaryLike(EventLike, Protocol):
    """A `summary` event, model or record."""

    @property
    def kind(self) -> Literal["summary"]:
        """`summary`."""
        ...

    @property
    def reason(self) -> Literal["compaction", "handoff"]:
        """Why the history was summarised."""
        ...

    @property
    def text(self) -> str:
        """The summary."""
        ...

    @property
    def to(self) -> str | None:
        """Who a handoff goes to."""
        ...


@runtime_checkable
class SnapshotLike(EventLike, Protocol):
    """A `snapshot` event, model or record."""

    @property
    def kind(self) -> Literal["snapshot"]:
        """`snapshot`."""
        ...

    @property
    def ref(self) -> str:
        """Where the full state lives."""
        ...

    @property
    def phase(self) -> Literal["before", "after"] | None:
        """Taken before or after an action."""
        ...

    @property
    def call_id(self) -> str | None:
        """The tool call the snapshot brackets."""
        ...

    @property
    def digest(self) -> str | None:
        """A digest of the state."""
        ...

    @property
    def state(self) -> dict[str, Any] | None:
        """A few fields of the state."""
        ...


AnyEventLike = UserLike | AssistantLike | ToolCallLike | ToolResultLike | StateWriteLike | SummaryLike | SnapshotLike
"""An event of any kind, as the view of its kind: narrowed by `event.kind == ...`."""


def is_tool_call(event: EventLike) -> TypeGuard[ToolCallLike]:
    """Whether the event is a tool call."""
    return event.kind == "tool-call"


def is_tool_result(event: EventLike) -> TypeGuard[ToolResultLike]:
    """Whether the event is a tool result."""
    return event.kind == "tool-result"
