"""What the grader knows about one rule kind: its spec (model, check and the rest), declared once.

Every table that used to list rule kinds by name is derived from the specs (judge.checks.registry):
which event kinds a check reads, the metric family, what a
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

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from judge.model.rules import RuleBase

if TYPE_CHECKING:
    from judge.ledger import ExpectedLedger
    from judge.model import Checkpoint
    from judge.trace.toolkit import Toolkit

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
    toolkit: Toolkit | None  # the tools the agent was given (--tools, else the run header's); None: unknown

    def superseded_at(self, key: str, turn: int) -> list[Any]: ...

    def value_at(self, key: str, turn: int) -> Any: ...

    def carries(self, actual: Any, version: Any) -> bool: ...


@dataclass(frozen=True)
class CheckpointVerdict:
    """A verdict a kind gives at a checkpoint from what it remembered (e.g. an expected call that
    never came, or calls a rule could not judge: `not-exercised` with why): the fields of a
    deterministic finding."""

    verdict: Literal["violated", "upheld", "not-exercised"]
    turn: int
    detail: str
    evidence_event: str | None = None


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


@dataclass(frozen=True)
class RuleSpec(Generic[R]):
    """One rule kind: everything the grader, lint, drafts, reports and docs need to know about it."""

    model: type[R]
    check_event: Callable[[R, Any, RuleContext, Any], Outcome]
    reads: frozenset[str]
    fields_doc: str
    violated_when: str
    reads_of: Callable[[R], Iterable[str]] | None = None
    """The event kinds one rule of the kind reads, when it depends on the rule (default: `reads`;
    never more): scope reads state-writes only with `tool: "*"`."""
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
    targets: Callable[[R], Iterable[Target]] = default_targets
    """The tool and argument names the rule targets, for the lint (default: its `tool`, `arg`,
    `*_arg` and `args` fields)."""
    needs_toolkit: Callable[[R], bool] | None = None
    """Whether the rule judges only with a declared toolkit (`--tools` or the run header's `tools`):
    the lint says so when neither is known (allowed-tools without its own list)."""
    notes: Callable[[R, Any], Iterable[str]] | None = None
    """Lines for the run's warnings, read from the rule's per-run state when the run is graded: what
    it saw but could not check (a `limit` argument that is no number it can read)."""
    warns_early: bool = True
    """Count the events it would have checked before its key's source turn (a warning)."""
    position: int = 1000
    """Where the kind sorts among the others (the union, schemas and tables): built-in kinds keep
    the order they were added in; a plug-in sorts after them by default."""

    @property
    def check(self) -> str:
        """The kind's `check` tag (the model's Literal)."""
        from typing import get_args

        tag: str = get_args(self.model.model_fields["check"].annotation)[0]
        return tag
