"""What the grader knows about one rule kind: its spec (model, tracker and the rest), declared once.

Every table that used to list rule kinds by name is derived from the specs (judge.checks.registry):
which event kinds a kind reads, the metric family, what lint adds, what drafts may propose, and the
row of the rule table in docs/scenarios.md. A kind is one module of judge.checks.kinds (or a
third-party module registered in the `judge.rules` entry-point group) holding its model, its tracker
and `SPEC = RuleSpec(...)`.

The spec holds the kind's static facts; what one rule does in one run is its tracker's
(judge.checks.tracker: `observe(event, ctx)`, and, when it needs them, `remember`, `raw_scan`,
`at_checkpoint`, `notes`, ...), made by `tracker(rule)` for each run. A kind may instead give the
check function and state it was written with before trackers, `check_event(rule, event, ctx, state)
-> (violated, detail) | None` and `new_state(rule)`: the spec makes a CheckTracker of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from judge.checks.tracker import CheckpointVerdict, CheckTracker, Outcome, RuleContext, Tracker
from judge.model.rules import RuleBase

if TYPE_CHECKING:
    from judge.ledger import ExpectedLedger

R = TypeVar("R", bound=RuleBase)

__all__ = ["CheckpointVerdict", "DraftSpec", "Family", "LintLevel", "Outcome", "RuleContext", "RuleSpec",
           "Target", "Tracker", "default_targets"]

Family = Literal["scope", "completion", "handoff", "recovery"]
"""The component metric a kind's findings count in (judge.grade.metrics). A `recovery` kind bounds
retry loops: recovery coherence counts the failed results of a chain one of its rules found
violated against, and its tool glob (`tool`, None for every tool) says which tools it governs
(judge.checks.progress)."""

LintLevel = Literal["error", "warning"]


@dataclass(frozen=True)
class Target:
    """A tool or argument name a rule targets, for the lint that holds them against the tools the
    traces called and the toolkit declares (a typo there would leave the rule silent)."""

    loc: tuple[Any, ...]  # the rule's field holding it: ("tool",), ("arg",), ("args", "order_id")
    kind: Literal["tool", "arg"]
    name: str  # a tool glob, or an argument name (nested by dotted path)
    tool: str | None = None  # for an argument: the tool glob it belongs to (None: any tool)


def default_targets(rule: RuleBase) -> Iterable[Target]:
    """The targets of the fields every kind names the same way: `tool` (a glob; `*` targets no
    name), `arg` and fields ending in `_arg` (argument names), `args` (a mapping of argument
    matchers or a list of argument names)."""
    tool = getattr(rule, "tool", None)
    tool = tool if isinstance(tool, str) else None
    if tool is not None and tool != "*":
        yield Target(("tool",), "tool", tool)
    for name in type(rule).model_fields:
        value = getattr(rule, name, None)
        if (name == "arg" or name.endswith("_arg")) and isinstance(value, str):
            yield Target((name,), "arg", value, tool)
    args = getattr(rule, "args", None)
    if isinstance(args, dict):
        yield from (Target(("args", k), "arg", str(k), tool) for k in args)
    elif isinstance(args, list):
        yield from (Target(("args", i), "arg", k, tool) for i, k in enumerate(args) if isinstance(k, str))


@dataclass(frozen=True)
class DraftSpec:
    """How a model-assisted draft may propose the kind: whether it must name a tool, and how an
    answer's (tool, arg, values) become the rule's fields."""

    needs_tool: bool
    fields: Callable[[str | None, list[str]], dict[str, Any]]  # (arg, values) -> the rule's own fields
    values_help: str = ""  # what `values` means for this kind, for the answer schema's description
    needs_arg_and_values: bool = False


REMOVED_HOOKS = {
    "remember": "Tracker.remember", "remembers": "Tracker.remembers", "at_checkpoint": "Tracker.at_checkpoint",
    "slice_ok_calls_of": "Tracker.keeps_ok_calls_of", "raw_scan": "Tracker.raw_scan", "notes": "Tracker.notes",
    "reads_of": "Tracker.reads", "needs_toolkit": "Tracker.needs_toolkit", "warns_early": "Tracker.warns_early",
}
"""The kind-named hooks RuleSpec took before the trackers, and what answers each now."""


@dataclass(frozen=True, kw_only=True)
class RuleSpec(Generic[R]):
    """One rule kind: everything the grader, lint, drafts, reports and docs need to know about it,
    given by keyword. Give `tracker` (or, in the older form, `check_event` and `new_state`)."""

    model: type[R]
    reads: frozenset[str]
    """The event kinds its rules read (a tracker may narrow them per rule: `Tracker.reads`)."""
    fields_doc: str
    violated_when: str
    tracker: Callable[[R], Tracker[Any]] | None = None
    """Makes one rule's tracker for one run (judge.checks.tracker): usually the Tracker subclass."""
    check_event: Callable[[R, Any, RuleContext, Any], Outcome] | None = None
    """The older form of a kind (plug-ins may keep it): `check(rule, event, ctx, state) -> Outcome`,
    with the state `new_state(rule)` makes (None without one)."""
    new_state: Callable[[R], Any] | None = None
    family: Family | None = None
    by_tool: bool = True
    by_key: bool = True
    leak: bool = False
    """Its violations are also the run's `leaks`."""
    lint: Callable[[R, ExpectedLedger], Iterable[tuple[LintLevel, str, str]]] | None = None
    """Fixture checks of one rule: (level, message, field of the rule) for each problem."""
    draft: DraftSpec | None = None
    targets: Callable[[R], Iterable[Target]] = default_targets
    """The tool and argument names the rule targets, for the lint (default: its `tool`, `arg`,
    `*_arg` and `args` fields)."""
    position: int = 1000
    """Where the kind sorts among the others (the union, schemas and tables): built-in kinds keep
    the order they were added in; a plug-in sorts after them by default."""

    def __new__(cls, *args: Any, **fields: Any) -> RuleSpec[Any]:
        # A plug-in written before the trackers may still pass a removed hook: say what replaced it
        # (dataclass's own error would only call the keyword unexpected).
        removed = sorted(fields.keys() & REMOVED_HOOKS.keys())
        if removed:
            instead = "; ".join(f"`{name}` -> {REMOVED_HOOKS[name]}" for name in removed)
            raise TypeError(f"RuleSpec no longer takes {', '.join(removed)}: a kind's tracker (judge.checks.Tracker) "
                            f"answers it now ({instead}; docs/scenarios.md, \"A rule kind of your own\")")
        return super().__new__(cls)

    def __post_init__(self) -> None:
        if (self.tracker is None) == (self.check_event is None):
            raise TypeError(f"the spec of {self.model.__name__} needs either `tracker` or `check_event`, not "
                            f"{'both' if self.tracker is not None else 'neither'}")
        if self.tracker is not None and self.new_state is not None:
            raise TypeError(f"the spec of {self.model.__name__}: `new_state` goes with `check_event`; a tracker "
                            "keeps its own state")

    def make_tracker(self, rule: R) -> Tracker[Any]:
        """One rule's tracker for one run."""
        if self.tracker is not None:
            return self.tracker(rule)
        assert self.check_event is not None  # __post_init__: one of the two
        return CheckTracker(rule, self.check_event, self.new_state(rule) if self.new_state is not None else None)

    @property
    def check(self) -> str:
        """The kind's `check` tag (the model's Literal)."""
        from typing import get_args

        tag: str = get_args(self.model.model_fields["check"].annotation)[0]
        return tag
