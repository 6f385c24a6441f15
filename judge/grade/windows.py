"""Checkpoint windows: events stream through once; each checkpoint covers the turns since the previous
one (an implicit final checkpoint covers what follows the last one).

A grade's memory does not depend on how the checkpoints cut the run (issue 26): a window of a trace
file longer than SPILL_EVENTS is kept as where it starts in the file (its first line and event) and
how many events it holds, and its events are read again from the file when a judge request, the
failing slice or a judge's evidence needs them (TraceReader.reread); a shorter one, and lines given
one by one (the HTTP service), are kept in memory (a short trace is read once). With a
RunAccumulator the window's hits are settled as they come (recovery, the first
divergence, the hits the report reads), so a window of a million events holds a few hits, not a
million; a checkpoint with forbidden paths, whose hits are known only when the window closes, holds
its hits until then."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from judge.checks import Hit, RuleSet, leak_kinds
from judge.checks.paths import CallLog, forbidden_path_hits, path_review
from judge.checks.restated import Restatements
from judge.errors import TraceError
from judge.judges.base import JudgeResult
from judge.ledger import ExpectedLedger
from judge.model import Checkpoint, PathReview, Recovery
from judge.model.event_ids import EventIds
from judge.model.event_view import EventLike
from judge.summaries.position import TurnTracker
from judge.trace import TraceReader


@dataclass
class Window:
    """The events of one checkpoint window and what the rules saw in it."""

    checkpoint: Checkpoint
    implicit: bool = False
    from_turn: int = 0
    ids: list[str] = field(default_factory=list)  # in memory while the window is (source is None)
    n_events: int = 0
    first_index: int = 0  # trace position of the window's first event
    events: list[EventLike] = field(default_factory=list)  # in memory while the window is, for a judge
    hits: list[Hit] = field(default_factory=list)
    judge_result: JudgeResult | None = None
    calls: CallLog = field(default_factory=CallLog)
    path_review: PathReview | None = None
    kept: bool = False  # whether a judge will see the events (they are kept, or can be read again)
    source: TraceReader | None = None  # set once the window is read again from the trace file instead
    first_line: int = 0  # file line of the window's first event (a trace file's)
    last_id: str | None = None  # the id of its last event (a re-read checks it: the file did not change)
    tally: HitTally | None = None  # the hits settled as they come (with a RunAccumulator)
    run: IdRun | None = None  # a long window whose ids are numbered in a row: they need no re-read
    _located: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def has_events(self) -> bool:
        """Whether the window has events a judge can be shown."""
        return self.kept and self.n_events > 0

    def iter_events(self, count: int | None = None) -> Iterator[Any]:
        """The window's first `count` events (all: None), from memory or read again from the file
        one at a time (a TraceError if the file no longer holds them)."""
        count = self.n_events if count is None else min(count, self.n_events)
        if self.source is None:
            yield from self.events[:count]
            return
        seen, event = 0, None
        for event in self.source.reread(self.first_line, count):
            seen += 1
            yield event
        if seen != count or (count == self.n_events and count and event is not None and event.id != self.last_id):
            raise TraceError("the trace changed while it was graded (a window read again differs)",
                             file=self.source.name)

    def read_events(self) -> list[Any]:
        """The window's events, as a judge request shows them."""
        return list(self.iter_events())

    def ids_through(self, hit: Hit) -> Sequence[str]:
        """The ids of the window's events up to the event of `hit`, one of them (the failing slice):
        compact (EventIds) for a window kept as where it is in the file, which may be most of the run."""
        count = hit.index - self.first_index + 1
        if self.run is not None:
            ids = self.run.ids(count)
            if ids[-1] != hit.event:
                raise AssertionError(f"{hit.event} is not event {count} of its window")  # a bug, not input
            return ids
        if self.source is None:
            return self.ids[:self.ids.index(hit.event) + 1]
        ids = EventIds.collect(self.source.reread(self.first_line, count, ids_only=True))
        if len(ids) != count or ids[-1] != hit.event:
            raise TraceError("the trace changed while it was graded (a window read again differs)",
                             file=self.source.name)
        return ids

    def event_ids(self, upto: str | None = None) -> Sequence[str]:
        """The ids a judge was shown (none: no judge), through `upto` when the window has it."""
        if self.source is None:
            return self.ids[:self.ids.index(upto) + 1] if upto in self.ids else list(self.ids)
        if not self.has_events:
            return []
        found = self.locate({upto}) if upto is not None else {}
        count = found[upto][0] - self.first_index + 1 if upto in found else None
        return EventIds.collect(e.id for e in self.iter_events(count))

    def locate(self, ids: set[str]) -> dict[str, tuple[int, int]]:
        """(trace position, turn) of those of `ids` a judge was shown in this window (one pass over
        the window for ids not asked before)."""
        wanted = {i for i in ids if i not in self._located}
        if wanted and self.has_events:
            for i, e in enumerate(self.iter_events()):
                if e.id in wanted:
                    self._located[e.id] = (self.first_index + i, e.turn)
        self._located.update((i, (-1, -1)) for i in wanted if i not in self._located)
        return {i: self._located[i] for i in ids if self._located.get(i, (-1, -1))[0] >= 0}


# A window of a trace file holds its ids (and, for a judge, its events) in memory up to this many
# events; a longer one is then kept as where it is in the file and read again when needed, so that a
# grade's memory does not follow the checkpoint plan and a short trace is still read once.
SPILL_EVENTS = 1 << 15


@dataclass
class IdRun:
    """Ids numbered in a row (`e17`, `e18`, ...: most traces number their events so): a window's ids
    as a prefix and a first number, so that the slice of a long window needs no re-read."""

    prefix: str
    first: int

    @classmethod
    def of(cls, ids: list[str]) -> IdRun | None:
        """The run `ids` are, or None when they are not one (a number written back gives the id)."""
        head = ids[0].rstrip("0123456789")
        digits = ids[0][len(head):]
        if not digits or (digits[0] == "0" and len(digits) > 1) or not digits.isascii():
            return None
        first = int(digits)
        # a list compared with a list (in C), not the run's EventIds made again one id at a time
        return cls(head, first) if [f"{head}{first + i}" for i in range(len(ids))] == ids else None

    def ids(self, count: int) -> EventIds:
        """The first `count` ids of the run (none of them made until asked for)."""
        return EventIds.numbered(self.prefix, self.first, count)


def checkpoints(ledger: ExpectedLedger) -> list[Checkpoint]:
    return sorted(ledger.scenario.checkpoints, key=lambda c: c.after_turn)



def stream_windows(reader: TraceReader, ledger: ExpectedLedger, rules: RuleSet,
                   keep_events: bool, on_close, summaries: list | None,
                   unknown_writes: dict[str, str] | None = None, acc: RunAccumulator | None = None) -> int:
    """Feed every event (the reader's records: judge.trace.records) to the rules, closing each
    checkpoint window as the turns pass it. `keep_events`: a judge will see the windows' events
    (in memory up to SPILL_EVENTS a window, and for lines given one by one; beyond that a trace
    file's are read again). `summaries`:
    where to keep the summary events, each with what came before it in its turn
    (judge.summaries.position; None: nothing will audit them, so none is kept).
    `unknown_writes` gets key -> first event id of each state-write to a key the ledger lacks.
    `acc`: the accumulator `on_close` gives the windows to, which then settles their hits as they
    come (else each window holds its hits until it closes)."""
    cps = checkpoints(ledger)
    every_turn = ledger.every_turn  # a policy graded alone: an implicit checkpoint ends every turn
    track_calls = any(cp.allowed_actions or cp.forbidden_paths for cp in cps)
    spill = SPILL_EVENTS if reader.rereadable else 0  # 0: lines given one by one stay in memory

    def opened(checkpoint: Checkpoint, implicit: bool, from_turn: int) -> Window:
        window = Window(checkpoint, implicit=implicit, from_turn=from_turn, kept=keep_events)
        if acc is not None and not checkpoint.forbidden_paths:
            window.tally = HitTally(acc)
        return window

    observe = rules.observe
    idx, prev_turn = 0, -1
    window = opened(cps[0], False, 0) if cps else None
    # The window's bound (its checkpoint's turn; the implicit final window has none) and its lists.
    bound = window.checkpoint.after_turn if window is not None else -1
    ids: list[str] | None = window.ids if window is not None else []
    hits: list[Hit] = window.hits if window is not None else []
    add = window.tally.add if window is not None and window.tally is not None else hits.extend
    count = turn = number = 0
    event = last = None
    prefix = expect = ""
    tracker = TurnTracker() if summaries is not None else None
    for count, event in enumerate(reader.records(), start=1):
        if tracker is not None:
            tracker.observe(event)
        turn = event.turn
        if turn > bound:
            while window is not None and not window.implicit and turn > window.checkpoint.after_turn:
                _close(window, on_close, count - 1, last)
                prev_turn = window.checkpoint.after_turn
                idx += 1
                window = opened(cps[idx], False, prev_turn + 1) if idx < len(cps) else None
            if window is not None and window.implicit and every_turn:
                _close(window, on_close, count - 1, last)
                prev_turn, window = window.checkpoint.after_turn, None
            if window is None:
                window = opened(Checkpoint(after_turn=turn), True, prev_turn + 1)
            bound = turn if every_turn and window.implicit else (1 << 62) if window.implicit \
                else window.checkpoint.after_turn
            ids, hits = window.ids, window.hits
            add = window.tally.add if window.tally is not None else hits.extend
        assert window is not None  # the first event passes the bound -1, so a window is open from it on
        last = event
        if ids is not None:  # the window is still in memory
            if not ids:
                window.first_index, window.first_line = count - 1, reader.line
            ids.append(event.id)
            if keep_events:
                window.events.append(event)
            if spill and len(ids) >= spill:  # from here on the window is where it is in the file
                window.run = None if keep_events else IdRun.of(ids)
                if window.run is not None:  # numbered ids in a row: the next one is foretold
                    prefix, number = window.run.prefix, window.run.first + len(ids)
                    expect = f"{prefix}{number}"
                else:
                    window.source = reader
                window.ids, window.events, ids = [], [], None
        elif window.run is not None:
            if event.id == expect:
                number += 1
                expect = f"{prefix}{number}"
            else:  # the run broke: the window is read again from the file after all
                window.run, window.source = None, reader
        found = observe(event, count - 1)
        if found:
            add(found)
        kind = event.kind
        if kind == "state-write":
            if unknown_writes is not None and event.key not in ledger:
                unknown_writes.setdefault(event.key, event.id)
        elif kind == "summary" and summaries is not None and tracker is not None:  # (both or neither)
            summaries.append((event, tracker.snapshot()))
        if track_calls:
            window.calls.observe(event, count - 1)
    while window is not None:
        if window.implicit:
            window.checkpoint.after_turn = turn
        _close(window, on_close, count, last)
        idx += 1
        window = opened(cps[idx], False, window.checkpoint.after_turn + 1) if idx < len(cps) else None
    return count


def _close(window: Window, on_close, end: int, last: Any) -> None:
    """`end`: the trace position after the window's last event (a window read again counts by it)."""
    window.n_events = len(window.ids) if window.source is None and window.run is None else end - window.first_index
    if window.n_events:
        window.last_id = last.id
    if window.tally is not None:
        window.hits = window.tally.hits()
    on_close(window)


@dataclass
class RunAccumulator:
    """Per-run results gathered as windows close (bounded by checkpoints, not events)."""

    windows: list[Window] = field(default_factory=list)
    slice_ids: Sequence[str] | None = None
    first_hit: Hit | None = None
    recovery: dict[str, Recovery] = field(default_factory=dict)
    restatements: Restatements | None = None  # the RuleSet's: who restated a key before it recovered
    # key -> (index, turn) of the violation a recovery answers
    _stretch: dict[str, tuple[int, int]] = field(default_factory=dict)

    def close(self, window: Window) -> None:
        if window.tally is not None:  # its hits were settled as they came (HitTally)
            first_here = window.tally.first_here
        else:
            # A compliant use of a rule counts as recovery only when that event broke no rule at all.
            violating = {h.event for h in window.hits if h.violated}
            for hit in window.hits:
                if hit.violated or hit.event not in violating:
                    self._track_recovery(hit)
            bad = [h for h in window.hits if h.violated]
            first_here = bool(bad) and self.first_hit is None
            if first_here:
                self.first_hit = min(bad, key=lambda h: h.index)
            window.hits = _compact_hits(window.hits)
        if first_here and self.first_hit is not None:  # (first_here: the first hit is set)
            self.slice_ids = window.ids_through(self.first_hit)
        window.ids = window.ids if window.events else []  # ids are only needed for the judge's view
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


class HitTally:
    """One window's hits settled as the rules find them, exactly as RunAccumulator.close settles a
    window's hits when it closes (recovery in trace order, the first violation of the run), keeping
    only what `_compact_hits` would keep: memory follows the keys, not the window's length."""

    def __init__(self, acc: RunAccumulator) -> None:
        self.acc = acc
        self.first_here = False  # the run's first violation is in this window
        self._seq = 0
        self._first_bad: dict[str, tuple[int, Hit]] = {}
        self._last: dict[str, tuple[int, Hit]] = {}
        self._leaks: list[tuple[int, Hit]] = []
        self._leak_checks = leak_kinds()

    def add(self, found: list[Hit]) -> None:
        """The hits of one event (a compliant hit counts for recovery only if no rule broke there)."""
        violating = any(h.violated for h in found)
        track = self.acc._track_recovery
        for hit in found:
            self._seq += 1
            entry = (self._seq, hit)
            if hit.violated:
                self._first_bad.setdefault(hit.key, entry)
                if hit.check in self._leak_checks:
                    self._leaks.append(entry)
                track(hit)
            elif not violating:
                track(hit)
            self._last[hit.key] = entry
        if violating and self.acc.first_hit is None:
            self.acc.first_hit = next(h for h in found if h.violated)
            self.first_here = True

    def hits(self) -> list[Hit]:
        """The kept hits, in the order they came."""
        kept = dict([*self._first_bad.values(), *self._last.values(), *self._leaks])
        return [kept[seq] for seq in sorted(kept)]


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
