"""`summary-phrases`: the seed's phrase audit on summary events."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from judge.checks.spec import Outcome, RuleContext, RuleSpec, Tracker
from judge.model.event_view import SummaryLike
from judge.model.rules import RuleBase


class SummaryPhrasesRule(RuleBase):
    """On summary events: one of `require` must appear; none of `forbid` may."""

    check: Literal["summary-phrases"]
    require: list[str] = Field(default_factory=list)
    forbid: list[str] = Field(default_factory=list)


class SummaryPhrasesTracker(Tracker[SummaryPhrasesRule]):
    """One summary-phrases rule's tracker (it remembers nothing)."""

    def observe(self, event: SummaryLike, ctx: RuleContext) -> Outcome:
        rule = self.rule
        text = event.text.casefold()
        if rule.require and not any(p.casefold() in text for p in rule.require):
            return True, f"summary keeps none of {rule.require}"
        stale = [p for p in rule.forbid if p.casefold() in text]
        if stale:
            return True, f"summary carries obsolete phrase {stale[0]!r}"
        return False, "summary keeps the required phrasing"


SPEC = RuleSpec(
    model=SummaryPhrasesRule,
    tracker=SummaryPhrasesTracker,
    reads=frozenset({"summary"}),
    family="handoff",
    fields_doc="`require`, `forbid`",
    violated_when="a summary event keeps none of the `require` phrases or carries a `forbid` phrase",
    position=60,
)
