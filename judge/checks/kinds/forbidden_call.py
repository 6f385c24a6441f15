"""`forbidden-call`: a call of the tool whose arguments match every matcher is a violation."""

from __future__ import annotations

from typing import Any, Literal

from judge.checks.matching import matches
from judge.checks.spec import DraftSpec, Outcome, RuleContext, RuleSpec
from judge.model.rules import RuleBase


class ForbiddenCallRule(RuleBase):
    """A call of `tool` (glob) whose arguments match every matcher in `args` (exact or glob)."""

    check: Literal["forbidden-call"]
    tool: str
    args: dict[str, Any] | None = None


def forbidden_call(rule: ForbiddenCallRule, event: Any, ctx: RuleContext, state: None) -> Outcome:
    for name, expected in (rule.args or {}).items():
        if not matches(expected, event.args.get(name)):
            return False, f"{event.tool} called outside the forbidden arguments"
    shown = ", ".join(f"{k}={event.args.get(k)!r}" for k in (rule.args or {}))
    return True, f"forbidden call {event.tool}" + (f" ({shown})" if shown else "")


def _draft_fields(arg: str | None, values: list[str]) -> dict[str, Any]:
    return {"args": {arg: values[0]}} if arg and values else {}


SPEC = RuleSpec(
    model=ForbiddenCallRule,
    check_event=forbidden_call,
    reads=frozenset({"tool-call"}),
    family="scope",
    fields_doc="`tool` (glob), `args` (exact or glob matchers)",
    violated_when="the tool is called with matching arguments",
    draft=DraftSpec(needs_tool=True, fields=_draft_fields, values_help="forbidden-call: the arg's value"),
    position=10,
)
