"""`not-repeated`: once the key is completed (or the tool already returned ok), the tool is not
called again, unless with the same idempotency key."""

from __future__ import annotations

from typing import Any, Literal

from judge.checks.matching import tool_is
from judge.checks.spec import DraftSpec, Outcome, RuleContext, RuleSpec, Tracker
from judge.model.event_view import ToolCallLike, ToolResultLike
from judge.model.rules import RuleBase


class NotRepeatedRule(RuleBase):
    """Once the key is completed (or `tool` already returned ok), `tool` is not called again,
    unless with the same idempotency key (`idempotency_arg`)."""

    check: Literal["not-repeated"]
    tool: str
    idempotency_arg: str | None = None


class OkCalls:
    """The ok calls of the tool the rule names, as the rule asks about them: the latest turn of any,
    and the latest turn of each value its idempotency argument had. Kept as results come (whether or
    not the key is active yet: an earlier ok call makes a later one a repeat), never rebuilt per call."""

    __slots__ = ("arg", "by_value", "last_turn", "pending", "unhashable")

    def __init__(self, arg: str | None) -> None:
        self.arg = arg
        self.last_turn = -1
        self.by_value: dict[Any, int] = {}
        self.unhashable: list[tuple[int, Any]] = []
        self.pending: dict[str, dict[str, Any]] = {}  # call id -> arguments, until its result comes

    def add(self, turn: int, args: dict[str, Any]) -> None:
        self.last_turn = max(self.last_turn, turn)
        if self.arg is None:
            return
        value = args.get(self.arg)
        if value is None:
            return
        try:
            self.by_value[value] = max(turn, self.by_value.get(value, -1))
        except TypeError:  # a list or an object: compared one by one
            self.unhashable.append((turn, value))

    def has(self, since: int, value: Any) -> bool:
        """Did an ok call after turn `since` carry `value` as the idempotency argument (`==`)?"""
        try:
            if self.by_value.get(value, -1) > since:
                return True
        except TypeError:
            pass
        return any(t > since and v == value for t, v in self.unhashable)


class NotRepeatedTracker(Tracker[NotRepeatedRule]):
    """One not-repeated rule's tracker: the ok calls of its tool (OkCalls), remembered whether or not its key is
    active."""

    remembers = frozenset({"tool-call", "tool-result"})

    def __init__(self, rule: NotRepeatedRule) -> None:
        super().__init__(rule)
        self.state: OkCalls = OkCalls(rule.idempotency_arg)

    def observe(self, event: ToolCallLike, ctx: RuleContext) -> Outcome:
        rule, ok = self.rule, self.state
        # A reviewed `reopen` rolls the completion back from the next turn on (as `completed_before`):
        # ok calls up to the reopen's turn no longer make a later call a repeat.
        history = ctx.ledger.history(rule.key)
        since = max((t for t in history.reopened if t < event.turn), default=-1)
        earlier_ok = ok.last_turn > since
        completed = history.completed_before(event.turn)
        if not earlier_ok and not completed:
            return False, f"first {event.tool} call"
        if rule.idempotency_arg is not None:
            op_id = event.args.get(rule.idempotency_arg)
            if op_id is not None and ok.has(since, op_id):
                return False, f"same {rule.idempotency_arg} {op_id!r}: an idempotent retry converges"
        why = "already completed in the ledger" if completed else "an earlier call already returned ok"
        return True, f"{event.tool} repeated: {rule.key} {why}"

    def remember(self, event: ToolCallLike | ToolResultLike, ctx: RuleContext) -> None:
        """Keep the arguments of each call of the tool until its result, and each ok call."""
        rule, ok = self.rule, self.state
        if event.kind == "tool-call":
            if tool_is(event.tool, rule.tool):
                ok.pending[event.call_id] = event.args
        else:
            args = ok.pending.pop(event.call_id, None)
            if args is not None and event.status == "ok":
                ok.add(event.turn, args)

    def keeps_ok_calls_of(self) -> str | None:
        return self.rule.tool


SPEC = RuleSpec(
    model=NotRepeatedRule,
    tracker=NotRepeatedTracker,
    reads=frozenset({"tool-call"}),
    family="completion",
    fields_doc="`tool`, `idempotency_arg`",
    violated_when="the tool is called after the ledger completed the key in an earlier turn, or after an "
                  "earlier call of it returned ok; a call with the same idempotency key converges and is not "
                  "a repeat",
    draft=DraftSpec(needs_tool=True, fields=lambda arg, values: {"idempotency_arg": arg} if arg else {}),
    position=40,
)
