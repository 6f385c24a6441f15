"""What the grader knows about one rule kind: its spec (model, check and the rest), declared once.

Every table that used to list rule kinds by name is derived from the specs (judge.checks.registry):
which event kinds a check reads, which kinds are standing prohibitions, the metric family, what a
slice keeps for stateful rules, the per-run state, what lint adds, what drafts may propose, and the
row of the rule table in docs/scenarios.md. A kind is one module of judge.checks.kinds (or a
third-party module registered in the `judge.rules` entry-point group) holding its model, its check
and `SPEC = RuleSpec(...)`.

A check is `check(rule, event, ctx, state) -> (violated, detail) | None`: None when the event does
not exercise the rule. `ctx` is the run's RuleContext; `state` the rule's own per-run state (made
by `new_state(rule)`, None without one). A check is called only for the event kinds in `reads`,
only while the rule's key is active, and (for tool-calls) only for the tools its rule's `tool` glob
matches when `by_tool` (and, for state-writes, only for writes of its key when `by_key`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterable, Literal, Protocol, TypeVar

from judge.model.rules import RuleBase

if TYPE_CHECKING:
    from judge.ledger import ExpectedLedger, KeyHistory
    from judge.model import Checkpoint

R = TypeVar("R", bound=RuleBase)

Outcome = tuple[bool, str] | None
"""A check's answer: (violated, detail), or None when the event does not exercise the rule."""

Family = Literal["scope", "completion", "handoff", "recovery"]
"""The component metric a kind's findings count in (judge.grade.metrics). A `recovery` kind bounds
retry loops: recovery coherence counts the failed results of a chain one of its rules found
violated against, and its tool glob (`tool`, None for every tool) says which tools it governs
(judge.checks.progress)."""

LintLevel = Literal["error", "warning"]


class RuleContext(Protocol):
    """What a check may read about the run so far (judge.checks.rules.RuleSet implements it)."""

    ledger: ExpectedLedger
    state: Any  # judge.checks.rules.RunState: calls, last tool called, last status per tool

    def superseded_at(self, key: str, turn: int) -> list: ...

    def value_at(self, key: str, turn: int) -> Any: ...

    def carries(self, actual: Any, version: Any) -> bool: ...


@dataclass(frozen=True)
class CheckpointVerdict:
    """A verdict a kind gives at a checkpoint from what it remembered (e.g. an expected call that
    never came): the fields of a deterministic finding."""

    verdict: Literal["violated", "upheld"]
    turn: int
    detail: str
    evidence_event: str | None = None


@dataclass(frozen=True)
class DraftSpec:
    """How a model-assisted draft may propose the kind: whether it must name a tool, and how an
    answer's (tool, arg, values) become the rule's fields."""

    needs_tool: bool
    fields: Callable[[str | None, list[str]], dict[str, Any]]  # (arg, values) -> the rule's own fields
    values_help: str = ""  # what `values` means for this kind, for the answer schema's description
    needs_arg_and_values: bool = False


@dataclass(frozen=True)
class RuleSpec(Generic[R]):
    """One rule kind: everything the grader, lint, drafts, reports and docs need to know about it."""

    model: type[R]
    check_event: Callable[[R, Any, RuleContext, Any], Outcome]
    reads: frozenset[str]
    fields_doc: str
    violated_when: str
    prohibition: bool = False
    """A standing prohibition: with events in the window and none breaking it, its key is upheld."""
    stands: Callable[[R, KeyHistory, int], bool] | None = None
    """For a prohibition: whether it stands at a turn at all (superseded-value: only after a set)."""
    family: Family | None = None
    by_tool: bool = True
    by_key: bool = True
    new_state: Callable[[R], Any] | None = None
    remember: Callable[[R, Any, RuleContext, Any], None] | None = None
    """Called for every event of the kinds in `remembers`, active key or not, after the checks."""
    remembers: frozenset[str] = frozenset()
    at_checkpoint: Callable[[R, Any, Checkpoint], CheckpointVerdict | None] | None = None
    """A verdict at a checkpoint from the rule's state, before its hits are read (expected-call)."""
    slice_ok_calls_of: Callable[[R], str | None] | None = None
    """The tool glob whose earlier ok calls a slice keeps so the rule re-grades the same (not-repeated)."""
    raw_scan: Callable[[R, dict[str, Any], Any], bool] | None = None
    """Read a trace record before redaction; True: the rule saw a violation in it (no-leak)."""
    leak: bool = False
    """Its violations are also the run's `leaks`."""
    lint: Callable[[R, ExpectedLedger], Iterable[tuple[LintLevel, str, str]]] | None = None
    """Fixture checks of one rule: (level, message, field of the rule) for each problem."""
    draft: DraftSpec | None = None
    warns_early: bool = True
    """Count the events it would have checked before its key's source turn (a warning)."""
    position: int = 1000
    """Where the kind sorts among the others (the union, schemas and tables): built-in kinds keep
    the order they were added in; a plug-in sorts after them by default."""

    @property
    def check(self) -> str:
        """The kind's `check` tag (the model's Literal)."""
        from typing import get_args

        return get_args(self.model.model_fields["check"].annotation)[0]

    def standing(self, rule: R, history: KeyHistory, turn: int) -> bool:
        """Whether the rule upholds its key by standing at this turn (a prohibition nothing broke)."""
        return self.prohibition and (self.stands is None or self.stands(rule, history, turn))
