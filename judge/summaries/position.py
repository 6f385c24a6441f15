"""The ledger at a summary's event, not at the end of its turn.

Deltas are reviewed per turn; a summary is one event inside its turn. A delta of the summary's own
turn counts for the summary only when the event that carries it comes before the summary in that
turn (a refund completed by a tool result after the summary is not yet done when the summary is
written, so the summary cannot have lost it). The event that carries a delta, by its source:

- `user`: a user message of the turn before the summary;
- `tool`: a tool result of the turn before it, of a tool one of the key's rules names when any
  names one, and with status ok for a `complete`;
- `agent`: an assistant message or a state-write of the turn before it.

`TurnSoFar` is what came before the summary in its turn (kept while events stream by, so grading
stays one pass); `ledger_at_event` replays the scenario's deltas up to there. A summary audited
from text alone (`--summary FILE --after-turn N`) has no position: the ledger after its turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from judge.ledger import ExpectedLedger
from judge.ledger.reducer import delta_problem, history_from_entry
from judge.model import Delta


@dataclass(frozen=True)
class TurnSoFar:
    """The events of a summary's turn that came before it: user and assistant messages, tool
    results as (tool, status), the keys of state-writes."""

    turn: int
    user: bool = False
    assistant: bool = False
    results: tuple[tuple[str | None, str], ...] = ()
    writes: frozenset[str] = frozenset()


@dataclass
class TurnTracker:
    """Follows a stream of events (models or the reader's records) and says, at any event, what
    came before it in its turn."""

    turn: int = -1
    user: bool = False
    assistant: bool = False
    results: list[tuple[str | None, str]] = field(default_factory=list)
    writes: set[str] = field(default_factory=set)

    def snapshot(self) -> TurnSoFar:
        return TurnSoFar(self.turn, self.user, self.assistant, tuple(self.results), frozenset(self.writes))

    def observe(self, event: Any) -> None:
        """Take in one event (a summary only starts its turn: it carries no delta)."""
        if event.turn != self.turn:
            self.turn, self.user, self.assistant = event.turn, False, False
            self.results, self.writes = [], set()
        kind = event.kind
        if kind == "user":
            self.user = True
        elif kind == "assistant":
            self.assistant = True
        elif kind == "tool-result":
            self.results.append((event.tool, event.status))
        elif kind == "state-write":
            self.writes.add(event.key)


def positions(events: Iterable[Any]) -> dict[str, TurnSoFar]:
    """Summary event id -> what came before it in its turn."""
    tracker, out = TurnTracker(), {}
    for event in events:
        tracker.observe(event)  # a summary itself carries no delta: it only starts its turn
        if event.kind == "summary":
            out[event.id] = tracker.snapshot()
    return out


def _rule_tools(ledger: ExpectedLedger, key: str) -> list[str]:
    return [tool for rule in ledger.scenario.rules if rule.key == key
            for tool in [getattr(rule, "tool", None)] if isinstance(tool, str) and tool]


def carried(delta: Delta, so_far: TurnSoFar, ledger: ExpectedLedger) -> bool:
    """Whether the event that carries `delta` (see the module docstring) came before the summary."""
    if delta.source == "user":
        return so_far.user
    if delta.source == "agent":
        return so_far.assistant or bool(so_far.writes)
    tools = _rule_tools(ledger, delta.key)
    return any((not tools or (tool is not None and any(fnmatchcase(tool, t) for t in tools)))
               and (delta.op != "complete" or status == "ok") for tool, status in so_far.results)


def ledger_at_event(ledger: ExpectedLedger, so_far: TurnSoFar) -> ExpectedLedger:
    """The expected ledger at a summary's event: every delta of earlier turns, those of its turn
    whose carrying event came before it, and once one of a key's deltas is left out, its later
    ones of the turn too (they build on it). The full ledger when nothing of the turn is left out."""
    turn = so_far.turn
    own = [d for d in ledger.scenario.deltas if d.turn == turn]
    dropped: set[str] = set()
    for d in own:
        if d.key in dropped or not carried(d, so_far, ledger):
            dropped.add(d.key)
    if not dropped:
        return ledger
    keys = {e.key: history_from_entry(e) for e in ledger.scenario.ledger}
    for d in ledger.scenario.deltas:
        if d.turn < turn or (d.turn == turn and d.key not in dropped):
            delta_problem(d, keys)  # the scenario passed lint: a problem cannot arise here
    for key, h in keys.items():
        h.ends_at = ledger.keys[key].ends_at if key in ledger.keys else None
    return ExpectedLedger(ledger.scenario, keys)
