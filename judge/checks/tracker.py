"""The per-rule tracker protocol: one object per (rule, run) that owns the rule's memory of the run
and answers the grader's questions about it.

A rule kind's spec (judge.checks.spec.RuleSpec) says how to make a tracker for one of its rules
(`tracker=`, usually the tracker class itself); the grader (judge.checks.rules.RuleSet) makes one per
rule for each run and asks it:

- `observe(event, ctx) -> Outcome`: the rule's answer to an event it reads (the kinds of its spec's
  `reads`, narrowed by `reads`), while its key is active; for tool-calls only of the tools its rule's
  `tool` glob matches when its spec filters `by_tool`, for state-writes only of its key when `by_key`.
  The one method a tracker must write.
- `remember(event, ctx)`: every event of the kinds in `remembers`, active key or not, after the checks.
- `raw_scan(record) -> bool`: each trace record before redaction (only when a tracker overrides it).
- `at_checkpoint(checkpoint) -> CheckpointVerdict | None`: a verdict from what it remembered, asked at
  each checkpoint of its key before the key's hits are read (an expected call never made).
- `notes() -> Iterable[str]`: lines for the run's warnings, read when the run is graded.

and the questions about the rule itself, which lint and slices ask a tracker made for the asking:
`reads(declared)`, `needs_toolkit()`, `keeps_ok_calls_of()` and `warns_early`.

`Tracker` is the base class with the no-op answer to each: a kind writes only what it needs (its state
is the subclass's attributes). `CheckTracker` adapts a kind written as a check function and a state
(`check_event` and `new_state`, the form a plug-in kind may still use).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, TypeVar

from judge.model.rules import RuleBase

if TYPE_CHECKING:
    from judge.ledger import ExpectedLedger
    from judge.ledger.reducer import Version
    from judge.model import Checkpoint
    from judge.model.event_view import AnyEventLike
    from judge.trace.toolkit import Toolkit

R = TypeVar("R", bound=RuleBase)

Outcome = tuple[bool, str] | None
"""A rule's answer to an event: (violated, detail), or None when the event does not exercise the rule."""


class RuleContext(Protocol):
    """What a tracker may read about the run so far (judge.checks.rules.RuleSet implements it)."""

    ledger: ExpectedLedger
    state: Any  # judge.checks.rules.RunState (typed Any: rules imports this module, and no circle is allowed)
    toolkit: Toolkit | None  # the tools the agent was given (--tools, else the run header's); None: unknown

    def superseded_at(self, key: str, turn: int) -> list[Version]: ...

    def value_at(self, key: str, turn: int) -> Any: ...

    def carries(self, actual: Any, version: Version) -> bool: ...


@dataclass(frozen=True)
class CheckpointVerdict:
    """A verdict a tracker gives at a checkpoint from what it remembered (e.g. an expected call that
    never came, or calls a rule could not judge: `not-exercised` with why): the fields of a
    deterministic finding."""

    verdict: Literal["violated", "upheld", "not-exercised"]
    turn: int
    detail: str
    evidence_event: str | None = None


class Tracker(Generic[R]):
    """One rule's tracker for one run; every answer but `observe` has a no-op default."""

    remembers: ClassVar[frozenset[str]] = frozenset()
    """The event kinds `remember` is called for (none by default)."""
    warns_early: ClassVar[bool] = True
    """Count the events it would have checked before its key's source turn (a warning)."""

    def __init__(self, rule: R) -> None:
        self.rule = rule

    # `event: Any` in these two only: a tracker declares the view of the kinds its spec reads (observe)
    # or remembers (remember), narrower than any event, and an override may narrow a parameter only from Any.
    def observe(self, event: Any, ctx: RuleContext) -> Outcome:
        """The rule's answer to one event it reads: (violated, detail), or None when the event does
        not exercise the rule. `event` is one of the kinds of its spec's `reads`, as the view of its
        kind (judge.model.event_view: `ToolCallLike`, or a union such as `ToolCallLike | UserLike`
        narrowed by `event.kind == ...`), a pydantic event or a msgspec record."""
        raise NotImplementedError(f"{type(self).__name__} answers no event: a tracker writes `observe`")

    def remember(self, event: Any, ctx: RuleContext) -> None:
        """Keep what the rule needs of an event of the kinds in `remembers` (active key or not), as
        the view of its kind (as `observe`)."""

    def raw_scan(self, record: dict[str, Any]) -> bool:
        """Read a trace record before redaction; True: the rule saw a violation in it (no-leak).
        Called only when a tracker overrides it."""
        return False

    def at_checkpoint(self, checkpoint: Checkpoint) -> CheckpointVerdict | None:
        """A verdict at a checkpoint from what the rule remembered, before its hits are read."""
        return None

    def notes(self) -> Iterable[str]:
        """What the rule saw but could not check, for the run's warnings (a `limit` argument that is
        no number it can read)."""
        return ()

    def reads(self, declared: frozenset[str]) -> Iterable[str]:
        """The event kinds this rule reads, when it depends on the rule (never more than its spec's
        `reads`, `declared`): scope reads state-writes only with `tool: "*"`."""
        return declared

    def needs_toolkit(self) -> bool:
        """Whether the rule judges only with a declared toolkit (`--tools` or the run header's
        `tools`): the lint says so when neither is known (allowed-tools without its own list)."""
        return False

    def keeps_ok_calls_of(self) -> str | None:
        """The tool glob whose earlier ok calls a slice keeps so the rule re-grades the same
        (not-repeated); None: none."""
        return None


def overrides(tracker: Tracker[Any], name: str) -> bool:
    """Whether a tracker's class writes its own `name` (a default is not worth calling per record)."""
    return getattr(type(tracker), name) is not getattr(Tracker, name)


class CheckTracker(Tracker[Any]):
    """A tracker made of a check function and its per-run state (a spec's `check_event` and
    `new_state`): `check(rule, event, ctx, state) -> Outcome`."""

    # The check's event is Any: a plug-in's check may declare the view of the kinds its spec reads.
    def __init__(self, rule: Any, check: Callable[[Any, Any, RuleContext, Any], Outcome], state: Any) -> None:
        super().__init__(rule)
        self.check = check
        self.state = state

    def observe(self, event: AnyEventLike, ctx: RuleContext) -> Outcome:
        return self.check(self.rule, event, ctx, self.state)
