"""`scope`: an argument of the tool must match an `allow` glob (when given) and no `deny` glob."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from judge.checks.matching import glob
from judge.checks.spec import DraftSpec, Outcome, RuleContext, RuleSpec
from judge.model.rules import RuleBase


class ScopeRule(RuleBase):
    """Argument `arg` of `tool` must match one `allow` glob (when given) and no `deny` glob."""

    check: Literal["scope"]
    tool: str
    arg: str
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _needs_a_glob(self) -> ScopeRule:
        if not self.allow and not self.deny:
            raise ValueError("a scope rule needs `allow` or `deny` globs")
        return self


def scope(rule: ScopeRule, event: Any, ctx: RuleContext, state: None) -> Outcome:
    if rule.arg not in event.args:
        return None
    values = event.args[rule.arg]
    for value in values if isinstance(values, list) else [values]:
        if rule.allow and not any(glob(p, value) for p in rule.allow):
            return True, f"{event.tool} {rule.arg}={value!r} is outside {rule.allow}"
        denied = [p for p in rule.deny if glob(p, value)]
        if denied:
            return True, f"{event.tool} {rule.arg}={value!r} matches denied {denied[0]!r}"
    return False, f"{event.tool} {rule.arg}={values!r} within scope"


SPEC = RuleSpec(
    model=ScopeRule,
    check_event=scope,
    reads=frozenset({"tool-call"}),
    family="scope",
    fields_doc="`tool`, `arg`, `allow`, `deny` (globs; `*` also crosses `/`)",
    violated_when="the argument (or any element of a list) matches no `allow` glob or a `deny` glob",
    draft=DraftSpec(needs_tool=True, fields=lambda arg, values: {"arg": arg, "allow": list(values)},
                    values_help="scope: allowed values", needs_arg_and_values=True),
    position=20,
)
