"""The judge plug-in point: what a checkpoint's judge is shown and what it returns.

The grader builds one `JudgeRequest` per checkpoint (the reviewed ledger at that checkpoint and the
trace slice since the previous one, already redacted) and merges the returned findings with the
deterministic ones (deterministic wins for safety-critical keys). A backend that cannot produce a
valid verdict returns `JudgeResult(verdict=None, error=...)`: a judge error, never a pass or a fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from judge.model import Event, JudgeVerdict


@dataclass(frozen=True)
class LedgerRow:
    """One ledger entry as the judge sees it at a checkpoint."""

    key: str
    class_: str
    value: Any
    status: str  # active | completed | revoked
    sensitivity: str
    persistence: str
    source_turn: int
    superseded: tuple[tuple[Any, int], ...] = ()  # (old value, turn it was replaced)
    description: str | None = None
    completed_turn: int | None = None  # a completed entry: the turn that completed it (last, if reopened)


@dataclass(frozen=True)
class JudgeRequest:
    scenario_id: str
    run_id: str
    after_turn: int
    from_turn: int  # first turn of the slice (previous checkpoint + 1)
    keys: tuple[str, ...]  # the keys the judge is asked about
    ledger: tuple[LedgerRow, ...]
    events: tuple[Event, ...]  # the slice, redacted; never the run header


@dataclass
class JudgeResult:
    verdict: JudgeVerdict | None
    error: str | None = None
    calls: int = 0
    cache_hits: int = 0
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Judge(Protocol):
    """A semantic judge. `fingerprint()`: what identifies it (prompt id, version, sha256, backend,
    model, sampling) as JSON data with the fields of judge.model.JudgeFingerprint, which the grade
    validates (calibration records are keyed on it)."""

    def fingerprint(self) -> dict[str, Any]: ...

    async def judge_checkpoint(self, request: JudgeRequest) -> JudgeResult: ...
