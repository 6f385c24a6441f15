"""The built-in rule kinds: one module each, holding the kind's model, its check and its `SPEC`
(judge.checks.spec.RuleSpec). The registry (judge.model.rules) loads every module of this package;
a module whose name starts with `_` is a helper, not a kind."""
