"""Pydantic models of every file format: the one source of the JSON Schemas (`judge schema`).

Scenario (the reviewed ledger fixture), trace events (JSONL), judge verdicts and the grade report.
Every model forbids unknown fields so that a typo in a fixture is an error, not a silent default.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

EntryClass = Literal["goal", "constraint", "fact", "permission", "completion", "uncertainty"]
Persistence = Literal["turn", "task", "session", "until-replaced"]
Sensitivity = Literal["normal", "costly", "safety-critical"]
Source = Literal["user", "tool", "agent"]
DeltaOp = Literal["add", "set", "complete", "revoke", "reopen"]
Verdict = Literal["violated", "upheld", "not-exercised"]
FindingVerdict = Literal["violated", "upheld", "not-exercised", "unassessed", "judge-error"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# ---------------------------------------------------------------- scenario


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
    tool: str = Field(description="tool glob")
    status: Literal["ok", "error", "timeout"] | None = None
    result_contains: str | None = Field(default=None, description="case-insensitive text in the result")


class ForbiddenPath(Strict):
    """An ordered tool sequence (not necessarily adjacent) that breaks `key`, e.g. a refund after a
    lookup that said "already refunded"."""

    key: str = Field(min_length=1)
    steps: list[PathStep | str] = Field(min_length=1)


class Checkpoint(Strict):
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


class _RuleBase(Strict):
    key: str = Field(min_length=1)
    id: str | None = Field(default=None, description="stable rule id; default check:key")


class ForbiddenCallRule(_RuleBase):
    """A call of `tool` (glob) whose arguments match every matcher in `args` (exact or glob)."""

    check: Literal["forbidden-call"]
    tool: str
    args: dict[str, Any] | None = None


class ScopeRule(_RuleBase):
    """Argument `arg` of `tool` must match one `allow` glob (when given) and no `deny` glob."""

    check: Literal["scope"]
    tool: str
    arg: str
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _needs_a_glob(self) -> "ScopeRule":
        if not self.allow and not self.deny:
            raise ValueError("a scope rule needs `allow` or `deny` globs")
        return self


class SupersededValueRule(_RuleBase):
    """After a `set`, argument `arg` of `tool` (any argument / any tool when omitted) must not
    carry a superseded value of the key."""

    check: Literal["superseded-value"]
    tool: str | None = None
    arg: str | None = None


class NotRepeatedRule(_RuleBase):
    """Once the key is completed (or `tool` already returned ok), `tool` is not called again,
    unless with the same idempotency key (`idempotency_arg`)."""

    check: Literal["not-repeated"]
    tool: str
    idempotency_arg: str | None = None


class ClaimedCompleteRule(_RuleBase):
    """A state-write claiming the key complete must follow an ok result of `tool` (or of the last
    tool called when none is named)."""

    check: Literal["claimed-complete"]
    tool: str | None = None


class SummaryPhrasesRule(_RuleBase):
    """On summary events: one of `require` must appear; none of `forbid` may."""

    check: Literal["summary-phrases"]
    require: list[str] = Field(default_factory=list)
    forbid: list[str] = Field(default_factory=list)


class AuthorisedRule(_RuleBase):
    """A side-effecting call of `tool` must be preceded by its authorisation, whatever its result:
    a user message with one of the `confirm` phrases since the previous such call (one confirmation
    authorises one call), or the `permission` ledger entry active at that turn."""

    check: Literal["authorised"]
    tool: str
    confirm: list[str] = Field(default_factory=list)
    permission: str | None = None

    @model_validator(mode="after")
    def _needs_an_authorisation(self) -> "AuthorisedRule":
        if not self.confirm and not self.permission:
            raise ValueError("an authorised rule needs `confirm` phrases or a `permission` key")
        return self


class EffectRule(_RuleBase):
    """An ok result of `tool` must be followed by the expected state change: its `snapshot` events
    (before/after, same call_id) must differ (in `field` of their state when given, else in digest)."""

    check: Literal["effect"]
    tool: str
    field: str | None = None


class ExpectedCallRule(_RuleBase):
    """The key (a completion) is done only by an ok call of `tool` whose arguments match `args`: every
    given argument equal (numbers numerically, lists as multisets, objects as subsets; the call may
    carry more). At a checkpoint that expects the key completed, no such call by then is a violation
    (the evidence: the last call of the tool that did not match, if any)."""

    check: Literal["expected-call"]
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class NoLeakRule(_RuleBase):
    """Values (or regex patterns) that belong to other users or workspaces must never appear in an
    assistant message, a tool argument or a summary: a leak, reported apart from drift."""

    check: Literal["no-leak"]
    values: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _needs_values(self) -> "NoLeakRule":
        if not self.values and not self.patterns:
            raise ValueError("a no-leak rule needs `values` or `patterns`")
        for pattern in self.patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid pattern {pattern!r}: {exc}") from None
        return self


Rule = Annotated[
    Union[
        ForbiddenCallRule,
        ScopeRule,
        SupersededValueRule,
        NotRepeatedRule,
        ClaimedCompleteRule,
        SummaryPhrasesRule,
        AuthorisedRule,
        EffectRule,
        NoLeakRule,
        ExpectedCallRule,
    ],
    Field(discriminator="check"),
]


class Scenario(Strict):
    """The reviewed ledger fixture of one scenario (YAML or JSON)."""

    id: str = Field(min_length=1)
    title: str | None = None
    description: str | None = None
    pair: str | None = None
    sessions: list[Session] = Field(default_factory=list, description=(
        "for a scenario spanning several runs: `session` persistence ends with its session"))
    ledger: list[LedgerEntry] = Field(default_factory=list)
    deltas: list[Delta] = Field(default_factory=list)
    checkpoints: list[Checkpoint] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)


# ---------------------------------------------------------------- trace


class AgentInfo(Strict):
    name: str | None = None
    version: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    sampling: dict[str, Any] | None = None


class RunHeader(Strict):
    """First line of a trace."""

    kind: Literal["run"]
    run_id: str = Field(min_length=1)
    scenario: str = Field(min_length=1)
    trace_id: str | None = None
    task_id: str | None = None
    session: str | None = Field(default=None, description="the scenario session this run is")
    agent: AgentInfo | None = None
    tool_schema_sha256: str | None = Field(default=None, description="hash of the tool schemas the agent saw")
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
    kind: Literal["user"]
    text: str


class AssistantEvent(_EventBase):
    kind: Literal["assistant"]
    text: str


class ToolCallEvent(_EventBase):
    kind: Literal["tool-call"]
    call_id: str = Field(min_length=1)
    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class ToolResultEvent(_EventBase):
    kind: Literal["tool-result"]
    call_id: str = Field(min_length=1)
    tool: str | None = None
    status: Literal["ok", "error", "timeout"]
    result: Any = None


class StateWriteEvent(_EventBase):
    kind: Literal["state-write"]
    key: str = Field(min_length=1)
    value: Any = None


class SummaryEvent(_EventBase):
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
    Union[UserEvent, AssistantEvent, ToolCallEvent, ToolResultEvent, StateWriteEvent, SummaryEvent,
          SnapshotEvent],
    Field(discriminator="kind"),
]
EVENT_KINDS = ("user", "assistant", "tool-call", "tool-result", "state-write", "summary", "snapshot")


# ---------------------------------------------------------------- judge verdict


class JudgeFinding(Strict):
    key: str
    verdict: Verdict
    evidence_event: str | None = None
    confidence: float = Field(ge=0.0, le=1.0)
    rationale: str | None = None


class JudgeVerdict(Strict):
    """What a judge returns for one checkpoint."""

    findings: list[JudgeFinding]


# ---------------------------------------------------------------- grade report


class Finding(Strict):
    key: str
    verdict: FindingVerdict
    source: Literal["deterministic", "judge"] | None = None
    evidence_event: str | None = None
    turn: int | None = None
    rule: str | None = None
    class_: EntryClass | None = Field(default=None, alias="class")
    sensitivity: Sensitivity | None = None
    detail: str | None = None
    confidence: float | None = None
    confidence_calibrated: float | None = None
    judge_verdict: Verdict | None = None
    overridden: bool = False
    disagreement: bool = False
    needs_review: bool = False
    unguarded: bool = False
    rationale: str | None = None


class PathReview(Strict):
    """A window whose tool calls fit no allowed action set: marked for review, not failed."""

    tools_called: list[str]
    side_effecting_calls: list[str] = Field(description="event ids of calls to non-read-only tools")


class CheckpointReport(Strict):
    after_turn: int
    implicit: bool = False
    findings: list[Finding]
    path_review: PathReview | None = None


class Divergence(Strict):
    turn: int
    key: str
    event: str
    class_: EntryClass = Field(alias="class")
    sensitivity: Sensitivity
    rule: str | None = None


class Leak(Strict):
    key: str
    event: str
    turn: int
    where: Literal["assistant", "tool-call", "summary"]
    rule: str


class Recovery(Strict):
    violated_at: int
    recovered_at: int | None = None
    recovered: bool


class Metrics(Strict):
    """Component metrics: the share of assessed findings upheld in each family (null when none)."""

    constraint_retention: float | None = None
    supersession_accuracy: float | None = None
    completion_integrity: float | None = None
    scope_fidelity: float | None = None
    recovery_coherence: float | None = None
    handoff_fidelity: float | None = None


class Cost(Strict):
    judge_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    judge_errors: int = 0


class RunReport(Strict):
    run_id: str
    scenario: str
    trace: str | None = None
    passed: bool
    eligible_for_release: bool
    quality_score: float | None
    first_divergence: Divergence | None
    checkpoints: list[CheckpointReport]
    recovered: dict[str, Recovery] = Field(default_factory=dict)
    metrics: Metrics
    slice: list[str]
    redactions: dict[str, int] = Field(default_factory=dict)
    leaks: list[Leak] = Field(default_factory=list)
    events: int = 0
    last_turn: int = 0
    cost: Cost = Field(default_factory=Cost)
    warnings: list[str] = Field(default_factory=list)
    summaries: list[dict[str, Any]] = Field(default_factory=list, description=(
        "the audit of each summary event (judge.summary.SummaryAudit): one finding per ledger entry"))
    provenance: dict[str, Any] | None = Field(default=None, description=(
        "what reproduces the run: candidate (model, sampling, prompt version, tool schema hash), "
        "judge fingerprint, package versions, sha256 of each input file"))


class GradeReport(Strict):
    judge: dict[str, Any] | None
    floor: float = 1.0
    runs: list[RunReport]


SCHEMAS: dict[str, type[BaseModel] | Any] = {
    "scenario": Scenario,
    "ledger-entry": LedgerEntry,
    "delta": Delta,
    "checkpoint": Checkpoint,
    "session": Session,
    "rule": Rule,
    "run-header": RunHeader,
    "event": Event,
    "user": UserEvent,
    "assistant": AssistantEvent,
    "tool-call": ToolCallEvent,
    "tool-result": ToolResultEvent,
    "state-write": StateWriteEvent,
    "summary": SummaryEvent,
    "snapshot": SnapshotEvent,
    "event-meta": EventMeta,
    "judge-verdict": JudgeVerdict,
    "grade-report": GradeReport,
}
