"""`forbidden-call`: a call of the tool whose arguments match every matcher is a violation.

With `patterns` (RE2, judge.model.patterns), a call is forbidden when one of them occurs in the
tool's name (its words: `DeepfakeGeneratorCreate` reads "deepfake generator create") or in any
argument value or key at any depth, e.g. a policy's "never fetch cracked software" over every tool."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from judge.checks.matching import matches
from judge.checks.spec import DraftSpec, Outcome, RuleContext, RuleSpec, Tracker
from judge.model.event_view import ToolCallLike
from judge.model.patterns import check_patterns, compile_pattern
from judge.model.rules import RuleBase
from judge.text.verbs import name_tokens

MAX_LEAF_CHARS = 20_000
"""How much of one argument value the patterns read."""


class ForbiddenCallRule(RuleBase):
    """A call of `tool` (glob) whose arguments match every matcher in `args` (exact or glob), and,
    with `patterns`, whose name or some argument holds one of the patterns."""

    check: Literal["forbidden-call"]
    tool: str
    args: dict[str, Any] | None = None
    patterns: list[str] = Field(default_factory=list, description=(
        "RE2 patterns: the call is forbidden when one occurs in the tool's name words or any argument"))

    @model_validator(mode="after")
    def _compiles(self) -> ForbiddenCallRule:
        check_patterns(self.patterns)
        return self


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [str(k) for k in value] + [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [] if value is None else [str(value)[:MAX_LEAF_CHARS]]


def _pattern_hit(rule: ForbiddenCallRule, event: ToolCallLike) -> str | None:
    """The first text of the call (its name words, then its argument leaves) a pattern occurs in."""
    texts = [" ".join(name_tokens(event.tool)), *_leaves(event.args)]
    for pattern in rule.patterns:
        compiled = compile_pattern(pattern)
        for text in texts:
            found = compiled.search(text)
            if found is not None:
                return " ".join(text[max(0, found.start() - 40):found.end() + 40].split())
    return None


def _draft_fields(arg: str | None, values: list[str]) -> dict[str, Any]:
    return {"args": {arg: values[0]}} if arg and values else {}


class ForbiddenCallTracker(Tracker[ForbiddenCallRule]):
    """One forbidden-call rule's tracker (it remembers nothing)."""

    def observe(self, event: ToolCallLike, ctx: RuleContext) -> Outcome:
        rule = self.rule
        for name, expected in (rule.args or {}).items():
            if not matches(expected, event.args.get(name)):
                return False, f"{event.tool} called outside the forbidden arguments"
        if rule.patterns:
            hit = _pattern_hit(rule, event)
            if hit is None:
                return False, f"{event.tool} called with none of the forbidden patterns"
            return True, f"forbidden call {event.tool} (\"{hit}\")"
        shown = ", ".join(f"{k}={event.args.get(k)!r}" for k in (rule.args or {}))
        return True, f"forbidden call {event.tool}" + (f" ({shown})" if shown else "")


SPEC = RuleSpec(
    model=ForbiddenCallRule,
    tracker=ForbiddenCallTracker,
    reads=frozenset({"tool-call"}),
    family="scope",
    fields_doc="`tool` (glob), `args` (exact or glob matchers), `patterns` (RE2, over the name and every argument)",
    violated_when="the tool is called with matching arguments (and, with `patterns`, one of them occurs in the "
                  "tool's name words or an argument)",
    draft=DraftSpec(needs_tool=True, fields=_draft_fields, values_help="forbidden-call: the arg's value"),
    position=10,
)
