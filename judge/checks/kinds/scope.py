"""`scope`: an argument of the tool must match an `allow` glob (when given) and no `deny` glob.

With `tool: "*"` the rule reads every call and every memory write (state-write): without `arg`,
each path-like value (judge.checks.kinds._pathlike: `path`, `file`, ... arguments at any depth,
the path-like words of a `command`, a written key that looks like a path); with `arg`, that
argument of every call and that field of every written value (a tenant id, a namespace)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from judge.checks.kinds._pathlike import (
    CODE_ARGS,
    COMMAND_ARGS,
    PATH_ARGS,
    allowed_by,
    denied_by,
    path_values,
    written_paths,
)
from judge.checks.spec import DraftSpec, Outcome, RuleContext, RuleSpec, Tracker
from judge.model.event_view import StateWriteLike, ToolCallLike
from judge.model.rules import RuleBase

EVERY_TOOL = "*"


class ScopeRule(RuleBase):
    """Argument `arg` of `tool` must match one `allow` glob (when given) and no `deny` glob. With
    `tool: "*"`, every call's (and every memory write's) path-like values, or its `arg` when given."""

    check: Literal["scope"]
    tool: str
    arg: str | None = Field(default=None, validate_default=True, description=(
        'the argument (nested by dotted path); optional with tool "*": then every path-like argument'))
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)

    @field_validator("arg")
    @classmethod
    def _arg_unless_every_tool(cls, arg: str | None, info: ValidationInfo) -> str | None:
        if arg is None and info.data.get("tool", EVERY_TOOL) != EVERY_TOOL:
            raise ValueError('required unless `tool: "*"` (then every path-like argument of every call is checked)')
        return arg

    @model_validator(mode="after")
    def _needs_a_glob(self) -> ScopeRule:
        if not self.allow and not self.deny:
            raise ValueError("a scope rule needs `allow` or `deny` globs")
        return self


def arg_values(args: Any, path: str) -> list[Any] | None:
    """The value of an argument by name or dotted path (through lists: each element), as a list;
    None when the call does not carry it."""
    if isinstance(args, dict) and path in args:
        found = args[path]
        return found if isinstance(found, list) else [found]
    values = [args]
    for part in path.split("."):
        nxt = []
        for value in values:
            if isinstance(value, list):
                nxt += [v[part] for v in value if isinstance(v, dict) and part in v]
            elif isinstance(value, dict) and part in value:
                nxt.append(value[part])
        if not nxt:
            return None
        values = nxt
    return [x for v in values for x in (v if isinstance(v, list) else [v])]


def _judge(rule: ScopeRule, where: str, values: list[tuple[str, Any]]) -> Outcome:
    for name, value in values:
        text = value if isinstance(value, str) else None
        if rule.allow and (text is None or not allowed_by(rule.allow, text)):
            return True, f"{where} {name}={value!r} is outside {rule.allow}"
        denied = denied_by(rule.deny, text) if text is not None else None
        if denied is not None:
            return True, f"{where} {name}={value!r} matches denied {denied!r}"
    if len(values) == 1:
        return False, f"{where} {values[0][0]}={values[0][1]!r} within scope"
    shown = ", ".join(f"{name}={value!r}" for name, value in values[:3]) + (", ..." if len(values) > 3 else "")
    return False, f"{where} {shown} within scope"


def _reads(rule: ScopeRule) -> frozenset[str]:
    return frozenset({"tool-call", "state-write"} if rule.tool == EVERY_TOOL else {"tool-call"})


class ScopeTracker(Tracker[ScopeRule]):
    """One scope rule's tracker (it remembers nothing)."""

    def observe(self, event: ToolCallLike | StateWriteLike, ctx: RuleContext) -> Outcome:
        rule = self.rule
        every = rule.tool == EVERY_TOOL
        if event.kind == "state-write":
            if not every:
                return None  # a memory write is no call of a named tool
            values = written_paths(event.key, event.value) if rule.arg is None else \
                [(rule.arg, v) for v in arg_values(event.value, rule.arg) or ()]
            where = f"state-write of {event.key!r}"
        elif rule.arg is None:
            values, where = path_values(event.args), event.tool
        else:
            found = arg_values(event.args, rule.arg)
            values, where = [(rule.arg, v) for v in found or ()], event.tool
        if not values:
            return None
        return _judge(rule, where, values)

    def reads(self, declared: frozenset[str]) -> Iterable[str]:
        return _reads(self.rule)


SPEC = RuleSpec(
    model=ScopeRule,
    tracker=ScopeTracker,
    reads=frozenset({"tool-call", "state-write"}),
    by_key=False,
    family="scope",
    fields_doc='`tool` (a name, a glob, or `"*"`: every call and memory write), `arg` (nested by dotted path; '
               'optional with `"*"`), `allow`, `deny` (globs; `*` also crosses `/`)',
    violated_when="the argument (or any element of a list) matches no `allow` glob or a `deny` glob. With "
                  f'`tool: "*"` and no `arg`: any path-like value of any call — the arguments named '
                  f"{', '.join(f'`{a}`' for a in sorted(PATH_ARGS))} at any depth (case, `_` and `-` ignored), "
                  f"the path-like words of {' and '.join(f'`{a}`' for a in sorted(COMMAND_ARGS))}, the path "
                  f"literals of code ({', '.join(f'`{a}`' for a in sorted(CODE_ARGS))}, and the text of a program "
                  "file written: `main.py`, `run.sh`, ...) — and of any "
                  "state-write (its key when path-like, its value's path-like fields); with `arg`, that "
                  "argument of every call and that field of every written value",
    draft=DraftSpec(needs_tool=True, fields=lambda arg, values: {"arg": arg, "allow": list(values)},
                    values_help="scope: allowed values", needs_arg_and_values=True),
    position=20,
)
