"""The trace (JSONL): the run header, then one event per line, in order."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from judge.model.base import Strict
from judge.model.tools import ToolEntry


class AgentInfo(Strict):
    """The candidate agent, as the run header names it. It never reaches a judge (model-blind): its
    name, version and model are also masked where the trace text mentions them."""

    name: str | None = None
    version: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    sampling: dict[str, Any] | None = None


class RunHeader(Strict):
    """First line of a trace."""

    kind: Literal["run"]
    run_id: str = Field(min_length=1)
    scenario: str | None = Field(default=None, min_length=1, description=(
        "the scenario this run is of; optional for a trace graded against a policy (`--policy`)"))
    trace_id: str | None = None
    task_id: str | None = None
    session: str | None = Field(default=None, description="the scenario session this run is")
    agent: AgentInfo | None = None
    tool_schema_sha256: str | None = Field(default=None, description="hash of the tool schemas the agent saw")
    tools: list[ToolEntry] | None = Field(default=None, description=(
        "the tools the agent was given (OpenAI function schemas, bare or {type: function, function: {...}}): "
        "the toolkit of `allowed-tools` rules and of `judge lint` when no --tools file is given"))
    redaction: str | None = Field(default=None, description="redaction level applied by the recorder")
    retention: str | None = Field(default=None, description="retention note, e.g. '30 days, then deleted'")
    metadata: dict[str, Any] | None = None


class EventMeta(Strict):
    """Optional facts about how an event was produced (the model call behind it)."""

    model: str | None = None
    prompt_version: str | None = None
    finish_reason: str | None = None
    latency_ms: float | None = Field(default=None, ge=0)
    usage: dict[str, int] | None = None


class _EventBase(Strict):
    id: str = Field(min_length=1)
    turn: int = Field(ge=0, strict=True)
    ts: str | float | None = None
    span_id: str | None = None
    parent_span_id: str | None = None
    meta: EventMeta | None = None


class UserEvent(_EventBase):
    """A message from the user."""

    kind: Literal["user"]
    text: str


class AssistantEvent(_EventBase):
    """Text the agent said. Its own statements never become user instructions."""

    kind: Literal["assistant"]
    text: str


class ToolCallEvent(_EventBase):
    """The agent called `tool` with `args`; `call_id` pairs the call with its result."""

    kind: Literal["tool-call"]
    call_id: str = Field(min_length=1)
    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class ToolResultEvent(_EventBase):
    """What the call `call_id` returned, and whether it succeeded (`status`: ok, error or timeout)."""

    kind: Literal["tool-result"]
    call_id: str = Field(min_length=1)
    tool: str | None = None
    status: Literal["ok", "error", "timeout"]
    result: Any = None


class StateWriteEvent(_EventBase):
    """The agent wrote `value` to its state under the ledger key `key` (e.g. a claim of completion)."""

    kind: Literal["state-write"]
    key: str = Field(min_length=1)
    value: Any = None


class SummaryEvent(_EventBase):
    """A summary of the history so far: a `compaction`, or a `handoff` to `to`."""

    kind: Literal["summary"]
    reason: Literal["compaction", "handoff"]
    text: str
    to: str | None = None


class SnapshotEvent(_EventBase):
    """A reference to an environment state (page, order, file) and a small digest of it, taken
    before or after an action."""

    kind: Literal["snapshot"]
    ref: str = Field(min_length=1, description="where the full state lives (URI, path, object id)")
    phase: Literal["before", "after"] | None = None
    call_id: str | None = Field(default=None, description="the tool call the snapshot brackets")
    digest: str | None = Field(default=None, description="e.g. sha256 of the state")
    state: dict[str, Any] | None = Field(default=None, description="a few fields of the state")


Event = Annotated[
    UserEvent | AssistantEvent | ToolCallEvent | ToolResultEvent | StateWriteEvent | SummaryEvent | SnapshotEvent,
    Field(discriminator="kind"),
]
"""One trace event after the run header: one of the event models, told apart by `kind`."""
EVENT_KINDS = ("user", "assistant", "tool-call", "tool-result", "state-write", "summary", "snapshot")
"""The `kind` of every event model, in the order of the `Event` union."""
