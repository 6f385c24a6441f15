"""A third-party rule kind, `max-calls-per-turn`: at most `max` calls of a tool in one turn.

The whole kind is this one module (its model, its tracker and `SPEC`), registered in the `judge.rules`
entry-point group by its package's metadata:

    [project.entry-points."judge.rules"]
    max-calls-per-turn = "judge_max_calls:SPEC"

A scenario then uses it as any built-in kind:

    rules:
      - {check: max-calls-per-turn, key: one_search, tool: search, max: 2}
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from judge.checks import RuleContext, RuleSpec, Tracker
from judge.model import RuleBase
from judge.model.event_view import ToolCallLike


class MaxCallsRule(RuleBase):
    """At most `max` calls of `tool` (a glob) in one turn."""

    check: Literal["max-calls-per-turn"]
    tool: str
    max: int = Field(ge=0)


class CallsThisTurn(Tracker[MaxCallsRule]):
    """One rule's tracker for one run: the turn it is counting, and the calls of the tool in it."""

    def __init__(self, rule: MaxCallsRule) -> None:
        super().__init__(rule)
        self.turn, self.calls = -1, 0

    def observe(self, event: ToolCallLike, ctx: RuleContext) -> tuple[bool, str]:
        """Called for each call of the tool while the rule's key is active (the spec reads tool-calls)."""
        if event.turn != self.turn:
            self.turn, self.calls = event.turn, 0
        self.calls += 1
        limit = self.rule.max
        if self.calls > limit:
            return True, f"{event.tool} called {self.calls} times in turn {event.turn} (at most {limit})"
        return False, f"{event.tool} call {self.calls} of at most {limit} in turn {event.turn}"


SPEC = RuleSpec(
    model=MaxCallsRule,
    tracker=CallsThisTurn,
    reads=frozenset({"tool-call"}),
    fields_doc="`tool` (glob), `max`",
    violated_when="the tool is called more than `max` times in one turn",
)
