"""`expected-call`: the key is done only by an ok call of the tool with the expected arguments."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from judge.checks.spec import CheckpointVerdict, Outcome, RuleContext, RuleSpec, Tracker
from judge.model.event_view import ToolCallLike, ToolResultLike
from judge.model.rules import RuleBase


class ExpectedCallRule(RuleBase):
    """The key (a completion) is done only by an ok call of `tool` whose arguments match `args`: every
    given argument equal (numbers numerically, lists as multisets, objects as subsets; the call may
    carry more). At a checkpoint that expects the key completed, no such call by then is a violation
    (the evidence: the last call of the tool that did not match, if any)."""

    check: Literal["expected-call"]
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


@dataclass
class ExpectedCalls:
    """Per run: the calls of the tool awaiting their result, the turn the key was first done, and
    the calls that did not do it (turn, event id, why)."""

    calls: dict[str, tuple[str, int, bool]] = field(default_factory=dict)
    done_at: int | None = None
    misses: list[tuple[int, str, str]] = field(default_factory=list)


def args_match(expected: Any, actual: Any) -> bool:
    """Structural match: objects as subsets, lists as multisets, numbers numerically, strings exactly."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and args_match(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return False
        left = list(actual)
        for item in expected:
            hit = next((i for i, a in enumerate(left) if args_match(item, a)), None)
            if hit is None:
                return False
            left.pop(hit)
        return True
    if isinstance(expected, bool) or isinstance(actual, bool):
        return bool(expected == actual)
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return abs(expected - actual) <= 1e-9 * max(1.0, abs(expected))
    return bool(expected == actual)


def missing_at(rule: ExpectedCallRule, state: ExpectedCalls, checkpoint: Any) -> CheckpointVerdict | None:
    """At a checkpoint that expects the key completed: a violation when no ok matching call came by
    then, with the last non-matching call of the tool as evidence when there is one."""
    turn = checkpoint.after_turn
    if rule.key not in checkpoint.expect_completed or (state.done_at is not None and state.done_at <= turn):
        return None
    misses = [m for m in state.misses if m[0] <= turn]
    last = misses[-1] if misses else None
    detail = f"no ok {rule.tool} call with the expected arguments by turn {turn}"
    if last is not None:
        detail += f" ({last[1]}: {last[2]})"
    return CheckpointVerdict(verdict="violated", turn=last[0] if last else turn,
                             evidence_event=last[1] if last else None, detail=detail)


class ExpectedCallTracker(Tracker[ExpectedCallRule]):
    """One expected-call rule's tracker: the calls of its tool and whether one did the key (ExpectedCalls)."""

    def __init__(self, rule: ExpectedCallRule) -> None:
        super().__init__(rule)
        self.state: ExpectedCalls = ExpectedCalls()

    def observe(self, event: ToolCallLike | ToolResultLike, ctx: RuleContext) -> Outcome:
        rule, state = self.rule, self.state
        if event.kind == "tool-call":
            state.calls[event.call_id] = (event.id, event.turn, args_match(rule.args, event.args))
            return None
        if event.call_id not in state.calls:
            return None
        call_event, turn, matched = state.calls.pop(event.call_id)
        if matched and event.status == "ok":
            if state.done_at is None:
                state.done_at = turn
            return False, f"{rule.tool} returned ok with the expected arguments"
        state.misses.append((turn, call_event, "returned " + event.status if matched else "other arguments"))
        return None

    def at_checkpoint(self, checkpoint: Any) -> CheckpointVerdict | None:
        return missing_at(self.rule, self.state, checkpoint)


SPEC = RuleSpec(
    model=ExpectedCallRule,
    tracker=ExpectedCallTracker,
    reads=frozenset({"tool-call", "tool-result"}),
    fields_doc="`tool`, `args`",
    violated_when="at a checkpoint that expects the key completed, no call of the tool with these arguments has "
                  "returned ok (arguments matched structurally: objects as subsets, lists as multisets, numbers "
                  "numerically); the evidence is the last call of the tool that did not match, if any",
    position=100,
)
