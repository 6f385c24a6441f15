"""Retry chains: consecutive calls of one tool with the same arguments, with no changed plan in
between, and what ended them; the run's recovery coherence is read off them.

A chain starts at a tool call. An identical call (the same tool, equal arguments) continues it
while none of its calls has returned ok. Anything else ends it:
- an ok result of one of its calls: the retry made progress (`ok`);
- another call (another tool, or the same tool with other arguments) or an assistant message with
  text: the plan changed (`plan`);
- a user message: new input, perhaps the user asking for the retry (`user`).

The `no-progress` rule kind (judge.checks.kinds.no_progress) counts the failed results of the chains
of its tool; `RunProgress` follows the chains of every tool for the component metric (the seeds'
recovery coherence: "error changes plan without changing goal"; its false positive: "retry loop
appears persistent but makes no progress"):

    recovery_coherence = coherent failed results / counted failed results

A failed result (status error or timeout) counts with the chain it belongs to. A chain is a *retry
loop* when a rule of the `recovery` family (no-progress) found a violation on one of its results,
or, for a tool no such rule governs, when DEFAULT_LOOP of its calls failed. A loop's failed results
count against. Any other chain with failures that ended in `ok`, or in `plan` at an event that broke
no rule (a false claim of the work, a forbidden work-around, would change the goal), counts its
failed results as coherent; ended in `plan` at an event that broke a rule, against. A chain that
ended at a user message or at the end of the trace, and is no loop, is not counted: the agent did
not get to answer the failure. None when nothing was counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias, cast

from judge.checks.matching import tool_is
from judge.model.event_view import AssistantLike, ToolCallLike, ToolResultLike, UserLike

DEFAULT_LOOP = 3
"""Identical failing calls that make a retry loop of a tool no `no-progress` rule governs."""

End = Literal["ok", "plan", "user"]


ProgressEvent: TypeAlias = ToolCallLike | ToolResultLike | AssistantLike | UserLike
"""What moves a retry chain: calls, results and messages (judge.checks.rules feeds RunProgress these)."""


@dataclass(slots=True)
class Chain:
    """Identical calls of one tool whose results all failed so far (or have not come yet). Never
    changed once made (`step` makes a new one): a rule's check may work out a step its `remember`
    then keeps."""

    tool: str
    args: Any
    first_call: str  # event ids of its first and latest call
    last_call: str
    calls: int = 1
    failures: int = 0
    pending: tuple[tuple[str, str], ...] = ()  # (call id, call event id) of calls waiting for a result


@dataclass(slots=True)
class Step:
    """What one event did to the chain: the chain after it, the chain it ended (with at least one
    failure) and how, and, for a failed result of the chain, the chain counting it and its call."""

    chain: Chain | None
    ended: Chain | None = None
    how: End | None = None
    failed: Chain | None = None
    failed_call: str | None = None


def step(chain: Chain | None, event: ProgressEvent, follows: Callable[[str], bool]) -> Step:
    """The chain after `event`; `follows(tool)`: whether a call of that tool starts a chain."""
    # `kind` is read once (compiled, on every event), so each branch casts the event to its kind's
    # view: mypy narrows on `event.kind == ...`, not on a name bound to it. A cast costs nothing.
    kind = event.kind
    if kind == "tool-call":
        made = cast(ToolCallLike, event)
        if chain is not None and chain.tool == made.tool and chain.args == made.args:
            return Step(Chain(chain.tool, chain.args, chain.first_call, made.id, chain.calls + 1,
                              chain.failures, chain.pending + ((made.call_id, made.id),)))
        started = Chain(made.tool, made.args, made.id, made.id, pending=((made.call_id, made.id),)) \
            if follows(made.tool) else None
        return Step(started, *_ended(chain, "plan"))
    if kind == "tool-result":
        if chain is None:
            return Step(None)
        result = cast(ToolResultLike, event)
        call_id = result.call_id
        call = next((c for c in chain.pending if c[0] == call_id), None)
        if call is None:
            return Step(chain)
        rest = tuple(c for c in chain.pending if c[0] != call_id)
        failures = chain.failures + (result.status != "ok")
        counted = Chain(chain.tool, chain.args, chain.first_call, chain.last_call, chain.calls, failures, rest)
        if result.status == "ok":
            return Step(None, *_ended(counted, "ok"))
        return Step(counted, failed=counted, failed_call=call[1])
    if kind == "assistant" and (cast(AssistantLike, event).text or "").strip():
        return Step(None, *_ended(chain, "plan"))
    if kind == "user":
        return Step(None, *_ended(chain, "user"))
    return Step(chain)


def _ended(chain: Chain | None, how: End) -> tuple[Chain | None, End | None]:
    return (chain, how) if chain is not None and chain.failures else (None, None)


@dataclass
class Coherence:
    """The run's failed tool results as recovery coherence counts them."""

    failed: int = 0  # failed results counted
    coherent: int = 0
    loops: int = 0

    @property
    def share(self) -> float | None:
        return round(self.coherent / self.failed, 4) if self.failed else None


@dataclass
class RunProgress:
    """Follows the chains of every tool over the run for recovery coherence (module docstring).
    `loop_rules`: (rule id, tool glob or None) of the rules of the `recovery` family."""

    loop_rules: list[tuple[str, str | None]] = field(default_factory=list)
    chain: Chain | None = None
    looped: set[str] = field(default_factory=set)  # first calls of the open chain, if a recovery rule broke on it
    tally: Coherence = field(default_factory=Coherence)

    def __post_init__(self) -> None:
        self._loop_ids = {rid for rid, _ in self.loop_rules}
        self._governed: dict[str, bool] = {}
        # With no chain of failures open: the latest call (tool, args, call id, event id), until its
        # result (a later call replaces it: results of earlier calls in flight are not followed).
        self._call: tuple[str, Any, str, str] | None = None

    def observe(self, event: ProgressEvent, hits: list[Any]) -> None:
        """One event and the rules' hits on it."""
        chain = self.chain
        if chain is None:  # the common case: the latest call, as a tuple, until its result fails
            kind = event.kind  # read once: each branch casts, as in `step`
            if kind == "tool-call":
                made = cast(ToolCallLike, event)
                self._call = (made.tool, made.args, made.call_id, made.id)
                return
            call = self._call
            if call is None:
                return
            if kind != "tool-result":
                if kind == "user" or (kind == "assistant" and (cast(AssistantLike, event).text or "").strip()):
                    self._call = None
                return
            result = cast(ToolResultLike, event)
            if result.call_id != call[2]:
                return
            self._call = None
            if result.status == "ok":
                return
            chain = Chain(call[0], call[1], call[3], call[3], pending=((call[2], call[3]),))
        s = step(chain, event, _any_tool)
        if s.failed is not None and any(h.violated and h.rule in self._loop_ids for h in hits):
            self.looped = {s.failed.first_call}
        if s.ended is not None:
            self._close(s.ended, s.how, broke=any(h.violated for h in hits))
        chain = s.chain
        if chain is not None and not chain.failures and len(chain.pending) == 1:
            self._call, chain = (chain.tool, chain.args, *chain.pending[0]), None
        self.chain = chain

    def coherence(self) -> Coherence:
        """The tally, with the chain still open at the end of the trace (counted only as a loop)."""
        tally = replace(self.tally)
        if self.chain is not None and self.chain.failures and self._is_loop(self.chain):
            tally.failed += self.chain.failures
            tally.loops += 1
        return tally

    def _close(self, chain: Chain, how: End | None, *, broke: bool) -> None:
        tally = self.tally
        if self._is_loop(chain):
            tally.failed += chain.failures
            tally.loops += 1
        elif how == "ok" or how == "plan":
            tally.failed += chain.failures
            tally.coherent += 0 if broke else chain.failures
        self.looped = set()

    def _is_loop(self, chain: Chain) -> bool:
        if chain.first_call in self.looped:
            return True
        governed = self._governed.get(chain.tool)
        if governed is None:
            governed = self._governed[chain.tool] = any(tool is None or tool_is(chain.tool, tool)
                                                        for _, tool in self.loop_rules)
        return not governed and chain.failures >= DEFAULT_LOOP


def _any_tool(tool: str) -> bool:
    return True
