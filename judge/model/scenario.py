"""The scenario file (YAML or JSON): the reviewed ledger fixture of one scenario."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from judge.model.base import DeltaOp, EntryClass, Persistence, Sensitivity, Source, Strict
from judge.model.rules import Rule, holds_rules
from judge.model.script import Script

DRAFT_SUFFIX = "-draft"
"""`judge draft` names a draft of scenario X `X-draft`, so an unreviewed draft never takes X's place
(on the review page, in `judge calibrate`); it still grades X's traces (`grades_traces_of`)."""


def grades_traces_of(scenario_id: str, trace_scenario: str) -> bool:
    """Whether the scenario `scenario_id` grades a trace whose run header names `trace_scenario`:
    the same id, or `scenario_id` is that scenario's draft (`X-draft` grades the traces of X)."""
    return scenario_id == trace_scenario or scenario_id == trace_scenario + DRAFT_SUFFIX


class LedgerEntry(Strict):
    """One piece of expected state as first stated (`source_turn` is the turn that stated it)."""

    key: str = Field(min_length=1)
    class_: EntryClass = Field(alias="class")
    value: Any = None
    source_turn: int = Field(ge=0, strict=True)
    persistence: Persistence = "task"
    sensitivity: Sensitivity = "normal"
    source: Source = "user"
    description: str | None = None


class Delta(Strict):
    """A reviewed transition of the ledger at one turn. `add` carries all the fields of a new entry."""

    turn: int = Field(ge=0, strict=True)
    op: DeltaOp
    key: str = Field(min_length=1)
    value: Any = None
    source: Source = "user"
    class_: EntryClass | None = Field(default=None, alias="class")
    persistence: Persistence | None = None
    sensitivity: Sensitivity | None = None
    description: str | None = None
    note: str | None = None


class ActionSet(Strict):
    """One allowed way through a checkpoint window: these tools in any order, those optionally."""

    required: list[str] = Field(default_factory=list, description="tool globs that must all be called")
    optional: list[str] = Field(default_factory=list, description="tool globs that may also be called")


class PathStep(Strict):
    """One step of a forbidden path: a call of a tool (glob), optionally with the status of its
    result and a text the result contains."""

    tool: str = Field(description="tool glob")
    status: Literal["ok", "error", "timeout"] | None = None
    result_contains: str | None = Field(default=None, description="case-insensitive text in the result")


class ForbiddenPath(Strict):
    """An ordered tool sequence (not necessarily adjacent) that breaks `key`, e.g. a refund after a
    lookup that said "already refunded"."""

    key: str = Field(min_length=1)
    steps: list[PathStep | str] = Field(min_length=1)


class Checkpoint(Strict):
    """Where the run is graded: the state after `after_turn`, for the keys it names (`must_retain`,
    `expect_completed`), with the tool paths the window since the previous checkpoint may take."""

    after_turn: int = Field(ge=0, strict=True)
    must_retain: list[str] = Field(default_factory=list)
    expect_completed: list[str] = Field(default_factory=list)
    allowed_actions: list[ActionSet] = Field(default_factory=list, description=(
        "allowed action sets; a window outside every set is marked for review, not failed"))
    read_only: list[str] = Field(default_factory=list, description=(
        "tool globs without side effects (left out of the side-effecting calls listed for review)"))
    forbidden_paths: list[ForbiddenPath] = Field(default_factory=list)
    description: str | None = None


class Session(Strict):
    """One session of a scenario that spans several runs: turns from `first_turn` on belong to it."""

    id: str = Field(min_length=1)
    first_turn: int = Field(ge=0, strict=True)


@holds_rules
class Scenario(Strict):
    """The reviewed ledger fixture of one scenario (YAML or JSON)."""

    # Built on first use: its rules are a union of the registered rule kinds (judge.model.rules).
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    id: str = Field(min_length=1)
    title: str | None = None
    description: str | None = None
    pair: str | None = None
    draft: bool = Field(default=False, description=(
        "true in a scenario `judge draft` proposed and no one has reviewed yet: grading refuses it "
        "(unless --allow-draft) until a reviewer removes the line"))
    extends: list[str] = Field(default_factory=list, description=(
        "policies whose entries (holding from turn 0) and rules this scenario adds to its own: a bundled "
        "name (`agent-safety`) or a path relative to this file; a key defined twice is an error"))
    sessions: list[Session] = Field(default_factory=list, description=(
        "for a scenario spanning several runs: `session` persistence ends with its session"))
    ledger: list[LedgerEntry] = Field(default_factory=list)
    deltas: list[Delta] = Field(default_factory=list)
    checkpoints: list[Checkpoint] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)
    script: Script | None = Field(default=None, description=(
        "what `judge run` says to the agent turn by turn and what its tools return (judge.model.script)"))

