"""Rules of a scenario: what every rule kind shares, and the registry that knows the kinds.

Each rule kind is one spec (its pydantic model, its tracker and what the grader needs to know about
it) in one module: the built-in kinds are the modules of `judge.checks.kinds` (listed in its
`BUILT_IN`), third parties add kinds through the `judge.rules` entry-point group (semantics of each:
`judge rules`, or the table in docs/scenarios.md, generated from the specs). The scenario format
validates a rule as the model its `check` names, a tagged union built from what is registered when
the format is first used.

This layer imports no kind: the registry (judge.registry.Registry) is handed the built-in specs by the
composition root (judge/__init__.py) on its first use, so that a kind is declared once, beside its
check, and every import of it is one that the import contracts see.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Protocol, Union, get_args

from pydantic import Field, GetCoreSchemaHandler, model_validator
from pydantic_core import core_schema

from judge.errors import ConfigError
from judge.model.base import Strict
from judge.model.patterns import PatternError, check_glob
from judge.registry import RULE_KINDS as RULE_ENTRY_POINTS
from judge.registry import Registry


class RuleBase(Strict):
    """The fields every rule has: the ledger key it guards and an optional stable id."""

    key: str = Field(min_length=1)
    id: str | None = Field(default=None, description="stable rule id; default check:key")

    if TYPE_CHECKING:  # every kind declares `check: Literal[tag]` (its tag); known to the type checker only,
        check: str     # so that the field order of each kind's schema stays its own

    @model_validator(mode="after")
    def _globs_fit(self) -> RuleBase:
        # Globs are matched by RE2 (judge.model.patterns), whose time grows with the glob too.
        for name in _GLOB_FIELDS:
            value = getattr(self, name, None)
            values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value]
            for glob in values:
                if isinstance(glob, str):
                    try:
                        check_glob(glob)
                    except PatternError as exc:
                        raise ValueError(f"{name}: {exc}") from None
        return self


_GLOB_FIELDS = ("tool", "tools", "allow", "deny", "args")
"""The fields of rule kinds that hold globs (a tool name, an allowed tool, a path, an argument matcher)."""


class RuleKind(Protocol):
    """What the format layer reads of a rule kind's spec (judge.checks.spec.RuleSpec is the full one)."""

    @property
    def check(self) -> str:
        """The kind's `check` tag, as scenarios spell it (`forbidden-call`)."""
        ...

    @property
    def model(self) -> type[RuleBase]:
        """The kind's pydantic model (a RuleBase with `check: Literal[tag]`)."""
        ...


def _spec_of(spec: Any, where: str) -> RuleKind:
    model = getattr(spec, "model", None)
    check = getattr(spec, "check", None)
    if not (isinstance(model, type) and issubclass(model, RuleBase)) or not isinstance(check, str):
        raise ConfigError(f"{where} is no rule kind: it needs `SPEC` with `check` and a `model` "
                          "subclassing judge.model.rules.RuleBase")
    tags = get_args(model.model_fields["check"].annotation) if "check" in model.model_fields else ()
    if tags != (check,):
        raise ConfigError(f"{where}: the model's `check` must be Literal[{check!r}]")
    return spec  # type: ignore[no-any-return]  # checked above: a model subclassing RuleBase and a str tag


def _rebuild_formats() -> None:
    for model in _FORMATS_HOLDING_RULES:
        model.model_rebuild(force=True)


_FORMATS_HOLDING_RULES: list[Any] = []

REGISTRY: Registry[RuleKind] = Registry(
    "rule kind", RULE_ENTRY_POINTS, check=_spec_of, name_of=lambda spec: spec.check,
    order=lambda spec: getattr(spec, "position", 1000), on_change=_rebuild_formats)
"""The registered rule kinds, by `check` tag."""


def rule_models() -> dict[str, type[RuleBase]]:
    """The pydantic model of every registered rule kind, by `check` tag."""
    return {check: spec.model for check, spec in REGISTRY.specs().items()}


def rule_kinds() -> tuple[str, ...]:
    """The `check` tags of every registered rule kind (for error locations and lint)."""
    return tuple(REGISTRY.specs())


class _RegisteredRule:
    """Validates a rule as the registered model its `check` names (a tagged union, built when a
    format holding rules is first validated or its schema asked for)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        models = tuple(rule_models().values())
        # A Union of the registered models, a tuple made at run time: neither `|` nor a type checker
        # can spell it.
        union = Union[models]  # type: ignore[valid-type]  # noqa: UP007
        return handler.generate_schema(Annotated[union, Field(discriminator="check")])


Rule = Annotated[RuleBase, _RegisteredRule]
"""A rule of any registered kind (the scenario's `rules` items)."""


def holds_rules(model: Any) -> Any:
    """Mark a format whose schema holds rules (rebuilt when a kind is registered later)."""
    _FORMATS_HOLDING_RULES.append(model)
    return model
