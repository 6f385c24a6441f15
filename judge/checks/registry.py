"""The rule kinds' specs, and every table derived from them (nothing here lists a kind by name).

The specs are registered in judge.model.rules (built-in modules of judge.checks.kinds, then the
`judge.rules` entry points); this module reads them as RuleSpecs for the grader, lint, drafts,
reports and docs.
"""

from __future__ import annotations

from typing import Any

from judge.checks.spec import Family, RuleSpec
from judge.errors import ConfigError
from judge.model.rules import REGISTRY


def specs() -> dict[str, RuleSpec[Any]]:
    """Every registered rule kind's spec, by `check` tag, in registry order."""
    kinds = REGISTRY.specs()
    for check, spec in kinds.items():
        if not isinstance(spec, RuleSpec):
            raise ConfigError(f"rule kind {check!r} of {REGISTRY.origin(check)} is no judge.checks.spec.RuleSpec")
    return kinds  # type: ignore[return-value]


def spec_for(check: str) -> RuleSpec[Any]:
    """The spec of one kind (a KeyError names the unknown tag: the scenario format refuses those)."""
    return specs()[check]


def kinds_reading(event_kind: str) -> tuple[str, ...]:
    """The kinds whose check reads events of this kind."""
    return tuple(check for check, spec in specs().items() if event_kind in spec.reads)


def family_of(check: str | None) -> Family | None:
    """The component metric a kind's findings count in, or None."""
    spec = specs().get(check or "")
    return spec.family if spec is not None else None


def leak_kinds() -> frozenset[str]:
    """The kinds whose violations are also the run's `leaks`."""
    return frozenset(check for check, spec in specs().items() if spec.leak)


def drafted_kinds() -> tuple[str, ...]:
    """The kinds a model-assisted draft may propose."""
    return tuple(check for check, spec in specs().items() if spec.draft is not None)


def origin(check: str) -> str:
    """`built-in`, or the entry point that registered the kind."""
    return REGISTRY.origin(check)
