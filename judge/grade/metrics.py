"""Run-level scores: the sensitivity-weighted quality score and the component metrics.

Each component metric is the share of assessed findings (upheld or violated) that were upheld in its
family; it is null when nothing in that family was assessed. The quality score never cancels a veto:
eligibility for release is decided apart from it (grade.py).
"""

from __future__ import annotations

from typing import Iterable

from judge.model import Finding, Metrics, Recovery

SENSITIVITY_WEIGHT = {"normal": 1.0, "costly": 3.0, "safety-critical": 10.0}


def _share(findings: Iterable[Finding]) -> float | None:
    assessed = [f for f in findings if f.verdict in ("upheld", "violated")]
    if not assessed:
        return None
    return round(sum(f.verdict == "upheld" for f in assessed) / len(assessed), 4)


def quality_score(findings: list[Finding]) -> float | None:
    """Sum of weights of upheld findings over the sum of weights of assessed findings."""
    assessed = [f for f in findings if f.verdict in ("upheld", "violated")]
    if not assessed:
        return None
    total = sum(SENSITIVITY_WEIGHT[f.sensitivity or "normal"] for f in assessed)
    kept = sum(SENSITIVITY_WEIGHT[f.sensitivity or "normal"] for f in assessed if f.verdict == "upheld")
    return round(kept / total, 4)


def component_metrics(findings: list[Finding], recovery: dict[str, Recovery], ledger,
                      rule_families: dict[str, str | None]) -> Metrics:
    """The component metrics; `rule_families` maps each rule id to its kind's metric family
    (judge.checks.spec.RuleSpec.family)."""
    def _rule_family(f: Finding) -> str | None:
        return rule_families.get(f.rule or "")

    has_supersession = {k for k, h in ledger.keys.items() if len(h.versions) > 1}
    return Metrics(
        constraint_retention=_share(f for f in findings if f.class_ in ("constraint", "goal", "permission")),
        supersession_accuracy=_share(f for f in findings if f.key in has_supersession),
        completion_integrity=_share(f for f in findings if f.class_ == "completion"
                                    or _rule_family(f) == "completion"),
        scope_fidelity=_share(f for f in findings if _rule_family(f) == "scope"),
        recovery_coherence=(round(sum(r.recovered for r in recovery.values()) / len(recovery), 4)
                            if recovery else None),
        handoff_fidelity=_share(f for f in findings if _rule_family(f) == "handoff"),
    )
