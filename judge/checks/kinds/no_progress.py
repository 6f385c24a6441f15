"""`no-progress`: a retry loop that makes no progress. `max_repeats` consecutive calls of the same
tool with the same arguments that all fail (error or timeout), with no changed plan in between
(another call, other arguments, or a message to the user), violate."""

from __future__ import annotations

from typing import Literal, cast

from pydantic import Field

from judge.checks.matching import tool_is
from judge.checks.progress import Chain, ProgressEvent, Step, step
from judge.checks.spec import Outcome, RuleContext, RuleSpec, Tracker
from judge.model.event_view import ToolCallLike, ToolResultLike
from judge.model.rules import RuleBase


class NoProgressRule(RuleBase):
    """At most `max_repeats` - 1 identical failing calls of `tool` (a glob; any tool when omitted) in
    a row: the `max_repeats`-th failed result of the same call, with no changed plan in between,
    violates."""

    check: Literal["no-progress"]
    tool: str | None = None
    max_repeats: int = Field(default=3, ge=2, description="identical failing calls that make a retry loop")


class Loop:
    """The rule's memory of the run: the current chain of identical calls of its tool (whether or not
    the key is active), and the step the check just worked out for the event (reused by `remember`)."""

    __slots__ = ("chain", "pending")

    def __init__(self) -> None:
        self.chain: Chain | None = None
        self.pending: tuple[str, Step] | None = None


def _step(rule: NoProgressRule, event: ProgressEvent, loop: Loop) -> Step:
    if loop.pending is not None and loop.pending[0] == event.id:
        return loop.pending[1]
    return step(loop.chain, event, lambda tool: rule.tool is None or tool_is(tool, rule.tool))


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _nth(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


class NoProgressTracker(Tracker[NoProgressRule]):
    """One no-progress rule's tracker: the retry loop it is counting (Loop)."""

    remembers = frozenset({"tool-call", "tool-result", "assistant", "user"})

    def __init__(self, rule: NoProgressRule) -> None:
        super().__init__(rule)
        self.state: Loop = Loop()

    def observe(self, event: ProgressEvent, ctx: RuleContext) -> Outcome:
        rule, loop = self.rule, self.state
        s = _step(rule, event, loop)
        loop.pending = (event.id, s)
        failed = s.failed
        if failed is not None and failed.failures >= rule.max_repeats:
            result = cast(ToolResultLike, event)  # a chain fails at a result (progress.step)
            calls = f"{failed.first_call}..{s.failed_call}" if failed.first_call != s.failed_call else failed.first_call
            return True, (f"{failed.tool} failed {failed.failures} times in a row with the same arguments and no "
                          f"change of plan (calls {calls}; its {_nth(failed.failures)} call {s.failed_call} "
                          f"returned {result.status}; at most {rule.max_repeats - 1})")
        ended = s.ended
        if ended is not None and s.how == "ok":
            return False, f"{ended.tool} returned ok after {_times(ended.failures)} with the same arguments"
        if ended is not None and s.how == "plan":
            call = cast(ToolCallLike, event)  # a plan changes by an assistant message or a call (progress.step)
            what = "a message to the user" if event.kind == "assistant" else f"a call of {call.tool}" \
                if call.tool != ended.tool else f"{call.tool} with other arguments"
            return False, f"plan changed after {ended.tool} failed {_times(ended.failures)}: {what}"
        return None

    def remember(self, event: ProgressEvent, ctx: RuleContext) -> None:
        """Follow the chain through every call, result and message, active key or not."""
        rule, loop = self.rule, self.state
        loop.chain = _step(rule, event, loop).chain
        loop.pending = None


SPEC = RuleSpec(
    model=NoProgressRule,
    tracker=NoProgressTracker,
    reads=frozenset({"tool-call", "tool-result", "assistant", "user"}),
    by_tool=False,  # a call of another tool is a changed plan
    family="recovery",
    fields_doc="`tool` (optional, glob), `max_repeats` (default 3)",
    violated_when="`max_repeats` consecutive calls of the tool (any tool when omitted) with the same arguments all "
                  "fail (error or timeout) with no changed plan in between (another call, other arguments, or an "
                  "assistant message; a user message starts over too); the evidence is the failed result of the "
                  "last of them. A retry that returns ok, or a changed plan after failures, is a compliant use",
    position=115,
)
