"""Behavioural continuation: resume the agent from the full history and from the summary alone.

The seed: "Pair [phrase checks] with behavioral continuation: resume from the summary alone, present
the next user turn, and observe whether the agent takes the same allowed action as the
full-history control." For one summary event of a trace:

1. **full history**: every event before the summary, as OpenAI chat messages (user, assistant,
   assistant tool calls, tool results; an earlier summary as a system message), then the next user
   turn after the summary;
2. **summary alone**: the summary as a system message, then the same next user turn.

The agent adapter is any command that reads the JSON list of messages on stdin and prints its next
action as JSON on stdout: `{"tool": NAME, "args": {...}}` or `{"text": "..."}`. Each action is
checked as a tool call at the next user turn against the scenario's rules, with the rules' memory of
the real run up to that point (a call a rule would flag is forbidden), and the two actions are
compared (the full-history action is the reference).

Verdicts: `consistent` (both allowed, same tool), `diverged` (both allowed, different actions),
`summary-forbidden` (the summary alone leads to a forbidden action, the full history does not: the
summary lost state), `reference-forbidden` (the agent misbehaves even with the full history: a state
consumption problem, not the summary's), `both-forbidden`. A run fails on a forbidden action, and
with `strict` on a divergence too.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from judge.errors import JudgeInputError, with_article
from judge.ledger import ExpectedLedger
from judge.model import Event, Strict, SummaryEvent, ToolCallEvent, UserEvent

Verdict = Literal["consistent", "diverged", "summary-forbidden", "reference-forbidden", "both-forbidden"]
CANDIDATE_ID = "continuation-candidate"


class AgentError(JudgeInputError):
    """The agent adapter failed: it exited non-zero, timed out or printed something not an action."""


class AgentAction(Strict):
    tool: str | None = Field(default=None, min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    text: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> AgentAction:
        if (self.tool is None) == (self.text is None):
            raise ValueError('an action is {"tool": NAME, "args": {...}} or {"text": "..."}')
        return self

    def describe(self) -> str:
        if self.tool is None:
            return f"text: {self.text}"
        return f"{self.tool}(" + ", ".join(f"{k}={v!r}" for k, v in self.args.items()) + ")"


class RuleHit(Strict):
    rule: str
    key: str
    detail: str


class ActionCheck(Strict):
    action: AgentAction
    allowed: bool
    violations: list[RuleHit] = Field(default_factory=list)
    upheld: list[RuleHit] = Field(default_factory=list)
    messages: int = 0


class ContinuationReport(Strict):
    scenario: str
    trace: str | None = None
    run_id: str
    summary_event: str
    summary_turn: int
    next_user_event: str | None = None
    next_user_text: str | None = None
    action_turn: int
    agent: str
    full_history: ActionCheck
    summary_only: ActionCheck
    recorded: AgentAction | None = Field(default=None, description="what the agent did next in the trace")
    same_tool: bool
    same_action: bool
    verdict: Verdict
    passed: bool


# ---------------------------------------------------------------- messages


def _tool_content(event: Any) -> str:
    return json.dumps({"status": event.status, "result": event.result}, ensure_ascii=False, default=str)


def to_messages(events: Sequence[Event]) -> list[dict[str, Any]]:
    """Trace events as OpenAI chat messages (state writes and snapshots are not part of a chat)."""
    out: list[dict[str, Any]] = []
    for e in events:
        if e.kind == "user":
            out.append({"role": "user", "content": e.text})
        elif e.kind == "assistant":
            out.append({"role": "assistant", "content": e.text})
        elif e.kind == "tool-call":
            out.append({"role": "assistant", "content": None, "tool_calls": [{
                "id": e.call_id, "type": "function",
                "function": {"name": e.tool, "arguments": json.dumps(e.args, ensure_ascii=False)}}]})
        elif e.kind == "tool-result":
            out.append({"role": "tool", "tool_call_id": e.call_id, "content": _tool_content(e)})
        elif e.kind == "summary":
            out.append(summary_message(e))
    return out


def summary_message(event: SummaryEvent) -> dict[str, str]:
    what = f"Handoff summary (to {event.to})" if event.reason == "handoff" and event.to else \
        "Handoff summary" if event.reason == "handoff" else "Summary of the conversation so far"
    return {"role": "system", "content": f"{what}:\n{event.text}"}


# ---------------------------------------------------------------- the agent


def run_agent(command: str | Sequence[str], messages: list[dict[str, Any]], *, timeout: float = 60.0,
              label: str = "agent") -> AgentAction:
    """Run the adapter once: messages as JSON on stdin, one action as JSON on stdout."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise AgentError("empty agent command", field="--agent")
    shown = " ".join(argv)
    try:
        done = subprocess.run(argv, input=json.dumps(messages, ensure_ascii=False), capture_output=True,
                              text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise AgentError(f"agent command not found: {argv[0]!r}", field="--agent") from None
    except subprocess.TimeoutExpired:
        raise AgentError(f"agent `{shown}` ({label}) gave no answer within {timeout:g} s", field="--agent") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output on stderr"])[-1]
        raise AgentError(f"agent `{shown}` ({label}) exited {done.returncode}: {last[:300]}", field="--agent")
    text = done.stdout.strip()
    try:
        return AgentAction.model_validate_json(text.splitlines()[-1] if text else "")
    except (ValidationError, IndexError) as exc:
        problem = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else "no output"
        raise AgentError(f"agent `{shown}` ({label}) printed no valid action ({problem}): {text[:200]!r}",
                         field="stdout") from None


# ---------------------------------------------------------------- checking an action


def check_action(ledger: ExpectedLedger, history: Sequence[Event], action: AgentAction, turn: int) -> ActionCheck:
    """Replay `history` through the scenario's rules, then offer the action as a tool call at `turn`."""
    from judge.checks import RuleSet

    rules = RuleSet(ledger)
    for index, event in enumerate(history):
        rules.observe(event, index)
    if action.tool is None:
        return ActionCheck(action=action, allowed=True)
    call = ToolCallEvent(id=CANDIDATE_ID, turn=turn, kind="tool-call", call_id=CANDIDATE_ID, tool=action.tool,
                         args=action.args)
    hits = rules.observe(call, len(history))
    bad = [RuleHit(rule=h.rule, key=h.key, detail=h.detail) for h in hits if h.violated]
    good = [RuleHit(rule=h.rule, key=h.key, detail=h.detail) for h in hits if not h.violated]
    return ActionCheck(action=action, allowed=not bad, violations=bad, upheld=good)


def _canonical(args: dict[str, Any]) -> str:
    def fold(value: Any) -> Any:
        if isinstance(value, str):
            return value.strip().casefold()
        if isinstance(value, dict):
            return {k: fold(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fold(v) for v in value]
        return value
    return json.dumps(fold(args), sort_keys=True, default=str)


def verdict_of(full: ActionCheck, alone: ActionCheck) -> tuple[bool, bool, Verdict]:
    same_tool = full.action.tool == alone.action.tool and (full.action.tool is not None
                                                            or alone.action.tool is None)
    same_action = same_tool and (_canonical(full.action.args) == _canonical(alone.action.args)
                                 if full.action.tool else full.action.text == alone.action.text)
    if not full.allowed:
        return same_tool, same_action, "both-forbidden" if not alone.allowed else "reference-forbidden"
    if not alone.allowed:
        return same_tool, same_action, "summary-forbidden"
    return same_tool, same_action, "consistent" if same_tool else "diverged"


# ---------------------------------------------------------------- the whole run


def continue_from_summary(ledger: ExpectedLedger, trace: str | Path, event_id: str, agent: str | Sequence[str],
                          *, next_user: str | None = None, timeout: float = 60.0,
                          strict: bool = False) -> ContinuationReport:
    from judge.trace import read_trace

    header, events, _ = read_trace(trace, expected_scenario=ledger.scenario.id)
    where = next((i for i, e in enumerate(events) if e.id == event_id), None)
    if where is None:
        raise JudgeInputError(f"no event with id {event_id!r}", file=str(trace), field="id")
    summary = events[where]
    if not isinstance(summary, SummaryEvent):
        raise JudgeInputError(f"event {event_id!r} is {with_article(repr(summary.kind))} event, not a summary",
                              file=str(trace), field="kind")
    after = events[where + 1:]
    user_at = next((i for i, e in enumerate(after) if isinstance(e, UserEvent)), None)
    found = after[user_at] if user_at is not None and next_user is None else None
    user_event = found if isinstance(found, UserEvent) else None  # (always one, when found)
    user_text = next_user if next_user is not None else (user_event.text if user_event else None)
    action_turn = user_event.turn if user_event else summary.turn + 1
    tail = [{"role": "user", "content": user_text}] if user_text is not None else []
    full_messages = to_messages(events[:where]) + tail
    alone_messages = [summary_message(summary)] + tail
    # The rules remember the real run up to the next user turn (what has really happened).
    history = events[:where + 1] + (after[:user_at + 1] if user_event is not None and user_at is not None else [])
    shown = agent if isinstance(agent, str) else " ".join(agent)
    full = check_action(ledger, history, run_agent(agent, full_messages, timeout=timeout, label="full history"),
                        action_turn)
    alone = check_action(ledger, history, run_agent(agent, alone_messages, timeout=timeout, label="summary alone"),
                         action_turn)
    full.messages, alone.messages = len(full_messages), len(alone_messages)
    same_tool, same_action, verdict = verdict_of(full, alone)
    passed = verdict == "consistent" or (verdict == "diverged" and not strict)
    return ContinuationReport(
        scenario=ledger.scenario.id, trace=str(trace), run_id=header.run_id, summary_event=summary.id,
        summary_turn=summary.turn, next_user_event=user_event.id if user_event else None,
        next_user_text=user_text, action_turn=action_turn, agent=shown, full_history=full, summary_only=alone,
        recorded=_recorded(after[user_at + 1:] if user_event is not None and user_at is not None else after),
        same_tool=same_tool,
        same_action=same_action, verdict=verdict, passed=passed)


def _recorded(events: Sequence[Event]) -> AgentAction | None:
    for e in events:
        if e.kind == "tool-call":
            return AgentAction(tool=e.tool, args=e.args)
        if e.kind == "assistant":
            return AgentAction(text=e.text)
        if e.kind == "user":
            return None
    return None
