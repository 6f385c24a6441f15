"""What the grader reads of an event, in either of its two forms: the pydantic models of
judge.model.events (the trace format, and what a judge is shown) or the msgspec records of
judge.trace.records (the compiled read path, held to the models field for field by
tests/test_records.py). The rules, the windows and the call logs take either, so they are annotated
with these Protocols rather than with `Event`; `is_tool_call` and `is_tool_result` narrow an event
to the fields of its kind by its `kind`, as the code reads it.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeGuard


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


class ToolCallLike(EventLike, Protocol):
    """A `tool-call` event, model or record."""

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


class ToolResultLike(EventLike, Protocol):
    """A `tool-result` event, model or record."""

    @property
    def call_id(self) -> str:
        """The id of the call it answers."""
        ...

    @property
    def tool(self) -> str | None:
        """The tool, when the result names it."""
        ...

    @property
    def status(self) -> str:
        """`ok`, `error` or `timeout`."""
        ...

    @property
    def result(self) -> Any:
        """What the tool returned."""
        ...


def is_tool_call(event: EventLike) -> TypeGuard[ToolCallLike]:
    """Whether the event is a tool call."""
    return event.kind == "tool-call"


def is_tool_result(event: EventLike) -> TypeGuard[ToolResultLike]:
    """Whether the event is a tool result."""
    return event.kind == "tool-result"
