"""The bias battery: ask a judge about each labelled case as it is and under each perturbation
(judge.grade.bias.perturb), and hand the answers to calibration.bias for flip rates, McNemar's test
and the bias gate (`judge bias`).

Every request is the one the grader sends for the case's checkpoint (judge.grade.cases), so what
is measured is the judge as it grades. The unperturbed and perturbed requests are asked in one
batch (the judge bounds its own concurrency; an llm judge's cache makes a rerun free). A verdict
is the judge's finding for the case's key; a judge error, or a key it left out, leaves that pair
out (counted as a judge error).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.errors import UsageError
from judge.grade.bias.perturb import PERTURBATIONS
from judge.grade.calibration import labels_sha
from judge.grade.cases import CaseSet, ask, case_set, unique, verdict_of
from judge.judges.base import Judge, JudgeRequest


@dataclass
class BiasRun:
    """The gate (a calibration.bias.BiasGate) and what could not be asked."""

    gate: Any
    cases: int
    split: str
    missing: list[str] = field(default_factory=list)  # labelled cases whose checkpoint asks no judge
    base_errors: list[str] = field(default_factory=list)  # cases the judge gave no unperturbed verdict on


def check_names(names: Sequence[str] | None) -> list[str]:
    """The perturbations to run (default: all, in the table's order); an unknown name is an error."""
    if not names:
        return list(PERTURBATIONS)
    unknown = [n for n in names if n not in PERTURBATIONS]
    if unknown:
        raise UsageError(f"unknown perturbation {unknown[0]!r}; known: {', '.join(PERTURBATIONS)}")
    return list(dict.fromkeys(names))


def _plan(cases: CaseSet, chosen: list, names: list[str]) -> tuple[list[tuple[str, Any, JudgeRequest]], dict[str, int]]:
    """(perturbation, case, perturbed request) for every case a perturbation changes, and how many
    it could not change. A perturbation that does not depend on the key is applied once per request."""
    planned: list[tuple[str, Any, JudgeRequest]] = []
    skipped = dict.fromkeys(names, 0)
    made: dict[tuple, JudgeRequest | None] = {}
    for name in names:
        perturb, per_key = PERTURBATIONS[name]
        for c in chosen:
            request = cases.requests[c.case]
            slot = (name, id(request), c.key if per_key else None)
            if slot not in made:
                made[slot] = perturb(request, c.key, cases.names[c.case])
            perturbed = made[slot]
            if perturbed is None:
                skipped[name] += 1
            else:
                planned.append((name, c, perturbed))
    return planned, skipped


def run_battery(labels: Path, judge: Judge, *, scenarios: Iterable[Path] = (),
                perturbations: Sequence[str] | None = None, split: str = "all", max_flip: float = 0.05,
                interval: str = "exact", seed: int = 0) -> BiasRun:
    """Flip rate and McNemar's test per perturbation, and the bias gate, of `judge` on the labelled
    cases of `labels` (`split`: all, dev or test)."""
    from calibration import FlipObservation, bias_gate

    if split not in ("all", "dev", "test"):
        raise UsageError(f"--split must be all, dev or test; got {split!r}")
    if interval not in ("exact", "wilson"):
        raise UsageError(f"--interval must be exact or wilson; got {interval!r}")
    if not 0.0 <= max_flip < 1.0:
        raise UsageError(f"--max-flip must lie in [0, 1); got {max_flip!r}")
    names = check_names(perturbations)
    cases = case_set(labels, scenarios=scenarios, seed=seed)
    chosen = [c for c in cases.cases if c.case in cases.requests and split in ("all", c.split)]
    planned, skipped = _plan(cases, chosen, names)
    asked = unique([cases.requests[c.case] for c in chosen] + [r for _, _, r in planned])
    answers = {id(r): a for r, a in zip(asked, ask(judge, asked), strict=False)}
    base = {c.case: verdict_of(answers[id(cases.requests[c.case])], c.key) for c in chosen}
    observations = [FlipObservation(case=c.case, perturbation=name, base=base[c.case],
                                    perturbed=verdict_of(answers[id(r)], c.key)) for name, c, r in planned]
    gate = bias_gate(observations, fingerprint=judge.fingerprint(), labels_sha256=labels_sha(labels),
                     perturbations=names, not_applicable=skipped, max_flip=max_flip,
                     interval="wilson" if interval == "wilson" else "exact")  # checked above; typed for calibration
    return BiasRun(gate=gate, cases=len(chosen), split=split,
                   missing=[c for c in cases.missing if split in ("all", _split_of(cases, c))],
                   base_errors=sorted(case for case, verdict in base.items() if verdict is None))


def _split_of(cases: CaseSet, case: str) -> str:
    return next(c.split for c in cases.cases if c.case == case)
