"""Labelled ledger cases as judge requests: what the bias battery and `judge align` ask a judge.

A labelled case is one (scenario, trace, checkpoint, key) row of a labels file (labels/README.md).
Its request is the one the grader sends for that checkpoint (judge.grade.run.checkpoint_requests:
the ledger at the checkpoint and the window's events, redacted and model-blind); the judge's
verdict on the case is its finding for the key in the answer. Cases are split into `dev` and
`test`: by their `split` field where the labels give one, else by scenario with a seeded hash
(`scenario_split`), so no scenario is in both halves.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError
from judge.grade.labelled import _label_rows, _scenario_file
from judge.grade.run import checkpoint_requests
from judge.judges.base import Judge, JudgeRequest, JudgeResult
from judge.ledger import load_ledger

SPLITS = ("dev", "test")
TEST_SHARE = 0.5  # of the scenarios, when the labels declare no split


@dataclass(frozen=True)
class LabelledCase:
    """One labelled case: its reference label (the annotators' majority; None for a tie) and split."""

    case: str
    scenario: str
    trace: Path
    after_turn: int
    key: str
    label: str | None
    split: str
    evidence_event: str | None = None
    note: str | None = None


@dataclass
class CaseSet:
    """Labelled cases with the request each one is asked in (several cases share a request)."""

    cases: list[LabelledCase]
    requests: dict[str, JudgeRequest] = field(default_factory=dict)  # case -> its checkpoint's request
    names: dict[str, tuple[str | None, ...]] = field(default_factory=dict)  # case -> candidate's names
    missing: list[str] = field(default_factory=list)  # cases whose checkpoint asks no judge
    split_source: str = "labels"  # `labels` (their split field) or `scenario hash (seed N)`
    leaking: list[str] = field(default_factory=list)  # scenarios with cases in both splits

    def of_split(self, split: str) -> list[LabelledCase]:
        return [c for c in self.cases if c.split == split and c.case in self.requests]


def scenario_split(scenario: str, *, seed: int = 0, test_share: float = TEST_SHARE) -> str:
    """`test` or `dev` for a scenario, from sha256 of the seed and its id: stable, and the same for
    every case of the scenario."""
    digest = hashlib.sha256(f"{seed}:{scenario}".encode()).digest()
    return "test" if int.from_bytes(digest[:8], "big") / 2**64 < test_share else "dev"


def _majority(labels: list[str]) -> str | None:
    counts = {label: labels.count(label) for label in labels}
    top = max(counts.values())
    winners = [label for label, n in counts.items() if n == top]
    return winners[0] if len(winners) == 1 else None


def read_cases(labels: Path, *, seed: int = 0) -> tuple[list[LabelledCase], str]:
    """The labelled ledger cases of a labels file or folder, one per case id, and how they were
    split (their `split` field, else by scenario hash). A case needs case, scenario, trace,
    after_turn, key, label and annotator; a split other than dev or test is an error."""
    rows: dict[str, list[tuple[Path, int, dict[str, Any]]]] = {}
    for file, lineno, row in _label_rows(labels):
        for name in ("case", "scenario", "trace", "after_turn", "key", "label"):
            if name not in row:
                raise JudgeInputError("a ledger label needs case, scenario, trace, after_turn, key and label",
                                      file=str(file), line=lineno, field=name)
        if row.get("split") is not None and row["split"] not in SPLITS:
            raise JudgeInputError(f"split must be dev or test; got {row['split']!r}", file=str(file),
                                  line=lineno, field="split")
        rows.setdefault(str(row["case"]), []).append((file, lineno, row))
    declared = any(row.get("split") is not None for group in rows.values() for _, _, row in group)
    cases = []
    for case, group in rows.items():
        file, lineno, first = group[0]
        latest = {str(row.get("annotator")): row for _, _, row in group}  # an annotator's last line wins
        splits = {row["split"] for _, _, row in group if row.get("split") is not None}
        if len(splits) > 1 or (declared and not splits):
            raise JudgeInputError(f"case {case!r} needs one split (dev or test) on its rows; got "
                                  f"{sorted(splits) or 'none'}", file=str(file), line=lineno, field="split")
        label = _majority([str(row["label"]) for row in latest.values()])
        chosen = next((row for row in latest.values() if str(row["label"]) == label), first)
        cases.append(LabelledCase(
            case=case, scenario=str(first["scenario"]), trace=(file.parent / first["trace"]).resolve(),
            after_turn=int(first["after_turn"]), key=str(first["key"]), label=label,
            split=splits.pop() if splits else scenario_split(str(first["scenario"]), seed=seed),
            evidence_event=chosen.get("evidence_event"), note=chosen.get("note")))
    return cases, "labels" if declared else f"scenario hash (seed {seed})"


def leaking_scenarios(cases: Iterable[LabelledCase]) -> list[str]:
    """Scenarios with cases in both splits (a split the labels declare may do that; then what is
    learnt on dev can leak into test through the shared scenario)."""
    splits: dict[str, set[str]] = {}
    for c in cases:
        splits.setdefault(c.scenario, set()).add(c.split)
    return sorted(s for s, found in splits.items() if len(found) > 1)


def case_set(labels: Path, *, scenarios: Iterable[Path] = (), seed: int = 0) -> CaseSet:
    """The labelled cases and their requests: each labelled trace is read once."""
    cases, source = read_cases(labels, seed=seed)
    out = CaseSet(cases=cases, split_source=source, leaking=leaking_scenarios(cases))
    by_trace: dict[tuple[Path, str], list[LabelledCase]] = {}
    for c in cases:
        by_trace.setdefault((c.trace, c.scenario), []).append(c)
    search = list(scenarios)
    for (trace, scenario_id), group in sorted(by_trace.items()):
        ledger = load_ledger(_scenario_file(scenario_id, trace, search))
        names, requests = checkpoint_requests(ledger, trace)
        by_turn = {r.after_turn: r for r in requests}
        for c in group:
            request = by_turn.get(c.after_turn)
            if request is None or c.key not in request.keys:
                out.missing.append(c.case)
                continue
            out.requests[c.case] = request
            out.names[c.case] = names
    return out


def verdict_of(result: JudgeResult, key: str) -> str | None:
    """The judge's verdict on `key` in an answer; None for a judge error or a key it left out."""
    if result.verdict is None:
        return None
    return next((f.verdict for f in result.verdict.findings if f.key == key), None)


def evidence_of(result: JudgeResult, key: str) -> str | None:
    """The evidence event the judge named for `key`, if any."""
    if result.verdict is None:
        return None
    return next((f.evidence_event for f in result.verdict.findings if f.key == key), None)


def ask(judge: Judge, requests: Sequence[JudgeRequest]) -> list[JudgeResult]:
    """The judge's answers to `requests`, asked concurrently on one event loop (the judge bounds its
    own concurrency), then its connections closed, as the grader does."""
    import asyncio  # (here, as in judge.grade.run: only when a judge is asked)

    async def run() -> list[JudgeResult]:
        try:
            return list(await asyncio.gather(*(judge.judge_checkpoint(r) for r in requests)))
        finally:
            close = getattr(judge, "aclose", None)
            if close is not None:
                await close()

    return asyncio.run(run()) if requests else []


def unique(requests: Iterable[JudgeRequest]) -> list[JudgeRequest]:
    """Each distinct request once, in first-seen order (requests are compared by identity)."""
    seen: dict[int, JudgeRequest] = {}
    for r in requests:
        seen.setdefault(id(r), r)
    return list(seen.values())
