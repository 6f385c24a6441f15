"""Checkpoint windows: events stream through once; each checkpoint covers the turns since the previous
one (an implicit final checkpoint covers what follows the last one). Only the current window is held
in memory, plus its events when a judge has to see them; a closed window keeps only the hits its
report reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from judge.checks import Hit, RuleSet, leak_kinds
from judge.checks.restated import Restatements
from judge.checks.paths import CallLog, forbidden_path_hits, path_review
from judge.judges.base import JudgeResult
from judge.ledger import ExpectedLedger
from judge.model import Checkpoint, Event, PathReview, Recovery
from judge.trace import TraceReader


@dataclass
class Window:
    """The events of one checkpoint window and what the rules saw in it."""

    checkpoint: Checkpoint
    implicit: bool = False
    from_turn: int = 0
    ids: list[str] = field(default_factory=list)
    n_events: int = 0
    first_index: int = 0  # trace position of the window's first event
    events: list[Event] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    judge_result: JudgeResult | None = None
    calls: CallLog = field(default_factory=CallLog)
    path_review: PathReview | None = None


def checkpoints(ledger: ExpectedLedger) -> list[Checkpoint]:
    return sorted(ledger.scenario.checkpoints, key=lambda c: c.after_turn)



def stream_windows(reader: TraceReader, ledger: ExpectedLedger, rules: RuleSet,
                    keep_events: bool, on_close, summaries: list | None,
                    unknown_writes: dict[str, str] | None = None) -> int:
    """Feed every event (the reader's records: judge.trace.records) to the rules, closing each
    checkpoint window as the turns pass it. `summaries`: where to keep the summary events (None:
    nothing will audit them, so none is kept). `unknown_writes` gets key -> first event id of each
    state-write to a key the ledger lacks."""
    cps = checkpoints(ledger)
    every_turn = ledger.every_turn  # a policy graded alone: an implicit checkpoint ends every turn
    track_calls = any(cp.allowed_actions or cp.forbidden_paths for cp in cps)
    observe = rules.observe
    idx, prev_turn = 0, -1
    window = Window(cps[0], from_turn=0) if cps else None
    # The window's bound (its checkpoint's turn; the implicit final window has none) and its lists.
    bound = window.checkpoint.after_turn if window is not None else -1
    ids: list[str] = window.ids if window is not None else []
    hits: list[Hit] = window.hits if window is not None else []
    count = turn = 0
    for count, event in enumerate(reader.records(), start=1):
        turn = event.turn
        if turn > bound:
            while window is not None and not window.implicit and turn > window.checkpoint.after_turn:
                _close(window, on_close)
                prev_turn = window.checkpoint.after_turn
                idx += 1
                window = Window(cps[idx], from_turn=prev_turn + 1) if idx < len(cps) else None
            if window is not None and window.implicit and every_turn:
                _close(window, on_close)
                prev_turn, window = window.checkpoint.after_turn, None
            if window is None:
                window = Window(Checkpoint(after_turn=turn), implicit=True, from_turn=prev_turn + 1)
            bound = turn if every_turn and window.implicit else (1 << 62) if window.implicit \
                else window.checkpoint.after_turn
            ids, hits = window.ids, window.hits
        if not ids:
            window.first_index = count - 1
        ids.append(event.id)
        if keep_events:
            window.events.append(event)
        found = observe(event, count - 1)
        if found:
            hits.extend(found)
        kind = event.kind
        if kind == "state-write":
            if unknown_writes is not None and event.key not in ledger:
                unknown_writes.setdefault(event.key, event.id)
        elif kind == "summary" and summaries is not None:
            summaries.append(event)
        if track_calls:
            window.calls.observe(event, count - 1)
    while window is not None:
        if window.implicit:
            window.checkpoint.after_turn = turn
        _close(window, on_close)
        idx += 1
        window = Window(cps[idx], from_turn=window.checkpoint.after_turn + 1) if idx < len(cps) else None
    return count


def _close(window: Window, on_close) -> None:
    window.n_events = len(window.ids)
    on_close(window)


@dataclass
class RunAccumulator:
    """Per-run results gathered as windows close (bounded by checkpoints, not events)."""

    windows: list[Window] = field(default_factory=list)
    slice_ids: list[str] | None = None
    passing_ids: list[str] = field(default_factory=list)
    first_hit: Hit | None = None
    recovery: dict[str, Recovery] = field(default_factory=dict)
    restatements: Restatements | None = None  # the RuleSet's: who restated a key before it recovered
    _stretch: dict[str, tuple[int, int]] = field(default_factory=dict)  # key -> (index, turn) of the violation a recovery answers

    def close(self, window: Window) -> None:
        # A compliant use of a rule counts as recovery only when that event broke no rule at all.
        violating = {h.event for h in window.hits if h.violated}
        for hit in window.hits:
            if hit.violated or hit.event not in violating:
                self._track_recovery(hit)
        bad = [h for h in window.hits if h.violated]
        if bad and self.first_hit is None:
            self.first_hit = min(bad, key=lambda h: h.index)
            cut = window.ids.index(self.first_hit.event) + 1
            self.slice_ids = window.ids[:cut]
        window.ids = window.ids if window.events else []  # ids are only needed for the judge's view
        window.hits = _compact_hits(window.hits)
        self.windows.append(window)

    def _track_recovery(self, hit: Hit) -> None:
        rec = self.recovery.get(hit.key)
        if hit.violated:
            if rec is None:
                rec = self.recovery[hit.key] = Recovery(violated_at=hit.turn, recovered=False)
            elif rec.recovered:  # violated again after a recovery: a new stretch to recover from
                rec.recovered = False
                rec.recovered_at = rec.recovered_event = rec.turns = rec.restated_by = None
            else:
                return
            rec.violated_event = hit.event
            self._stretch[hit.key] = (hit.index, hit.turn)
        elif rec is not None and not rec.recovered:
            index, turn = self._stretch.get(hit.key, (-1, rec.violated_at))
            rec.recovered, rec.recovered_at, rec.recovered_event = True, hit.turn, hit.event
            rec.turns = hit.turn - turn
            if self.restatements is not None:
                rec.restated_by = self.restatements.between(hit.key, index, hit.index)


def _compact_hits(hits: list[Hit]) -> list[Hit]:
    """What a closed window's report still reads: per key the first violation and the last hit,
    and every leak. Keeps memory growing with the longest window, not with the trace."""
    first_bad: dict[str, int] = {}
    last: dict[str, int] = {}
    leaks = set()
    leak_checks = leak_kinds()
    for i, h in enumerate(hits):
        if h.violated and h.key not in first_bad:
            first_bad[h.key] = i
        if h.violated and h.check in leak_checks:
            leaks.add(i)
        last[h.key] = i
    keep = set(first_bad.values()) | set(last.values()) | leaks
    return [h for i, h in enumerate(hits) if i in keep]


def close_paths(window: Window) -> Window:
    """Forbidden paths become hits of the window; a window outside every allowed set, a review mark."""
    if window.calls.calls:
        window.hits.extend(forbidden_path_hits(window.checkpoint, window.calls))
        window.hits.sort(key=lambda h: h.index)
        window.path_review = path_review(window.checkpoint, window.calls)
    window.calls = CallLog()
    return window
