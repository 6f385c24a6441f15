"""The first divergence of a run: the earliest violation in trace order, and the minimal slice (from
the last passing checkpoint through it); and the veto: the earliest safety-critical violation, which
may come after a divergence on a normal key."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from judge.grade.windows import RunAccumulator, Window
from judge.ledger import ExpectedLedger
from judge.model import CheckpointReport, Divergence, Finding, Veto

NO_RANK = 1 << 62


def _violations(checkpoints: list[CheckpointReport], acc: RunAccumulator,
                keep: Callable[[Finding], bool]) -> list[tuple[int, Finding, Window]]:
    """(rank in trace order, finding, window) of every violation `keep` accepts, windows in order."""
    candidates: list[tuple[int, Finding, Window]] = []
    for cp, window in zip(checkpoints, acc.windows, strict=False):
        for f in cp.findings:
            if f.verdict != "violated" or not keep(f):
                continue
            if f.evidence_event is None:
                rank = NO_RANK
            elif f.source == "deterministic" and acc.first_hit is not None:
                rank = next((h.index for h in window.hits if h.event == f.evidence_event), NO_RANK)
            else:  # where the judge's evidence is in the window (read again for it)
                rank = window.locate({f.evidence_event}).get(f.evidence_event, (NO_RANK, 0))[0]
            candidates.append((rank, f, window))
    return candidates


def _earliest(candidates: list[tuple[int, Finding, Window]], ledger: ExpectedLedger) -> tuple[Finding, Window]:
    # Windows come in trace order, so the first window with a violation holds the earliest one.
    first_window = candidates[0][2]
    in_first = [(r, f) for r, f, w in candidates if w is first_window]
    _, finding = min(in_first, key=lambda rf: (rf[0], list(ledger.keys).index(rf[1].key)))
    return finding, first_window


def first_divergence(checkpoints: list[CheckpointReport], acc: RunAccumulator,
                     ledger: ExpectedLedger) -> tuple[Divergence | None, Sequence[str]]:
    """The earliest violation in trace order, and the slice from the last passing checkpoint to it."""
    candidates = _violations(checkpoints, acc, lambda f: f.evidence_event is not None)
    if not candidates:
        return None, []
    finding, first_window = _earliest(candidates, ledger)
    # Every candidate has its evidence event (the filter above) and so its turn (judge.checks).
    assert finding.evidence_event is not None and finding.turn is not None
    h = ledger.history(finding.key)
    divergence = Divergence(turn=finding.turn, key=finding.key, event=finding.evidence_event,
                            class_=h.class_, sensitivity=h.sensitivity, rule=finding.rule)
    if acc.slice_ids is not None and acc.first_hit is not None and acc.first_hit.event == finding.evidence_event:
        return divergence, acc.slice_ids
    return divergence, first_window.event_ids(finding.evidence_event)


def first_veto(checkpoints: list[CheckpointReport], acc: RunAccumulator, ledger: ExpectedLedger) -> Veto | None:
    """The earliest safety-critical violation (None: not vetoed), with every safety-critical key
    violated at the same event."""
    candidates = _violations(checkpoints, acc, lambda f: f.sensitivity == "safety-critical")
    if not candidates:
        return None
    finding, window = _earliest(candidates, ledger)
    same = [f.key for _, f, w in candidates if w is window and f.evidence_event == finding.evidence_event]
    keys = list(dict.fromkeys([finding.key, *sorted(same, key=list(ledger.keys).index)]))
    return Veto(turn=finding.turn, key=finding.key, event=finding.evidence_event,
                class_=ledger.history(finding.key).class_, rule=finding.rule, keys=keys)
