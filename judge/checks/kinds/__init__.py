"""The built-in rule kinds: one module each, holding the kind's model, its tracker and its `SPEC`
(judge.checks.spec.RuleSpec); a module whose name starts with `_` is a helper, not a kind.

`BUILT_IN` lists them explicitly: the composition root (judge/__init__.py) hands it to the rule-kind
registry (judge.model.rules.REGISTRY) on its first use, so the format layer imports no kind by name.
A new kind's module is added here (tests/test_rule_registry.py holds the list to the package's modules).
"""

from __future__ import annotations

from judge.checks.kinds import (
    allowed_tools,
    asks_before,
    authorised,
    claimed_complete,
    effect,
    expected_call,
    forbidden_call,
    forbidden_text,
    grounded,
    limit,
    no_guess,
    no_leak,
    no_progress,
    not_repeated,
    scope,
    summary_phrases,
    superseded_value,
)

BUILT_IN = (
    allowed_tools.SPEC, asks_before.SPEC, authorised.SPEC, claimed_complete.SPEC, effect.SPEC, expected_call.SPEC,
    forbidden_call.SPEC, forbidden_text.SPEC, grounded.SPEC, limit.SPEC, no_guess.SPEC, no_leak.SPEC,
    no_progress.SPEC, not_repeated.SPEC, scope.SPEC, summary_phrases.SPEC, superseded_value.SPEC,
)
"""The spec of every built-in rule kind."""
