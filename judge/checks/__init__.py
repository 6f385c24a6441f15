"""Deterministic checks: rules that guard ledger keys turn events into hits; action paths per window.

Each rule kind is a spec (judge.checks.spec) and a per-rule tracker (judge.checks.tracker) in its own
module (judge.checks.kinds, or a plug-in of the `judge.rules` entry-point group); judge.checks.registry
derives every table from the specs."""

from judge.checks.matching import carries_value
from judge.checks.registry import family_of, leak_kinds, origin, spec_for, specs
from judge.checks.rules import Hit, RuleSet, RunState, rule_ids
from judge.checks.spec import CheckpointVerdict, DraftSpec, RuleContext, RuleSpec
from judge.checks.tracker import CheckTracker, Tracker

__all__ = ["CheckTracker", "CheckpointVerdict", "DraftSpec", "Hit", "RuleContext", "RuleSet", "RuleSpec", "RunState",
           "Tracker", "carries_value", "family_of", "leak_kinds", "origin", "rule_ids", "spec_for", "specs"]
