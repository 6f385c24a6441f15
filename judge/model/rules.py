"""Rule kinds of a scenario: each guards one ledger key (semantics: DESIGN.md, "Rule semantics")."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union, get_args

from pydantic import Field, model_validator

from judge.model.base import Strict
from judge.model.patterns import PatternError, check_glob, check_pattern


class _RuleBase(Strict):
    key: str = Field(min_length=1)
    id: str | None = Field(default=None, description="stable rule id; default check:key")

    @model_validator(mode="after")
    def _globs_fit(self) -> "_RuleBase":
        # Globs are matched by RE2 (judge.model.patterns), whose time grows with the glob too.
        for name in ("tool", "allow", "deny", "args"):
            value = getattr(self, name, None)
            values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
            for glob in values:
                if isinstance(glob, str):
                    try:
                        check_glob(glob)
                    except PatternError as exc:
                        raise ValueError(f"{name}: {exc}") from None
        return self


class ForbiddenCallRule(_RuleBase):
    """A call of `tool` (glob) whose arguments match every matcher in `args` (exact or glob)."""

    check: Literal["forbidden-call"]
    tool: str
    args: dict[str, Any] | None = None


class ScopeRule(_RuleBase):
    """Argument `arg` of `tool` must match one `allow` glob (when given) and no `deny` glob."""

    check: Literal["scope"]
    tool: str
    arg: str
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _needs_a_glob(self) -> "ScopeRule":
        if not self.allow and not self.deny:
            raise ValueError("a scope rule needs `allow` or `deny` globs")
        return self


class SupersededValueRule(_RuleBase):
    """After a `set`, argument `arg` of `tool` (any argument / any tool when omitted) must not
    carry a superseded value of the key."""

    check: Literal["superseded-value"]
    tool: str | None = None
    arg: str | None = None


class NotRepeatedRule(_RuleBase):
    """Once the key is completed (or `tool` already returned ok), `tool` is not called again,
    unless with the same idempotency key (`idempotency_arg`)."""

    check: Literal["not-repeated"]
    tool: str
    idempotency_arg: str | None = None


class ClaimedCompleteRule(_RuleBase):
    """A state-write claiming the key complete must follow an ok result of `tool` (or of the last
    tool called when none is named)."""

    check: Literal["claimed-complete"]
    tool: str | None = None


class SummaryPhrasesRule(_RuleBase):
    """On summary events: one of `require` must appear; none of `forbid` may."""

    check: Literal["summary-phrases"]
    require: list[str] = Field(default_factory=list)
    forbid: list[str] = Field(default_factory=list)


class AuthorisedRule(_RuleBase):
    """A side-effecting call of `tool` must be preceded by its authorisation, whatever its result:
    a user message with one of the `confirm` phrases since the previous such call (one confirmation
    authorises one call), or the `permission` ledger entry active at that turn."""

    check: Literal["authorised"]
    tool: str
    confirm: list[str] = Field(default_factory=list)
    permission: str | None = None

    @model_validator(mode="after")
    def _needs_an_authorisation(self) -> "AuthorisedRule":
        if not self.confirm and not self.permission:
            raise ValueError("an authorised rule needs `confirm` phrases or a `permission` key")
        return self


class EffectRule(_RuleBase):
    """An ok result of `tool` must be followed by the expected state change: its `snapshot` events
    (before/after, same call_id) must differ (in `field` of their state when given, else in digest)."""

    check: Literal["effect"]
    tool: str
    field: str | None = None


class ExpectedCallRule(_RuleBase):
    """The key (a completion) is done only by an ok call of `tool` whose arguments match `args`: every
    given argument equal (numbers numerically, lists as multisets, objects as subsets; the call may
    carry more). At a checkpoint that expects the key completed, no such call by then is a violation
    (the evidence: the last call of the tool that did not match, if any)."""

    check: Literal["expected-call"]
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class NoLeakRule(_RuleBase):
    """Values (or regex patterns) that belong to other users or workspaces must never appear in an
    assistant message, a tool argument or a summary: a leak, reported apart from drift."""

    check: Literal["no-leak"]
    values: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _needs_values(self) -> "NoLeakRule":
        if not self.values and not self.patterns:
            raise ValueError("a no-leak rule needs `values` or `patterns`")
        for pattern in self.patterns:
            try:
                check_pattern(pattern)  # RE2: matched in linear time (judge.model.patterns)
            except PatternError as exc:
                raise ValueError(f"rule {self.id or 'no-leak:' + self.key}: pattern '{pattern}': {exc}") from None
        return self


Rule = Annotated[
    Union[
        ForbiddenCallRule,
        ScopeRule,
        SupersededValueRule,
        NotRepeatedRule,
        ClaimedCompleteRule,
        SummaryPhrasesRule,
        AuthorisedRule,
        EffectRule,
        NoLeakRule,
        ExpectedCallRule,
    ],
    Field(discriminator="check"),
]

# The `check` tags of every rule kind, from the union itself (for error locations and lint).
RULE_KINDS: tuple[str, ...] = tuple(get_args(m.model_fields["check"].annotation)[0]
                                    for m in get_args(get_args(Rule)[0]))
