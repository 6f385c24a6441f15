"""`superseded-value`: after a `set`, an argument (or a state-write of the key) must not carry a
superseded value of the key."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

from judge.checks.spec import DraftSpec, LintLevel, Outcome, RuleContext, RuleSpec, Tracker
from judge.model.event_view import StateWriteLike, ToolCallLike
from judge.model.rules import RuleBase

if TYPE_CHECKING:
    from judge.ledger import ExpectedLedger


class SupersededValueRule(RuleBase):
    """After a `set`, argument `arg` of `tool` (any argument / any tool when omitted) must not
    carry a superseded value of the key."""

    check: Literal["superseded-value"]
    tool: str | None = None
    arg: str | None = None


def _lint(rule: SupersededValueRule, ledger: ExpectedLedger) -> Iterator[tuple[LintLevel, str, str]]:
    if len(ledger.history(rule.key).versions) < 2:
        yield "warning", f"no delta sets {rule.key!r}, so this rule can never fire", "key"


class SupersededValueTracker(Tracker[SupersededValueRule]):
    """One superseded-value rule's tracker (it remembers nothing)."""

    def observe(self, event: ToolCallLike | StateWriteLike, ctx: RuleContext) -> Outcome:
        rule = self.rule
        old = ctx.superseded_at(rule.key, event.turn)
        if not old:
            return None
        tool: str | None = None  # the tool called; None: a state-write
        if event.kind == "tool-call":
            if rule.arg is not None and rule.arg not in event.args:
                return None
            carried = event.args[rule.arg] if rule.arg is not None else event.args
            tool = event.tool
        else:  # a state-write of the key (the registry calls the check for writes of its key only)
            carried = event.value
        for version in old:
            if ctx.carries(carried, version):
                where = f"{tool} {rule.arg or 'args'}" if tool is not None else "state-write"
                return True, (f"{where} uses {version.value!r}, superseded at turn {version.replaced_at} by "
                              f"{ctx.value_at(rule.key, event.turn)!r}")
        if rule.arg is None and tool is not None:
            return None  # no particular argument to credit as a compliant use
        return False, f"uses the current value {ctx.value_at(rule.key, event.turn)!r}"


SPEC = RuleSpec(
    model=SupersededValueRule,
    tracker=SupersededValueTracker,
    reads=frozenset({"tool-call", "state-write"}),
    lint=_lint,
    fields_doc="`tool`, `arg` (both optional)",
    violated_when="after a `set`, the argument (or a state-write of the key) carries a superseded value: "
                  "equal, an element, or a whole word of it",
    draft=DraftSpec(needs_tool=False, fields=lambda arg, values: {"arg": arg} if arg else {}),
    position=30,
)
