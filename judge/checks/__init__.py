"""Deterministic checks: rules that guard ledger keys turn events into hits; action paths per window."""

from judge.checks.matching import carries_value
from judge.checks.rules import PROHIBITIONS, Hit, RuleSet, RunState, rule_ids

__all__ = ["PROHIBITIONS", "Hit", "RuleSet", "RunState", "carries_value", "rule_ids"]
