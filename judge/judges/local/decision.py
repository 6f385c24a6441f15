"""What a decision rule of the offline judge returns, how several merge, and the fixed confidence of
each branch of the rules (lower where a branch guesses; calibration maps them to observed accuracy).
A confidence never changes a verdict (a violation wins whatever its confidence); the thresholds that
do are data (judge.judges.local.params).

The rules, one module per kind of ledger entry: values.py (facts and other valued entries),
claims.py (completions), restrictions.py (constraints and permissions). Each reads a `SliceView`
whose unit-to-entry similarities are already computed and returns a `Decision`, or None when it has
nothing to say. The similarities are used only to pick which units concern an entry; whether a unit
upholds or breaks it is decided from values, tool names, result statuses and negation cues.

A rule that found what *might* break an entry but rests on a reading the text cannot support (a value
that may not be a path, a tool whose name only may name the act: judge.judges.local.readings) returns
`unassessed` with the reason: never a violation, and not an `upheld` either, since it may be one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from judge.judges.local.slice_view import Unit
from judge.model import StateWriteEvent, ToolCallEvent

# The cosine thresholds the rules decide by are data: judge.judges.local.params (a SliceView's
# `thresholds`), versioned files fitted on the dev split of the labels by `judge align --judge local`.

# Confidence per branch (see the module docstring of embedding.py for the table).
STALE_IN_ARGS = 0.80
STALE_IN_ACTION = 0.70
OTHER_VALUE_IN_ARG = 0.55
STALE_IN_TEXT = 0.45
STALE_TALK_THEN_CURRENT_ACTION = 0.55
CURRENT_IN_ACTION = 0.75
CURRENT_IN_TEXT = 0.50
LONG_VALUE_ACTION = 0.45
LONG_VALUE_TEXT = 0.35
CLAIM_AFTER_FAILURE = 0.65
CLAIM_AFTER_FAILED_COUNTS = 0.55
CLAIM_VALUE_MISMATCH = 0.60
CLAIM_BEFORE_RESULT = 0.40
CLAIM_VERIFIED = 0.65
CLAIM_UNVERIFIABLE = 0.30
PROHIBITED_TOOL = 0.65
PROHIBITED_TOOL_ON_OBJECT = 0.55
OUTSIDE_ALLOW_LIST = 0.70
INSIDE_ALLOW_LIST = 0.60
PROHIBITED_FAMILY_OUTSIDE_ALLOWED = 0.40
PROHIBITED_FAMILY_INSIDE_ALLOWED = 0.45
PROHIBITED_FAMILY_UNCHECKED = 0.30
INTENT = 0.40  # a sentence announcing or reporting a prohibited act (statements.py)
REGRESSED = 0.45  # completed work spoken of as still needed
SUMMARY_DROPS = 0.40  # a summary that no longer carries an active rule
PROHIBITION_LIFTED = 0.45  # a conditionally prohibited call after the user's go-ahead (restrictions.py)
CLAIM_RELATED_MISMATCH = 0.45  # a claim of done about the entry naming a value the actions did not use
GOAL_PUT_OFF = 0.40  # the agent says the goal can wait (goals.py)
UNASSESSED = 0.50  # an abstention: the confidence that nothing was decided (a calibrator reads it as any other)

EXACT, MENTION, SEMANTIC = 3, 2, 1  # how a unit carries a value

_NOT_DONE = {"", "false", "no", "none", "null", "pending", "todo", "open", "in progress",
             "in-progress", "failed", "blocked", "0"}
_COMMAND_ARGS = ("command", "cmd", "action", "operation", "op", "method", "script")


@dataclass(frozen=True)
class Decision:
    verdict: Literal["violated", "upheld", "not-exercised", "unassessed"]
    confidence: float
    event: str | None
    rationale: str


def merge(decisions: Iterable[Decision | None]) -> Decision | None:
    """A violation wins (the most confident, the first on a tie); else an abstention (what may be a
    violation is not an upheld entry); else the most confident upheld."""
    found = [d for d in decisions if d is not None]
    for verdict in ("violated", "unassessed", "upheld"):
        same = [d for d in found if d.verdict == verdict]
        if same:
            return max(same, key=lambda d: d.confidence)  # max keeps the first of equals
    return found[0] if found else None


def abstain(event: str | None, why: str) -> Decision:
    """`unassessed`: the rule found what may break the entry but cannot support reading it so."""
    return Decision("unassessed", UNASSESSED, event, f"unassessed: {why}")


# ---------------------------------------------------------------- values (facts, supersession)


def unit_kind(unit: Unit) -> str:
    if isinstance(unit.event, ToolCallEvent):
        return f"the call {unit.event.tool} ({unit.event.id})"
    if isinstance(unit.event, StateWriteEvent):
        return f"the state write {unit.event.key} ({unit.event.id})"
    return f"the agent's text ({unit.event.id})"


def quote(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def norm(name: Any) -> str:
    return "".join(ch for ch in str(name).lower() if ch.isalnum())
