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
    """One ledger entry as the judge sees it at a checkpoint.

    Attributes:
        key: The entry's key (as in the scenario's `ledger`).
        class_: Its class: goal, constraint, fact, permission, completion or uncertainty.
        value: Its current value.
        status: `active`, `completed` or `revoked` at the checkpoint.
        sensitivity: `normal`, `costly` or `safety-critical`.
        persistence: `turn`, `task`, `session` or `until-replaced`.
        source_turn: The turn that first stated it.
        superseded: Its earlier values, each with the turn that replaced it, oldest first.
        description: The scenario's words for the judge, if any.
        completed_turn: For a completed entry, the turn that completed it (the last, if reopened).
    """

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
    """What a judge is shown for one checkpoint; built by the grader, never by a backend.

    Attributes:
        scenario_id: The scenario's `id`.
        run_id: The run's `run_id` (from the trace header; the header itself is never shown).
        after_turn: The checkpoint: the judge answers for the state after this turn.
        from_turn: The slice's first turn (the previous checkpoint's turn + 1).
        keys: The keys the judge is asked about; an answer may name no other.
        ledger: The reviewed ledger at the checkpoint: active, superseded, completed and revoked
            entries with their sensitivity.
        events: The trace slice from `from_turn` through `after_turn`, redacted, with the candidate
            agent's name, version and model masked. A `violated` finding's `evidence_event` must be
            the id of one of these events.
    """

    scenario_id: str
    run_id: str
    after_turn: int
    from_turn: int  # first turn of the slice (previous checkpoint + 1)
    keys: tuple[str, ...]  # the keys the judge is asked about
    ledger: tuple[LedgerRow, ...]
    events: tuple[Event, ...]  # the slice, redacted; never the run header


@dataclass
class JudgeResult:
    """A judge's answer for one checkpoint, with what it cost.

    A backend that could not get a valid verdict (after its re-asks) returns `verdict=None` and says
    why in `error`: the grader records a judge error (unscored), never a pass or a fail.

    Attributes:
        verdict: The findings, or None on a judge error.
        error: Why there is no verdict (None when there is one).
        calls: Requests sent to a model (cached answers not counted).
        cache_hits: Answers taken from the verdict cache.
        attempts: Requests sent including re-asks.
        input_tokens: Prompt tokens as the provider reported them.
        output_tokens: Completion tokens as the provider reported them.
        cost_usd: Money spent where the provider reports it; None when unknown.
        latency_s: Wall time spent answering.
        extra: Backend-specific details kept with the result; `extra["calls"]` (one record per
            request, with `attempts`, `estimated_tokens`, `input_tokens`, `output_tokens`, `part`,
            `sample`, `cached`) becomes the report's `cost.requests`.
    """

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
    validates (calibration records are keyed on it).

    Any object with these two methods is a judge (the protocol is `runtime_checkable`). The grader
    calls `judge_checkpoint` once per checkpoint whose slice has events (about every key the checkpoint
    names, those a rule guards too: where a rule ruled, its verdict wins), concurrently on
    one event loop; when the judge has an `async aclose()` method, it is awaited after the last answer.
    """

    def fingerprint(self) -> dict[str, Any]:
        """What identifies this judge's verdicts: prompt id, version and content hash, backend, model
        and sampling settings. It is recorded in every report, verdict and calibration record, and a
        calibration record applies only to the exact fingerprint it was measured with."""
        ...

    async def judge_checkpoint(self, request: JudgeRequest) -> JudgeResult:
        """Answer for one checkpoint.

        Args:
            request: The ledger at the checkpoint, the keys asked about and the slice of events.

        Returns:
            The verdict (one finding per asked key at most), or `verdict=None` with `error` set when no
            valid answer could be had. It should not raise for a model's bad answer: that is a judge
            error, returned.
        """
        ...
