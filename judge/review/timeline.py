"""The trace of a graded run around its findings, for a page that shows it (judge.render.html).

The trace is read once, streaming, through judge.trace.TraceReader (so every value is redacted as it
is read) and cut into the report's checkpoint windows. A short trace (`Limits.whole` events or
fewer) is shown whole. A long one is bounded: the events a finding points at (its *pins*), a few
events on each side of the ones that matter (the evidence of violated, flagged, disputed or
doubtful findings, the first divergence and the veto: the *focus*), the two ends of the slice and
the first events of each window, at most `Limits.max_events` in all (the pins and the focus always);
everything else becomes a `Gap` that says how many events, of which turns, are not shown. So a
million-event trace makes a page of a few thousand events, never one of a million.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError
from judge.model.event_ids import membership

INTERESTING = ("violated", "flagged", "judge-error")


@dataclass(frozen=True)
class Limits:
    whole: int = 400        # a trace of at most this many events is shown whole
    context: int = 4        # events shown on each side of a focus event
    slice_ends: int = 10    # events shown at each end of the slice
    window_head: int = 2    # first events shown of a window that has a focus event
    max_events: int = 1500  # events shown per run at most; pins and focus events always
    max_text: int = 2000    # characters shown of an event's body


@dataclass
class EventView:
    index: int          # position in the trace, from 0
    id: str
    turn: int
    kind: str
    title: str          # "tool-call run_tests", "tool-result run_tests: error", "user", ...
    body: str           # text, arguments or result (redacted as read; cut at Limits.max_text)
    in_slice: bool = False
    focus: bool = False


@dataclass
class Gap:
    """Events of a window that are not shown."""

    count: int
    first_turn: int
    last_turn: int


@dataclass
class WindowView:
    from_turn: int
    after_turn: int | None  # None: the events after the last checkpoint
    implicit: bool = False
    events: int = 0
    items: list[EventView | Gap] = field(default_factory=list)

    @property
    def shown(self) -> int:
        return sum(isinstance(i, EventView) for i in self.items)

    @property
    def elided(self) -> int:
        return sum(i.count for i in self.items if isinstance(i, Gap))


@dataclass
class Timeline:
    trace: str | None                 # the trace as the report names it
    path: Path | None = None          # where it was found
    windows: list[WindowView] = field(default_factory=list)
    total: int = 0
    notes: list[str] = field(default_factory=list)
    redactions: dict[str, int] = field(default_factory=dict)

    @property
    def shown(self) -> int:
        return sum(w.shown for w in self.windows)

    @property
    def elided(self) -> int:
        return sum(w.elided for w in self.windows)


# ---------------------------------------------------------------- what an event shows


def _json(value: Any) -> str:
    """One line when it is short, else indented."""
    flat = json.dumps(value, ensure_ascii=False, default=str)
    return flat if len(flat) <= 100 else json.dumps(value, ensure_ascii=False, indent=2, default=str)


def event_view(index: int, event: Any, max_text: int) -> EventView:
    kind = event.kind
    title, body = kind, ""
    if kind in ("user", "assistant"):
        body = event.text
    elif kind == "tool-call":
        title, body = f"tool-call {event.tool}", _json(event.args)
    elif kind == "tool-result":
        title = f"tool-result {event.tool or event.call_id}: {event.status}"
        body = event.result if isinstance(event.result, str) else _json(event.result)
    elif kind == "state-write":
        title, body = f"state-write {event.key}", event.value if isinstance(event.value, str) else _json(event.value)
    elif kind == "summary":
        title, body = f"summary ({event.reason}{' to ' + event.to if event.to else ''})", event.text
    elif kind == "snapshot":
        title = f"snapshot {event.phase or ''} {event.ref}".replace("  ", " ")
        body = _json(event.state) if event.state else (event.digest or "")
    if len(body) > max_text:
        body = f"{body[:max_text]}… ({len(body) - max_text} more characters not shown)"
    return EventView(index, event.id, event.turn, kind, title, body)


# ---------------------------------------------------------------- choosing the events


class _Selector:
    """Decides, event by event, what a window shows; holds at most `context` undecided events."""

    def __init__(self, bounds: list[tuple[int, int | None, bool]], *, whole: bool, focus: set[str],
                 pins: set[str], slice_ids: Sequence[str], limits: Limits) -> None:
        self.bounds, self.whole, self.limits = bounds, whole, limits
        self.focus, self.pins = focus, pins
        self.slice_set = membership(slice_ids)  # (a long run's slice, numbered in a row, is never made whole)
        ends = limits.slice_ends
        self.slice_edges = set(slice_ids[:ends]) | set(slice_ids[-ends:] if ends else [])
        self.windows: list[WindowView] = []
        self.window: WindowView | None = None
        self.next_bound = 0
        self.before: deque[tuple[int, Any]] = deque()
        self.after_left = 0
        self.gap: Gap | None = None
        self.shown = 0
        self.focus_windows: set[int] = set()  # indices of windows that hold a focus event (known after a pass)

    def _open(self, turn: int) -> None:
        while self.window is None or (self.window.after_turn is not None and turn > self.window.after_turn):
            if self.window is not None:
                self._close()
            if self.next_bound < len(self.bounds):
                start, end, implicit = self.bounds[self.next_bound]
                self.next_bound += 1
                self.window = WindowView(start, end, implicit)
            else:
                start = 0 if self.window is None else (self.window.after_turn or 0) + 1
                self.window = WindowView(start, None, True)
            self.windows.append(self.window)

    def _current(self) -> WindowView:
        """The open window (`feed` opens one before anything is shown or closed)."""
        assert self.window is not None
        return self.window

    def _skip(self, index: int, event: Any) -> None:
        if self.gap is None:
            self.gap = Gap(0, event.turn, event.turn)
        self.gap.count += 1
        self.gap.last_turn = event.turn

    def _show(self, index: int, event: Any, focus: bool = False) -> None:
        if self.gap is not None:
            self._current().items.append(self.gap)
            self.gap = None
        view = event_view(index, event, self.limits.max_text)
        view.in_slice, view.focus = event.id in self.slice_set, focus
        self._current().items.append(view)
        self.shown += 1

    def _flush_before(self, keep: bool) -> None:
        while self.before:
            index, event = self.before.popleft()
            (self._show if keep and self.shown < self.limits.max_events else self._skip)(index, event)

    def feed(self, index: int, event: Any) -> None:
        self._open(event.turn)
        window = self._current()
        window.events += 1
        eid = event.id
        focus = eid in self.focus
        if focus or eid in self.pins:
            self._flush_before(keep=focus)
            self._show(index, event, focus)
            self.after_left = self.limits.context if focus else self.after_left
            return
        room = self.shown < self.limits.max_events
        wanted = self.whole or eid in self.slice_edges or self.after_left > 0 or (
            window.events <= self.limits.window_head and len(self.windows) - 1 in self.focus_windows)
        if self.after_left > 0:
            self.after_left -= 1
        if wanted and room:
            self._flush_before(keep=False)
            self._show(index, event)
            return
        if not room or not self.limits.context:
            self._skip(index, event)
            return
        if len(self.before) >= self.limits.context:
            self._skip(*self.before.popleft())
        self.before.append((index, event))

    def _close(self) -> None:
        self._flush_before(keep=False)
        if self.gap is not None:
            self._current().items.append(self.gap)
            self.gap = None
        self.after_left = 0

    def finish(self) -> list[WindowView]:
        if self.window is not None:
            self._close()
        while self.next_bound < len(self.bounds):  # checkpoints after the trace's last event
            start, end, implicit = self.bounds[self.next_bound]
            self.next_bound += 1
            self.windows.append(WindowView(start, end, implicit))
        return self.windows


def read_timeline(path: Path, *, scenario: str | None = None, bounds: list[tuple[int, int | None, bool]],
                  focus: Iterable[str] = (), pins: Iterable[str] = (), slice_ids: Sequence[str] = (),
                  total: int | None = None, focus_windows: Iterable[int] = (),
                  limits: Limits = Limits(), hidden: Sequence[str] = ()) -> Timeline:
    """Read the trace at `path` into its windows (`bounds`: from turn, after turn, implicit; in turn
    order). `total`: the number of events the report counted (a trace of at most `limits.whole`
    events is shown whole); `focus_windows`: the windows whose first events are shown too;
    `hidden`: the scenario's no-leak values, redacted as the trace is read."""
    timeline = Timeline(trace=str(path), path=path)
    whole = total is not None and total <= limits.whole
    selector = _Selector(bounds, whole=whole, focus=set(focus), pins=set(pins), slice_ids=slice_ids,
                         limits=limits)
    selector.focus_windows = set(focus_windows)
    try:
        from judge.trace import TraceReader

        reader = TraceReader(path, expected_scenario=scenario, hidden=hidden)
        for index, event in enumerate(reader):
            selector.feed(index, event)
            timeline.total = index + 1
        timeline.redactions = reader.redactions
    except JudgeInputError as exc:
        timeline.notes.append(f"cannot read the trace past event {timeline.total}: {exc}")
    timeline.windows = selector.finish()
    return timeline


# ---------------------------------------------------------------- a graded run's timeline


def run_bounds(run: Any) -> list[tuple[int, int | None, bool]]:
    """(from turn, after turn, implicit) of each checkpoint of a run report; none for a suite's run."""
    bounds, previous = [], -1
    for cp in getattr(run, "checkpoints", None) or []:
        bounds.append((previous + 1, cp.after_turn, cp.implicit))
        previous = cp.after_turn
    return bounds


def run_focus(run: Any) -> tuple[set[str], set[str], set[int]]:
    """(focus, pins, windows with a focus) of a run report or a suite's run result."""
    focus: set[str] = set()
    pins: set[str] = set()
    windows: set[int] = set()
    for n, cp in enumerate(getattr(run, "checkpoints", None) or []):
        for f in cp.findings:
            if f.evidence_event:
                pins.add(f.evidence_event)
                if f.verdict in INTERESTING or f.disagreement or f.needs_review:
                    focus.add(f.evidence_event)
                    windows.add(n)
    for marker in (run.first_divergence, run.veto):
        if marker is not None and marker.event:
            focus.add(marker.event)
            pins.add(marker.event)
    return focus, pins, windows


def find_trace(trace: str | None, places: Sequence[Path] = ()) -> Path | None:
    """The trace file a report names: as given (absolute, or from the working directory), else
    from each of `places` (a report's folder, its parent, ...)."""
    if not trace:
        return None
    given = Path(trace)
    candidates = [given] if given.is_absolute() else [Path.cwd() / given, *(Path(p) / given for p in places)]
    return next((p.resolve() for p in candidates if p.is_file()), None)


def run_timeline(run: Any, *, scenario: str | None = None, places: Sequence[Path] = (),
                 limits: Limits = Limits(), check_sha256: bool = False, scenario_file: str | None = None) -> Timeline:
    """The timeline of a graded run (a RunReport, or a suite's RunResult: one window, no findings).
    `check_sha256`: say so when the trace is not the file that was graded (the report's sha256)."""
    path = find_trace(run.trace, places)
    if path is None:
        note = f"trace file {run.trace!r} not found: showing what the report holds" if run.trace else \
            "the report names no trace file"
        return Timeline(trace=run.trace, notes=[note])
    from judge.review.hidden import run_hidden

    hidden, withheld = run_hidden(run, places, (lambda _: find_trace(scenario_file, places)) if scenario_file else None,
                                  scenario_id=scenario or getattr(run, "scenario", None))
    if withheld is not None:
        return Timeline(trace=run.trace, path=path, notes=[withheld])
    focus, pins, windows = run_focus(run)
    timeline = read_timeline(path, scenario=scenario or getattr(run, "scenario", None),
                             bounds=run_bounds(run), focus=focus, pins=pins, slice_ids=run.slice or [],
                             total=run.events or None, focus_windows=windows, limits=limits, hidden=hidden)
    timeline.trace = run.trace
    graded = _graded_sha256(run)
    if check_sha256 and graded:
        from judge.grade import sha256_file

        if sha256_file(path) != graded:
            timeline.notes.insert(0, f"{run.trace} changed since it was graded (its sha256 differs from the "
                                     "report's): the events shown may not be the ones the findings name")
    return timeline


def _graded_sha256(run: Any) -> str | None:
    direct = getattr(run, "sha256", None)
    if direct:
        return direct
    inputs = ((getattr(run, "provenance", None) or {}).get("inputs") or {})
    traces = inputs.get("traces") or []
    return traces[0].get("sha256") if traces and isinstance(traces[0], dict) else None
