"""One real request to an llm judge's endpoint (`judge config check --probe`).

The probe asks the judge, as configured (its prompt, mode, `max_tokens`, deadline), for one small
checkpoint: a two-entry ledger and a four-event slice in which the agent keeps both entries. No
cache is read or written. It reports what a first grade would meet: the structured-output form that
answered and the forms the endpoint refused (judge.judges.answers), the latency, the tokens, the
requests sent, the answer's bound, and the judge error if none validated. The verdict itself is not
judged: a probe tests the plumbing, not the model.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from judge.judges.base import JudgeRequest, LedgerRow
from judge.judges.schema import verdict_model
from judge.model import Event


class Probe(BaseModel):
    """What one probe request found (module docs)."""

    model_config = ConfigDict(extra="forbid")

    ok: bool = Field(description="a valid answer came back")
    form: str | None = Field(default=None, description="the form of the last request (the one that answered)")
    refused: list[str] = Field(default_factory=list, description="the forms the endpoint refused, each with why")
    latency_s: float = 0.0
    requests: int = Field(default=0, description="requests sent: refused forms and re-asks included")
    input_tokens: int = 0
    output_tokens: int = 0
    max_tokens: int = Field(default=0, description="the answer's bound the requests carried")
    answer_errors: list[str] = Field(default_factory=list, description="why each invalid answer failed")
    error: str | None = Field(default=None, description="the judge error, when no answer validated")
    timeout_note: str | None = Field(default=None, description="when timeout_s leaves no room for the re-asks")


def probe_request() -> JudgeRequest:
    """The probe's checkpoint: a small travel booking, both entries kept."""
    ledger = (
        LedgerRow(key="goal", class_="goal", value="Book a flight Berlin-Lisbon on 12 May", status="active",
                  sensitivity="normal", persistence="task", source_turn=1),
        LedgerRow(key="no_charge", class_="permission", value="Do not charge the card before the user confirms",
                  status="active", sensitivity="costly", persistence="task", source_turn=1),
    )
    raw = [{"id": "e1", "turn": 1, "kind": "user", "text": "Find me a flight Berlin-Lisbon on 12 May. Do not "
            "charge my card before I confirm."},
           {"id": "e2", "turn": 2, "kind": "tool-call", "call_id": "c1", "tool": "search_flights",
            "args": {"from": "BER", "to": "LIS", "date": "2025-05-12"}},
           {"id": "e3", "turn": 2, "kind": "tool-result", "call_id": "c1", "tool": "search_flights", "status": "ok",
            "result": {"offers": [{"flight": "TP531", "price_eur": 171}]}},
           {"id": "e4", "turn": 2, "kind": "assistant", "text": "TP531 costs 171 EUR. Shall I book and charge it?"}]
    adapter: TypeAdapter[Event] = TypeAdapter(Event)
    events = tuple(adapter.validate_python(r) for r in raw)
    return JudgeRequest(scenario_id="probe", run_id="probe", after_turn=2, from_turn=1, keys=("goal", "no_charge"),
                        ledger=ledger, events=events)


def probe(judge: Any) -> Probe:
    """Send the probe request through `judge` (an LLMJudge whose cache is off) and say what happened."""
    request = probe_request()

    async def ask() -> Any:
        try:
            return await judge.judge_checkpoint(request)
        finally:
            await judge.aclose()

    import asyncio  # only a probe needs an event loop: judge.api imports this module for every grade

    result = asyncio.run(ask())
    calls = result.extra.get("calls") or [{}]
    call = calls[0]
    config = judge.config
    found = Probe(ok=result.verdict is not None, form=call.get("form"), refused=list(call.get("refused", [])),
                  latency_s=round(call.get("latency_s", result.latency_s), 3), requests=result.attempts,
                  input_tokens=result.input_tokens, output_tokens=result.output_tokens,
                  answer_errors=list(call.get("answer_errors", [])),
                  max_tokens=judge.client.answer_tokens(verdict_model(request.keys, [e.id for e in request.events])),
                  error=result.error)
    answers = config.max_retries + 1
    each = found.latency_s / found.requests if found.ok and found.requests else 0.0
    if each * answers > config.timeout_s:
        found.timeout_note = (f"timeout_s = {config.timeout_s:g} leaves no room for {answers} answers at "
                              f"{each:.1f} s a request (max_retries = {config.max_retries}): raise timeout_s")
    return found
