"""The hits of a scenario's rules on trace lines (TraceBuilder lines), without grading."""

from __future__ import annotations

from judge.checks import Hit, RuleSet
from judge.ledger import ExpectedLedger
from judge.trace import TraceReader


def rule_hits(ledger: ExpectedLedger, lines: list[dict]) -> list[Hit]:
    """Every hit of every rule, in trace order (the rules see lines before redaction as in grading)."""
    rules = RuleSet(ledger)
    reader = TraceReader(lines, expected_scenario=ledger.scenario.id, raw_hook=rules.raw_hook())
    rules.share_calls(reader.calls)
    hits: list[Hit] = []
    for i, event in enumerate(reader):
        hits += rules.observe(event, i)
    return hits


def outcomes(ledger: ExpectedLedger, lines: list[dict]) -> list[tuple[str, bool]]:
    """(event id, violated) of every hit."""
    return [(h.event, h.violated) for h in rule_hits(ledger, lines)]


def violations(report) -> list[tuple[str, str]]:
    """(key, evidence event) of every violated finding of a grade report."""
    return [(f.key, f.evidence_event) for cp in report.checkpoints for f in cp.findings if f.verdict == "violated"]
