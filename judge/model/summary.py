"""The audit of a compaction or handoff summary (judge.summaries.audit makes it): one finding per
ledger entry, merged from the layers that assessed it, each layer's own opinion beside it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from judge.model.base import EntryClass, Sensitivity, Strict
from judge.model.fingerprint import JudgeFingerprint
from judge.model.parts import JsonView, SetFields

SummaryStatus = Literal["preserved", "missing", "distorted", "obsolete-as-current",
                        "assumption-promoted", "not-required", "unassessed"]


class LayerFinding(Strict):
    """One layer's opinion of one entry (`status` None: the layer did not assess it)."""

    status: SummaryStatus | None = None
    evidence: str | None = Field(default=None, description="the summary words relied on")
    score: float | None = Field(default=None, description="semantic: best cosine; judge: confidence")
    confidence: float | None = Field(default=None, description=(
        "semantic: the fact-consistency model's probability of its status, when the model decided"))
    detail: str | None = None


class SummaryFinding(Strict):
    """One ledger entry in one summary: its merged status, the layer that decided it, and each
    layer's own finding (`layers`)."""

    key: str
    class_: EntryClass = Field(alias="class")
    sensitivity: Sensitivity
    required: bool
    status: SummaryStatus
    source: Literal["phrase", "semantic", "judge", "ledger"] | None = None
    evidence: str | None = None
    detail: str | None = None
    layers: dict[str, LayerFinding] = Field(default_factory=dict)
    disagreement: bool = False
    overridden: bool = False
    needs_review: bool = False


class AuditThresholds(JsonView):
    """The semantic layer's thresholds as used (judge.summaries.semantic.Thresholds)."""

    by_class: dict[str, float] = Field(description="per entry class, the score from which a unit carries an entry")
    default: float
    labels_sha256: str | None = Field(default=None, description="the labelled summaries they were fitted on")
    consistency_sha256: str | None = Field(default=None, description=(
        "the fact-consistency model's weights, when it ran"))


class LayerUsage(SetFields):
    """What the judge layer's call cost (`calls` 0 and `cache_hits` 1: answered from the cache)."""

    calls: int = 0
    cache_hits: int = 0
    attempts: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    transport_retries: int | None = None
    cost_usd: float | None = None


class SummaryJudgeInfo(JudgeFingerprint):
    """The judge layer's fingerprint and what its call cost."""

    usage: LayerUsage | None = None


class SummaryAudit(JsonView):
    """The audit of one summary: per-entry findings, merged, with each layer's own."""

    scenario: str
    summary_event: str | None = None
    reason: str | None = None
    turn: int = Field(description="the summary's turn")
    ledger_at: Literal["event", "after-turn"] = Field(default="after-turn", description=(
        "`event`: the ledger at the summary's event (a delta of its turn carried by a later event does not "
        "count); `after-turn`: after its turn (a summary given as text alone, without its position)"))
    passed: bool
    vetoed: bool
    inconclusive: bool = Field(default=False, description=(
        "the judge layer failed and a required entry no other layer could assess is unassessed, or no "
        "layer assessed any required entry"))
    lost: list[str] = Field(default_factory=list, description="required keys not preserved")
    findings: list[SummaryFinding]
    layers: list[str]
    thresholds: AuditThresholds | None = None
    judge: SummaryJudgeInfo | None = None
    warnings: list[str] = Field(default_factory=list)


class SummaryAuditReport(Strict):
    """What `judge audit-summary --json` writes."""

    audits: list[SummaryAudit]
    passed: bool

