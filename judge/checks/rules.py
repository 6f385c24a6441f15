"""Deterministic rules: each guards one ledger key, while that key is active, and turns events into hits.

A hit is either a violation (with its evidence event) or a compliant exercise of the rule (the agent
did the guarded kind of thing and stayed inside the rule). Each rule kind's check and what it reads
is its spec (judge.checks.spec; the kinds are judge.checks.kinds and plug-ins); `RuleSet` makes each
rule's tracker for the run (judge.checks.tracker) and asks it about the events it reads.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from msgspec import Struct

from judge.checks.matching import Carrier, tool_is
from judge.checks.progress import ProgressEvent, RunProgress
from judge.checks.recent import RecentCalls
from judge.checks.registry import specs
from judge.checks.restated import Restatements
from judge.checks.spec import RuleSpec
from judge.checks.tracker import overrides
from judge.ledger import ExpectedLedger
from judge.model import Rule, RunHeader
from judge.model.event_view import AnyEventLike, EventLike, StateWriteLike, ToolCallLike, ToolResultLike
from judge.trace.ids import CallTable
from judge.trace.toolkit import Toolkit, header_toolkit


class Hit(Struct, frozen=True, gc=False):
    """One rule's answer to one event (a compact, immutable struct: a window holds many)."""

    rule: str
    check: str
    key: str
    event: str
    turn: int
    index: int  # position of the event in the trace
    violated: bool
    detail: str


def rule_ids(rules: Iterable[Rule]) -> list[str]:
    """Stable ids: the rule's own `id`, else `check:key` (numbered when a key has several)."""
    ids: list[str] = []
    for rule in rules:
        base = rule.id or f"{rule.check}:{rule.key}"
        rid, n = base, 2
        while rid in ids:
            rid, n = f"{base}#{n}", n + 1
        ids.append(rid)
    return ids


@dataclass
class RunState:
    """What the run has shown every rule so far (small: per call and per tool)."""

    call_tool: CallTable = field(default_factory=CallTable)  # call id -> tool, two bytes a numbered id
    last_tool_called: str | None = None
    last_status_by_tool: dict[str, str] = field(default_factory=dict)
    recent: RecentCalls = field(default_factory=RecentCalls)  # results and recent calls, for claims


def _session_ended(history: Any, turn: int) -> bool:
    """Whether a key stopped guarding at this turn only because its session ended (not revoked)."""
    ends = history.ends_at
    return ends is not None and turn >= ends and (history.revoked_at is None or history.revoked_at > ends)


Entry = tuple[str, Any, Callable[..., Any]]  # (rule id, rule, its tracker's observe or remember)
_PROGRESS_KINDS = frozenset({"tool-call", "tool-result", "assistant", "user"})  # what moves a retry chain


class RuleSet:
    """Runs every rule of a scenario over a stream of events (the RuleContext of the checks)."""

    def __init__(self, ledger: ExpectedLedger, *, toolkit: Toolkit | None = None) -> None:
        self.ledger = ledger
        self.given_toolkit = toolkit
        self.toolkit = toolkit  # --tools, else the run header's `tools` (read_header); None: unknown
        self.header_session: tuple[str, int, int | None] | None = None  # (id, first turn, next session's)
        self.outside_session: list[Any] = []  # [events outside the header's session, first such event id]
        self.rules = list(ledger.scenario.rules)
        self.ids = rule_ids(self.rules)
        self.state = RunState()
        registered = specs()
        self.specs: list[RuleSpec[Any]] = [registered[rule.check] for rule in self.rules]
        # Each rule's tracker for this run (its memory of the run: judge.checks.tracker), by position;
        # typed Any so the compiled loop calls its bound methods without a check per event.
        self.trackers: list[Any] = [spec.make_tracker(rule) for spec, rule in zip(self.specs, self.rules, strict=False)]
        self._index = {rid: i for i, rid in enumerate(self.ids)}
        self.by_key: dict[str, list[tuple[str, Rule]]] = {}
        self.by_kind: dict[str, list[tuple[str, Rule]]] = {}
        self._remembering: dict[str, list[Entry]] = {}
        self._raw: list[Callable[[dict[str, Any]], bool]] = []  # the trackers' raw scans
        for rid, rule, spec, tracker in zip(self.ids, self.rules, self.specs, self.trackers, strict=False):
            self.by_key.setdefault(rule.key, []).append((rid, rule))
            for kind in spec.reads & frozenset(tracker.reads(spec.reads)):
                self.by_kind.setdefault(kind, []).append((rid, rule))
            for kind in tracker.remembers:
                self._remembering.setdefault(kind, []).append((rid, rule, tracker.remember))
            if overrides(tracker, "raw_scan"):
                self._raw.append(tracker.raw_scan)
        # Which rules guard at a turn, and a key's superseded versions and current value at a turn,
        # depend on the turn only through comparisons with the turns the fixture names (source
        # turns of entries, turns of deltas): between two such turns (t and t + 1 being the places
        # where `<`, `<=` or `==` can flip) every answer stays the same, so it is worked out once per
        # segment instead of once per event.
        named = {e.source_turn for e in ledger.scenario.ledger} | {d.turn for d in ledger.scenario.deltas} \
            | {s.first_turn for s in ledger.scenario.sessions}
        self._bounds = sorted({0, *named, *(t + 1 for t in named)})
        self._turn: int | None = None
        self._segment = (0, -1)  # [lo, hi) of the turns the cached answers hold for
        self._active: dict[str, list[Entry]] = {}
        self._for_tool: dict[str, list[Entry]] = {}
        self._for_key: dict[str, list[Entry]] = {}
        self._superseded: dict[str, list[Any]] = {}
        self._current: dict[str, Any] = {}
        self._carriers: dict[int, tuple[Any, Carrier]] = {}
        # Per kind: the rules whose key is not stated yet, or whose session ended, each with where
        # it counts the events it would have checked (`unchecked`, `after_session`).
        self._skipping: dict[str, list[tuple[str, Rule, dict[str, list[Any]]]]] = {}
        self.unchecked: dict[str, list[Any]] = {}  # rule id -> [events it skipped, first such event id]
        self.after_session: dict[str, list[Any]] = {}  # rule id -> [events after its key's session, first id]
        self._own_calls = True
        # Recovery: the run's retry chains (recovery coherence) and the user messages that restate a
        # violated key (a recovered key's report), fed every event with its hits.
        self.progress = RunProgress([(rid, getattr(rule, "tool", None)) for rid, rule, spec
                                     in zip(self.ids, self.rules, self.specs, strict=False)
                                     if spec.family == "recovery"])
        self.restatements = Restatements(ledger, set(self.by_key))

    def tracker_of(self, rule_id: str) -> Any:
        """One rule's tracker for this run (judge.checks.tracker.Tracker)."""
        return self.trackers[self._index[rule_id]]

    def state_of(self, rule_id: str) -> Any:
        """One rule's memory of the run: its tracker's `state` when it keeps its memory in one (the
        built-in kinds that remember, and a CheckTracker: what `new_state` made, None without one),
        else the tracker itself."""
        tracker = self.trackers[self._index[rule_id]]
        return getattr(tracker, "state", tracker)

    def spec_of(self, rule_id: str) -> RuleSpec[Any]:
        """The spec of one rule's kind."""
        return self.specs[self._index[rule_id]]

    def raw_hook(self) -> Callable[[dict[str, Any]], None] | None:
        """A hook for the trace reader that shows each record, before redaction, to the rules that
        read raw records (a leaked e-mail is redacted before any rule sees the event); None: none do."""
        if not self._raw:
            return None
        raw = self._raw

        def hook(record: dict[str, Any]) -> None:
            for scan in raw:
                scan(record)
        return hook

    def read_header(self, header: RunHeader) -> None:
        """What the rules take from the run header: its `tools` (when no --tools toolkit was given)
        and the session it names (events outside that session's turns are a warning)."""
        if self.given_toolkit is None:
            self.toolkit = header_toolkit(header)
        sessions = sorted(self.ledger.scenario.sessions, key=lambda s: s.first_turn)
        for i, session in enumerate(sessions):
            if session.id == header.session:
                following = sessions[i + 1].first_turn if i + 1 < len(sessions) else None
                self.header_session = (session.id, session.first_turn, following)

    def share_calls(self, calls: CallTable) -> None:
        """Read call id -> tool from the trace reader's table, which records every call before the
        rules see it, instead of keeping a second one."""
        self.state.call_tool = calls
        self._own_calls = False

    def _at_turn(self, turn: int) -> None:
        self._turn = turn
        lo, hi = self._segment
        if lo <= turn < hi:
            return
        i = bisect_right(self._bounds, turn)
        bounds = self._bounds
        self._segment = (bounds[i - 1] if i else -(1 << 62), bounds[i] if i < len(bounds) else 1 << 62)
        self._superseded = {}
        self._current = {}
        self._for_tool = {}
        self._for_key = {}
        history = self.ledger.history
        entry = self._entry
        self._active = {kind: [entry(rid, rule) for rid, rule in rules if history(rule.key).is_active(turn)]
                        for kind, rules in self.by_kind.items()}
        self._skipping = {}
        for kind in ("tool-call", "state-write"):
            skipping = [(rid, rule, self.unchecked if turn < history(rule.key).introduced else self.after_session)
                        for rid, rule in self.by_kind.get(kind, ()) if self.tracker_of(rid).warns_early
                        and (turn < history(rule.key).introduced or _session_ended(history(rule.key), turn))]
            if skipping:
                self._skipping[kind] = skipping

    def _entry(self, rid: str, rule: Any) -> Entry:
        return rid, rule, self.trackers[self._index[rid]].observe

    def superseded_at(self, key: str, turn: int) -> list[Any]:
        """`ledger.history(key).superseded_at(turn)`, worked out once per segment of turns."""
        if turn != self._turn:
            self._at_turn(turn)
        old = self._superseded.get(key)
        if old is None:
            old = self._superseded[key] = self.ledger.history(key).superseded_at(turn)
        return old

    def value_at(self, key: str, turn: int) -> Any:
        """`ledger.history(key).value_at(turn)`, worked out once per segment of turns."""
        if turn != self._turn:
            self._at_turn(turn)
        if key not in self._current:
            self._current[key] = self.ledger.history(key).value_at(turn)
        return self._current[key]

    def carries(self, actual: Any, version: Any) -> bool:
        """carries_value(actual, version.value), with the version's value prepared once."""
        entry = self._carriers.get(id(version))
        if entry is None or entry[0] is not version:
            entry = self._carriers[id(version)] = (version, Carrier(version.value))
        return entry[1](actual)

    def _applicable(self, event: AnyEventLike) -> list[Entry]:
        """The active rules that can answer this event (their spec `reads` its kind): for a
        tool-call only those whose `tool` glob matches (when their spec filters `by_tool`), for a
        state-write only those of the written key (`by_key`); remembered per tool name and per
        written key until the segment of turns changes."""
        # `kind` is read once (the hot loop), so each branch casts the event to its kind's view: mypy
        # narrows on `event.kind == ...`, not on a name bound to it. A cast costs nothing compiled.
        kind = event.kind
        if kind == "tool-call":
            tool = cast(ToolCallLike, event).tool
            rules = self._for_tool.get(tool)
            if rules is None:
                rules = [r for r in self._active.get(kind, ())
                         if not self.spec_of(r[0]).by_tool or getattr(r[1], "tool", None) is None
                         or tool_is(tool, r[1].tool)]
                if len(self._for_tool) < 4096:
                    self._for_tool[tool] = rules
            return rules
        if kind == "state-write":
            key = cast(StateWriteLike, event).key
            rules = self._for_key.get(key)
            if rules is None:
                rules = [r for r in self._active.get(kind, ()) if not self.spec_of(r[0]).by_key or r[1].key == key]
                if len(self._for_key) < 4096:
                    self._for_key[key] = rules
            return rules
        return self._active.get(kind, [])

    def observe(self, event: AnyEventLike, index: int) -> list[Hit]:
        """The hits of every active rule on one event (then the rules' memory of it is updated)."""
        hits: list[Hit] = []
        turn = event.turn
        if turn != self._turn:
            self._at_turn(turn)
        rules = self._applicable(event)
        if rules:
            eid = event.id
            for rid, rule, observe in rules:
                result = observe(event, self)
                if result is not None:
                    hits.append(Hit(rid, rule.check, rule.key, eid, turn, index, result[0], result[1]))
        kind = event.kind
        if kind in _PROGRESS_KINDS:
            self.progress.observe(cast(ProgressEvent, event), hits)
        if hits or kind == "user":
            self.restatements.observe(event, index, hits)
        skipping = self._skipping.get(kind)
        if skipping:  # only tool-calls and state-writes skip (_at_turn)
            self._note(cast("ToolCallLike | StateWriteLike", event), skipping)
        if self.header_session is not None:
            self._note_session(event)
        if kind == "tool-call" or kind == "tool-result":
            self._remember(cast("ToolCallLike | ToolResultLike", event), kind)
        remembering = self._remembering.get(kind)
        if remembering:
            for _, _, remember in remembering:
                remember(event, self)
        return hits

    @staticmethod
    def _note(event: ToolCallLike | StateWriteLike, rules: list[tuple[str, Rule, dict[str, list[Any]]]]) -> None:
        """Count the events a rule would have checked had its key been active (stated already, or
        its session not ended)."""
        for rid, rule, into in rules:
            tool = getattr(rule, "tool", None)
            if (event.kind == "tool-call" and tool is not None and tool_is(event.tool, tool)) or \
                    (event.kind == "state-write" and event.key == rule.key):
                seen = into.setdefault(rid, [0, event.id])
                seen[0] += 1

    def _note_session(self, event: EventLike) -> None:
        _, first, following = self.header_session  # type: ignore[misc]
        if event.turn < first or (following is not None and event.turn >= following):
            seen = self.outside_session or [0, event.id, event.turn]
            seen[0] += 1
            self.outside_session = seen

    def unchecked_warnings(self) -> list[str]:
        """One line per rule that skipped events because they came before its key's source turn or
        after its key's session ended, and one when events fall outside the session the run header
        names (what each rule could not judge itself is `rule_notes`)."""
        by_id = dict(zip(self.ids, self.rules, strict=False))
        history = self.ledger.history
        lines = [f"rule {rid} guards {by_id[rid].key!r} from turn {history(by_id[rid].key).introduced}: "
                 f"{count} earlier event(s) it applies to were not checked (first {first})"
                 for rid, (count, first) in self.unchecked.items()]
        lines += [f"rule {rid} guards {by_id[rid].key!r} only until turn {history(by_id[rid].key).ends_at} "
                  f"(`session` persistence: the next session starts there): {count} later event(s) it applies to "
                  f"were not checked (first {first}); `persistence: task` guards every session"
                  for rid, (count, first) in self.after_session.items()]
        if self.outside_session and self.header_session is not None:
            count, first, turn = self.outside_session
            sid, start, following = self.header_session
            span = f"turns {start}-{following - 1}" if following is not None else f"turns from {start}"
            lines.append(f"the run header names session {sid!r} ({span}), but {count} event(s) fall outside it "
                         f"(first {first}, turn {turn}): turns count on across sessions, and the rules guard "
                         "by the turn each event carries")
        return lines

    def rule_notes(self) -> list[str]:
        """The run's warnings of each rule's own notes (its tracker's `notes`)."""
        return [f"rule {rid}: {line}" for rid, tracker in zip(self.ids, self.trackers, strict=False)
                for line in tracker.notes()]

    def _remember(self, event: ToolCallLike | ToolResultLike, kind: str) -> None:
        s = self.state
        if kind == "tool-call":  # `kind` is event.kind, read once: cast as in _applicable
            call = cast(ToolCallLike, event)
            tool = call.tool
            if self._own_calls:
                s.call_tool[call.call_id] = tool
            s.last_tool_called = tool
            s.last_status_by_tool.pop(tool, None)  # a new call: its own result is now pending
            s.recent.call(call.call_id, tool, call.args)
        else:
            result = cast(ToolResultLike, event)
            tool = s.call_tool.get(result.call_id, result.tool or "")
            s.last_status_by_tool[tool] = result.status
            s.recent.result(result.call_id, result.status, result.id)
