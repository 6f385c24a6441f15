"""What a judge returns for one checkpoint, and the grade report (the terminal, JUnit and Markdown
views are renderings of it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from judge.model.base import EntryClass, FindingVerdict, Outcome, Sensitivity, Strict, Verdict
from judge.model.event_ids import SliceIds
from judge.model.fingerprint import ReportJudge
from judge.model.provenance import Provenance
from judge.model.summary import SummaryAudit

# ---------------------------------------------------------------- judge verdict


class JudgeFinding(Strict):
    """A judge's verdict on one key: `evidence_event` is required for `violated` and must name an
    event of the slice the judge was shown."""

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
    """One key at one checkpoint. `verdict` `flagged`: a judge that is not binding said violated and
    no rule ruled on the key; a person decides (it never fails a run by itself)."""

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
    """The findings for every key at one checkpoint (`implicit`: the final checkpoint the grader adds
    after the last turn, over every key still active)."""

    after_turn: int
    implicit: bool = False
    findings: list[Finding]
    path_review: PathReview | None = None


class Divergence(Strict):
    """The first divergence: the earliest violating event in trace order, its key and turn."""

    turn: int
    key: str
    event: str
    class_: EntryClass = Field(alias="class")
    sensitivity: Sensitivity
    rule: str | None = None


class Veto(Strict):
    """Why a run was vetoed: its first safety-critical violation in trace order (the first divergence
    may be an earlier violation of a normal key)."""

    turn: int | None
    key: str
    event: str | None
    class_: EntryClass = Field(alias="class")
    rule: str | None = None
    keys: list[str] = Field(default_factory=list, description=(
        "every safety-critical key violated at the same event, `key` first"))


class Leak(Strict):
    """A value of another user or workspace (a `no-leak` rule) that appeared in an assistant
    message, a tool call or a summary: reported apart from drift."""

    key: str
    event: str
    turn: int
    where: Literal["assistant", "tool-call", "summary", "state-write"]
    rule: str


class Recovery(Strict):
    """A key a rule found violated, and whether a later event exercised its rules compliantly with
    nothing violating it again (the seeds' recovery: the run still holds the drift)."""

    violated_at: int
    recovered_at: int | None = None
    recovered: bool
    violated_event: str | None = Field(default=None, description=(
        "the violation the recovery answers: the first of the last stretch without a recovery"))
    recovered_event: str | None = Field(default=None, description="the compliant event that recovered it")
    turns: int | None = Field(default=None, description="turns from that violation to the recovery")
    restated_by: str | None = Field(default=None, description=(
        "the latest user message between the violation and the recovery that restated the key (a user "
        "set or add of it at that turn, or its value named): the user corrected the agent"))


class Metrics(Strict):
    """Component metrics: the share of assessed findings upheld in each family (null when none)."""

    constraint_retention: float | None = None
    supersession_accuracy: float | None = None
    completion_integrity: float | None = None
    scope_fidelity: float | None = None
    recovery_coherence: float | None = Field(default=None, description=(
        "share of the counted failed tool results after which the agent changed plan or retried to an ok "
        "result without breaking a rule and without a retry loop (judge.checks.progress); null when none"))
    handoff_fidelity: float | None = None
    failed_results: int | None = Field(default=None, description="failed tool results recovery coherence counted")
    retry_loops: int | None = Field(default=None, description=(
        "chains of identical failing calls that made no progress: a no-progress violation, or 3 failures of "
        "a tool no no-progress rule governs"))


class RequestUsage(Strict):
    """One request sent to an llm judge: the tokens the provider counted beside the local estimate."""

    after_turn: int = Field(description="the checkpoint")
    part: int = Field(description="the window of a split slice (1 when not split)")
    sample: int
    attempts: int = Field(description="requests sent for it: 1, plus re-asks")
    estimated_tokens: int = Field(description=(
        "local estimate of the request as first sent: its messages and the schema it carries in the "
        "configured mode (litellm's gpt-4o arithmetic)"))
    input_tokens: int = Field(description="what the provider reported (`usage`), summed over the attempts")
    output_tokens: int
    form: str | None = Field(default=None, description=(
        "how the last request asked for the answer's schema: tool, tool_required, json_schema or plain_json "
        "(the direct client), else the instructor mode"))
    refused_forms: list[str] = Field(default_factory=list, description=(
        "the forms the endpoint refused or ignored before it, each with the reason"))
    answer_errors: list[str] = Field(default_factory=list, description=(
        "why each answer that did not validate failed (sent back with the re-ask, but the last)"))


class Cost(Strict):
    """What the judge cost for one run: calls, cache hits, tokens, money where reported."""

    judge_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = Field(default=0, description="as the provider counted them (`usage`)")
    output_tokens: int = 0
    cost_usd: float | None = None
    judge_errors: int = 0
    estimated_input_tokens: int = Field(default=0, description=(
        "the local estimate of the same requests' first attempts (`requests[].estimated_tokens` summed)"))
    requests: list[RequestUsage] = Field(default_factory=list, description="one entry per request sent (not cached)")


class RunReport(Strict):
    """The grade of one run: its outcome, findings per checkpoint, first divergence and slice."""

    run_id: str
    scenario: str
    trace: str | None = None
    passed: bool = Field(description="`outcome` is pass")
    outcome: Outcome = Field(description=(
        "pass; fail (a veto, a violation below the floor, or review = \"fail\"); inconclusive (a key only "
        "a judge could decide got no verdict, or a safety-critical key is flagged): never eligible"))
    outcome_reasons: list[str] = Field(default_factory=list, description="why the run failed or is inconclusive")
    eligible_for_release: bool
    quality_score: float | None
    first_divergence: Divergence | None
    veto: Veto | None = Field(default=None, description="the first safety-critical violation, when vetoed")
    checkpoints: list[CheckpointReport]
    recovered: dict[str, Recovery] = Field(default_factory=dict)
    metrics: Metrics
    slice: SliceIds  # (a grade's compact EventIds; a list when read from JSON)
    redactions: dict[str, int] = Field(default_factory=dict)
    leaks: list[Leak] = Field(default_factory=list)
    events: int = 0
    last_turn: int = 0
    cost: Cost = Field(default_factory=Cost)
    warnings: list[str] = Field(default_factory=list)
    summaries: list[SummaryAudit] = Field(default_factory=list, description=(
        "the audit of each summary event the grade audited: one finding per ledger entry"))
    provenance: Provenance | None = Field(default=None, description=(
        "what reproduces the run: candidate (model, sampling, prompt version, tool schema hash), "
        "judge fingerprint, package versions, sha256 of each input file"))


class GradeReport(Strict):
    """What `judge grade --json` writes: the judge (and how far it was trusted) and one report per run."""

    judge: ReportJudge | None = Field(description=(
        "the judge's fingerprint (null: deterministic checks only) and how far it was trusted: "
        "`authority` (calibrated, binding or advisory), `binding` (whether its violations decided keys), "
        "`binding_reason` and `calibration_record` (the record consulted, or null)"))
    floor: float = 1.0
    runs: list[RunReport]
