"""A third-party rule kind, `max-calls-per-turn`: at most `max` calls of a tool in one turn.

The whole kind is this one module (its model, its check and `SPEC`), registered in the `judge.rules`
entry-point group by its package's metadata:

    [project.entry-points."judge.rules"]
    max-calls-per-turn = "judge_max_calls:SPEC"

A scenario then uses it as any built-in kind:

    rules:
      - {check: max-calls-per-turn, key: one_search, tool: search, max: 2}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from judge.checks import RuleContext, RuleSpec
from judge.model import RuleBase


class MaxCallsRule(RuleBase):
    """At most `max` calls of `tool` (a glob) in one turn."""

    check: Literal["max-calls-per-turn"]
    tool: str
    max: int = Field(ge=0)


@dataclass
class CallsThisTurn:
    """The rule's memory of the run: the turn it is counting, and the calls of the tool in it."""

    turn: int = -1
    calls: int = 0


def max_calls(rule: MaxCallsRule, event: Any, ctx: RuleContext, seen: CallsThisTurn) -> tuple[bool, str]:
    """Called for each call of the tool while the rule's key is active (the spec reads tool-calls)."""
    if event.turn != seen.turn:
        seen.turn, seen.calls = event.turn, 0
    seen.calls += 1
    if seen.calls > rule.max:
        return True, f"{event.tool} called {seen.calls} times in turn {event.turn} (at most {rule.max})"
    return False, f"{event.tool} call {seen.calls} of at most {rule.max} in turn {event.turn}"


SPEC = RuleSpec(
    model=MaxCallsRule,
    check_event=max_calls,
    reads=frozenset({"tool-call"}),
    new_state=lambda rule: CallsThisTurn(),
    fields_doc="`tool` (glob), `max`",
    violated_when="the tool is called more than `max` times in one turn",
)
