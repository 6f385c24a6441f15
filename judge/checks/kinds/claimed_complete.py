"""`claimed-complete`: a state-write claiming the key complete must follow an ok result of the tool."""

from __future__ import annotations

from typing import Any, Literal

from judge.checks.matching import norm
from judge.checks.spec import DraftSpec, Outcome, RuleContext, RuleSpec
from judge.model.rules import RuleBase

COMPLETION_VALUES = {"completed", "complete", "done", "true", "finished", "yes", "1", "success", "succeeded"}


class ClaimedCompleteRule(RuleBase):
    """A state-write claiming the key complete must follow an ok result of `tool` (or of the last
    tool called when none is named)."""

    check: Literal["claimed-complete"]
    tool: str | None = None


def claimed_complete(rule: ClaimedCompleteRule, event: Any, ctx: RuleContext, state: None) -> Outcome:
    if norm(event.value) not in COMPLETION_VALUES:
        return None
    tool = rule.tool or ctx.state.last_tool_called
    if tool is None:
        return True, f"{rule.key} claimed complete with no tool call at all"
    status = ctx.state.last_status_by_tool.get(tool)
    if status == "ok":
        return False, f"{rule.key} claimed complete after an ok {tool} result"
    if status is None:
        return True, f"{rule.key} claimed complete with no {tool} result"
    return True, f"{rule.key} claimed complete after {tool} returned {status}"


SPEC = RuleSpec(
    model=ClaimedCompleteRule,
    check_event=claimed_complete,
    reads=frozenset({"state-write"}),
    family="completion",
    fields_doc="`tool` (optional)",
    violated_when="a state-write of the key with a completion value (`completed`, `done`, `true`, ...) does "
                  "not follow an ok result of the tool (or of the last tool called)",
    draft=DraftSpec(needs_tool=False, fields=lambda arg, values: {}),
    position=50,
)
