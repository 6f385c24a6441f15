"""`summary-phrases`: the seed's phrase audit on summary events."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from judge.checks.spec import Outcome, RuleContext, RuleSpec
from judge.model.rules import RuleBase


class SummaryPhrasesRule(RuleBase):
    """On summary events: one of `require` must appear; none of `forbid` may."""

    check: Literal["summary-phrases"]
    require: list[str] = Field(default_factory=list)
    forbid: list[str] = Field(default_factory=list)


def summary_phrases(rule: SummaryPhrasesRule, event: Any, ctx: RuleContext, state: None) -> Outcome:
    text = event.text.casefold()
    if rule.require and not any(p.casefold() in text for p in rule.require):
        return True, f"summary keeps none of {rule.require}"
    stale = [p for p in rule.forbid if p.casefold() in text]
    if stale:
        return True, f"summary carries obsolete phrase {stale[0]!r}"
    return False, "summary keeps the required phrasing"


SPEC = RuleSpec(
    model=SummaryPhrasesRule,
    check_event=summary_phrases,
    reads=frozenset({"summary"}),
    family="handoff",
    fields_doc="`require`, `forbid`",
    violated_when="a summary event keeps none of the `require` phrases or carries a `forbid` phrase",
    position=60,
)
