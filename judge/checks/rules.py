"""Deterministic rules: each guards one ledger key, while that key is active, and turns events into hits.

A hit is either a violation (with its evidence event) or a compliant exercise of the rule (the agent
did the guarded kind of thing and stayed inside the rule). Semantics are DESIGN.md's "Rule semantics";
the checks themselves are in judge.checks.checkers, .authority and .leaks.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Iterable

from msgspec import Struct

from judge.checks import authority, checkers, leaks
from judge.checks.matching import Carrier, tool_is
from judge.ledger import ExpectedLedger
from judge.model import Event, Rule
from judge.trace.ids import CallTable

PROHIBITIONS = ("forbidden-call", "scope", "superseded-value", "not-repeated", "authorised", "no-leak")


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


class OkCalls:
    """The ok calls of the tools one not-repeated pattern names, as that rule asks about them: the
    latest turn of any, and per idempotency argument the latest turn of each value it had."""

    __slots__ = ("last_turn", "by_value", "unhashable")

    def __init__(self, args: Iterable[str]) -> None:
        self.last_turn = -1
        self.by_value: dict[str, dict[Any, int]] = {arg: {} for arg in args}
        self.unhashable: list[tuple[int, str, Any]] = []

    def add(self, turn: int, args: dict) -> None:
        self.last_turn = max(self.last_turn, turn)
        for arg, seen in self.by_value.items():
            value = args.get(arg)
            if value is None:
                continue
            try:
                seen[value] = max(turn, seen.get(value, -1))
            except TypeError:  # a list or an object: compared one by one
                self.unhashable.append((turn, arg, value))

    def has(self, since: int, arg: str, value: Any) -> bool:
        """Did a call after turn `since` carry `value` as `arg` (`==`, as the rule compares)?"""
        try:
            if self.by_value.get(arg, {}).get(value, -1) > since:
                return True
        except TypeError:
            pass
        return any(t > since and a == arg and v == value for t, a, v in self.unhashable)


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
    """What the rules need to remember about the run so far (small: per tool and per key)."""

    call_tool: CallTable = field(default_factory=CallTable)  # call id -> tool, two bytes a numbered id
    call_args: dict[str, dict] = field(default_factory=dict)
    last_tool_called: str | None = None
    last_status_by_tool: dict[str, str] = field(default_factory=dict)
    ok_calls: dict[str, OkCalls] = field(default_factory=dict)  # per not-repeated tool pattern


class RuleSet:
    """Runs every rule of a scenario over a stream of events."""

    def __init__(self, ledger: ExpectedLedger) -> None:
        self.ledger = ledger
        self.rules = list(ledger.scenario.rules)
        self.ids = rule_ids(self.rules)
        self.state = RunState()
        self.scratch: dict = {}  # per-rule memory of the rules in judge.checks.authority and .leaks
        self.leak_rules = [rule for rule in self.rules if rule.check == "no-leak"]
        self.by_key: dict[str, list[tuple[str, Rule]]] = {}
        self.by_kind: dict[str, list[tuple[str, Rule]]] = {kind: [] for kind in _KINDS_SEEN}
        for rid, rule in zip(self.ids, self.rules):
            self.by_key.setdefault(rule.key, []).append((rid, rule))
            for kind, checks in _KINDS_SEEN.items():
                if rule.check in checks:
                    self.by_kind[kind].append((rid, rule))
        # Only the not-repeated rules read the arguments of ok calls: what they ask is kept per tool
        # pattern as the calls come (judge.checks.rules.OkCalls), never rebuilt per call.
        repeat = [rule for rule in self.rules if rule.check == "not-repeated"]
        self._repeat_tools = list(dict.fromkeys(rule.tool for rule in repeat))
        for pattern in self._repeat_tools:
            self.state.ok_calls[pattern] = OkCalls(dict.fromkeys(
                r.idempotency_arg for r in repeat if r.tool == pattern and r.idempotency_arg is not None))
        self._recorded: dict[str, list[str]] = {}
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
        self._active: dict[str, list[tuple[str, Rule, Any]]] = {}
        self._for_tool: dict[str, list[tuple[str, Rule, Any]]] = {}
        self._for_key: dict[str, list[tuple[str, Rule, Any]]] = {}
        self._superseded: dict[str, list] = {}
        self._current: dict[str, Any] = {}
        self._carriers: dict[int, tuple[Any, Carrier]] = {}
        self._early: dict[str, list[tuple[str, Rule]]] = {}  # per kind: rules whose key is not stated yet
        self.unchecked: dict[str, list] = {}  # rule id -> [events it skipped, first such event id]
        self._own_calls = True

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
        self._active = {kind: [(rid, rule, _CHECKERS[rule.check]) for rid, rule in rules
                               if history(rule.key).is_active(turn)]
                        for kind, rules in self.by_kind.items()}
        self._early = {kind: [(rid, rule) for rid, rule in self.by_kind[kind]
                              if rule.check != "no-leak" and turn < history(rule.key).introduced]
                       for kind in ("tool-call", "state-write")}

    def superseded_at(self, key: str, turn: int) -> list:
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

    def _applicable(self, event: Event) -> list[tuple[str, Rule, Any]]:
        """The active rules that can answer this event (see `_KINDS_SEEN`), remembered per tool
        name and per written key until the segment of turns changes."""
        kind = event.kind
        if kind == "tool-call":
            tool = event.tool
            rules = self._for_tool.get(tool)
            if rules is None:
                rules = [r for r in self._active.get(kind, ())
                         if getattr(r[1], "tool", None) is None or tool_is(tool, r[1].tool)]
                if len(self._for_tool) < 4096:
                    self._for_tool[tool] = rules
            return rules
        if kind == "state-write":
            key = event.key
            rules = self._for_key.get(key)
            if rules is None:
                rules = [r for r in self._active.get(kind, ()) if r[1].key == key]
                if len(self._for_key) < 4096:
                    self._for_key[key] = rules
            return rules
        return self._active.get(kind, [])

    def observe(self, event: Event, index: int) -> list[Hit]:
        hits: list[Hit] = []
        turn = event.turn
        if turn != self._turn:
            self._at_turn(turn)
        rules = self._applicable(event)
        if rules:
            eid = event.id
            for rid, rule, checker in rules:
                result = checker(rule, event, self)
                if result is not None:
                    hits.append(Hit(rid, rule.check, rule.key, eid, turn, index, result[0], result[1]))
        kind = event.kind
        if self._early.get(kind):
            self._note_early(event)
        if kind == "tool-call" or kind == "tool-result":
            self._remember(event, kind)
        return hits

    def _note_early(self, event: Event) -> None:
        """Count the events a rule would have checked had its key been stated already."""
        for rid, rule in self._early[event.kind]:
            tool = getattr(rule, "tool", None)
            if (event.kind == "tool-call" and tool is not None and tool_is(event.tool, tool)) or \
                    (event.kind == "state-write" and event.key == rule.key):
                seen = self.unchecked.setdefault(rid, [0, event.id])
                seen[0] += 1

    def unchecked_warnings(self) -> list[str]:
        """One line per rule that skipped events because they came before its key's source turn."""
        by_id = dict(zip(self.ids, self.rules))
        return [f"rule {rid} guards {by_id[rid].key!r} from turn {self.ledger.history(by_id[rid].key).introduced}: "
                f"{count} earlier event(s) it applies to were not checked (first {first})"
                for rid, (count, first) in self.unchecked.items()]

    def ok_calls_since(self, pattern: str, since: int) -> bool:
        """Did a tool `pattern` names (a not-repeated rule's) return ok after turn `since`?"""
        return self.state.ok_calls[pattern].last_turn > since

    def ok_call_with(self, pattern: str, since: int, arg: str, value: Any) -> bool:
        """Did such a call after turn `since` carry `value` as its argument `arg`?"""
        return self.state.ok_calls[pattern].has(since, arg, value)

    def _remember(self, event: Event, kind: str) -> None:
        s = self.state
        if kind == "tool-call":
            tool = event.tool
            if self._own_calls:
                s.call_tool[event.call_id] = tool
            if self._records(tool):
                s.call_args[event.call_id] = event.args
            s.last_tool_called = tool
            s.last_status_by_tool.pop(tool, None)  # a new call: its own result is now pending
        else:
            tool = s.call_tool.get(event.call_id, event.tool or "")
            s.last_status_by_tool[tool] = event.status
            args = s.call_args.pop(event.call_id, None)
            if event.status == "ok":
                for pattern in self._records(tool):
                    s.ok_calls[pattern].add(event.turn, args or {})

    def _records(self, tool: str) -> list[str]:
        """The not-repeated tool patterns this tool matches (its ok calls' arguments are kept)."""
        known = self._recorded.get(tool)
        if known is None:
            known = [p for p in self._repeat_tools if tool_is(tool, p)]
            if len(self._recorded) < 4096:
                self._recorded[tool] = known
        return known


# Which checks can fire on which event kind (the others are skipped without a call). Every check
# below also answers nothing for a tool-call of a tool other than the one its rule names (when it
# names one), nor for a state-write of a key other than its rule's: `RuleSet._applicable` skips
# those rules without a call too. A new check must keep to that, or change `_applicable`.
_KINDS_SEEN = {
    "tool-call": ("forbidden-call", "scope", "superseded-value", "not-repeated", "authorised", "no-leak",
                  "expected-call"),
    "state-write": ("superseded-value", "claimed-complete"),
    "summary": ("summary-phrases", "no-leak"),
    "user": ("authorised",),
    "assistant": ("no-leak",),
    "tool-result": ("effect", "expected-call"),
    "snapshot": ("effect",),
}

_CHECKERS = {
    "forbidden-call": checkers.forbidden_call,
    "scope": checkers.scope,
    "superseded-value": checkers.superseded_value,
    "not-repeated": checkers.not_repeated,
    "claimed-complete": checkers.claimed_complete,
    "summary-phrases": checkers.summary_phrases,
    "authorised": authority.authorised,
    "effect": authority.effect,
    "no-leak": leaks.no_leak,
    "expected-call": authority.expected_call,
}
