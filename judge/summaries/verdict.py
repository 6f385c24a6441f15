"""What the semantic layer of the summary audit decides on, and what it returns: a ledger entry as the
audit sees it, a verdict, and the fact-consistency model's opinion (judge.summaries.rules decides;
judge.summaries.restrictions reads restrictions; both return these)."""

from __future__ import annotations

from dataclasses import dataclass

from judge.judges.base import LedgerRow
from judge.model.summary import SummaryStatus


@dataclass(frozen=True, kw_only=True)
class AuditEntry(LedgerRow):
    """One ledger entry as the audit sees it at the summary's turn: the row a judge is shown
    (judge.judges.base.LedgerRow, its nine fields), with whether the summary must carry it."""

    source: str  # of the current version: user | tool | agent
    required: bool
    reason: str  # why (not) required


@dataclass(frozen=True)
class Verdict:
    status: SummaryStatus
    evidence: str | None
    score: float | None
    detail: str
    confidence: float | None = None  # the fact model's probability of `status`, when it decided


@dataclass(frozen=True)
class ModelVerdict:
    """The fact-consistency model's opinion of a restated fact (judge.summaries.facts)."""

    status: SummaryStatus  # preserved | distorted | missing
    confidence: float
    evidence: str | None
    detail: str
