"""The first divergence of a run: the earliest violation in trace order, and the minimal slice (from
the last passing checkpoint through it)."""

from __future__ import annotations

from judge.grade.windows import RunAccumulator, Window
from judge.ledger import ExpectedLedger
from judge.model import CheckpointReport, Divergence, Finding


def first_divergence(checkpoints: list[CheckpointReport], acc: RunAccumulator,
                      ledger: ExpectedLedger) -> tuple[Divergence | None, list[str]]:
    """The earliest violation in trace order, and the slice from the last passing checkpoint to it."""
    candidates: list[tuple[int, Finding, Window]] = []
    for cp, window in zip(checkpoints, acc.windows):
        order = {eid: window.first_index + i for i, eid in enumerate(window.ids)} if window.ids else {}
        for f in cp.findings:
            if f.verdict != "violated" or f.evidence_event is None:
                continue
            if f.source == "deterministic" and acc.first_hit is not None:
                rank = next((h.index for h in window.hits if h.event == f.evidence_event), 1 << 62)
            else:
                rank = order.get(f.evidence_event, 1 << 62)
            candidates.append((rank, f, window))
    if not candidates:
        return None, []
    # Windows come in trace order, so the first window with a violation holds the divergence.
    first_window = next(w for _, _, w in candidates)
    in_first = [(r, f) for r, f, w in candidates if w is first_window]
    rank, finding = min(in_first, key=lambda rf: (rf[0], list(ledger.keys).index(rf[1].key)))
    h = ledger.history(finding.key)
    divergence = Divergence(turn=finding.turn, key=finding.key, event=finding.evidence_event,
                            class_=h.class_, sensitivity=h.sensitivity, rule=finding.rule)
    if acc.slice_ids is not None and acc.first_hit is not None and acc.first_hit.event == finding.evidence_event:
        return divergence, acc.slice_ids
    ids = first_window.ids
    cut = ids.index(finding.evidence_event) + 1 if finding.evidence_event in ids else len(ids)
    return divergence, ids[:cut]
