"""The lint of what rules target, held against the traces and the toolkit: nothing guards silently.

A rule whose `tool` (or argument) matches no tool (or argument) the traces called or the toolkit
declares never fires, and its key grades as if the agent had behaved: `tool: issue-refund` when the
tool is `issue_refund`, `arg: orderid` when the argument is `order_id`. Given traces or
`--tools`, each such target is a warning naming the nearest known name (difflib); with or without them, a
tool the scenario's own `script.toolkit` lacks is too, and so is a near miss of a name its fixtures or
`tools` lists declare (judge.checks.tool_names: the same but for case, or difflib-close). Which names a
rule targets is its spec's `targets` (judge.checks.spec). Also warned: a rule that needs a declared
toolkit (its tracker's `needs_toolkit`) when neither `--tools` nor a trace header declares one, and a
trace whose header names a session its turns are not in.

Traces can be large: each is streamed once (the grader's records), keeping only tool names and
argument paths (bounded per tool).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.checks.matching import tool_is
from judge.checks.registry import specs
from judge.checks.spec import Target
from judge.checks.tool_names import GLOB, near_miss
from judge.ledger import ExpectedLedger, LintIssue, dotted, line_of
from judge.trace import TraceReader
from judge.trace.toolkit import MAX_ARGUMENT_PATHS, Toolkit, header_toolkit, toolkit_of

MAX_TOOLS = 10_000
"""Distinct tool names kept from the traces at most (a hostile trace cannot grow the lint without bound)."""


@dataclass
class Known:
    """What the traces and the toolkit show of the tools: argument paths per tool, which tools'
    arguments are known at all, the fields written to memory, and the traces' headers."""

    args: dict[str, set[str]] = field(default_factory=dict)
    informed: set[str] = field(default_factory=set)  # called, or declared with parameters
    written: set[str] = field(default_factory=set)  # fields of state-write values
    sources: list[str] = field(default_factory=list)  # "the traces", "--tools FILE"
    without_tools: list[str] = field(default_factory=list)  # traces whose header declares no `tools`
    sessions: list[tuple[str, str | None, int, int]] = field(default_factory=list)  # (trace, session, first, last)

    def add_tool(self, tool: str) -> set[str] | None:
        if tool not in self.args and len(self.args) >= MAX_TOOLS:
            return None
        return self.args.setdefault(tool, set())

    def add_toolkit(self, toolkit: Toolkit) -> None:
        for name in toolkit.names:
            paths = self.add_tool(name)
            declared = toolkit.arguments(name)
            if paths is not None and (declared or toolkit.schemas[name].parameters is not None):
                paths.update(declared)
                self.informed.add(name)


def add_paths(value: Any, into: set[str], prefix: str = "") -> None:
    """The dotted paths of an argument object's keys (through lists), into `into`, bounded."""
    stack = [(prefix, value)]
    while stack and len(into) < MAX_ARGUMENT_PATHS:
        base, item = stack.pop()
        if isinstance(item, list):
            stack.extend((base, v) for v in item if isinstance(v, (dict, list)))
        elif isinstance(item, dict):
            for key, sub in item.items():
                path = f"{base}.{key}" if base else str(key)
                into.add(path)
                if isinstance(sub, (dict, list)):
                    stack.append((path, sub))


def collect(traces: Iterable[str | Path], scenario_id: str | None, toolkit: Toolkit | None) -> Known:
    """One pass over each trace: the tools it called and their argument paths, what it wrote to
    memory, its header's `tools` and session; then the `--tools` schemas."""
    known = Known()
    traces = list(traces)
    if traces:
        known.sources.append("the traces")
    for trace in traces:
        reader = TraceReader(trace, expected_scenario=scenario_id)
        header = reader.header
        declared = header_toolkit(header)
        if declared is not None:
            known.add_toolkit(declared)
        else:
            known.without_tools.append(str(trace))
        first = last = None
        for event in reader.records():
            first = event.turn if first is None else first
            last = event.turn
            if event.kind == "tool-call":
                paths = known.add_tool(event.tool)
                if paths is not None:
                    known.informed.add(event.tool)
                    if event.args:
                        add_paths(event.args, paths)
            elif event.kind == "state-write" and isinstance(event.value, (dict, list)):
                add_paths(event.value, known.written)
        known.sessions.append((str(trace), header.session, first or 0, last or 0))
    if toolkit is not None:
        known.sources.append(toolkit.origin)
        known.add_toolkit(toolkit)
    return known


def _fold(name: str) -> str:
    return name.casefold().replace("-", "_")


def _nearest(name: str, names: Iterable[str]) -> str:
    """`nearest: 'x'`: a known name equal but for case and `-`/`_`, else one whose last dotted part
    is (`order_id` for `order.order_id`), else the closest by difflib; else a few known names."""
    names = sorted(set(names))
    wanted = _fold(name)
    close = [n for n in names if _fold(n) == wanted] or [n for n in names if _fold(n.rsplit(".", 1)[-1]) == wanted] \
        or difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    if close:
        return f"nearest: {close[0]!r}"
    shown = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
    return f"known: {shown}" if names else "none known"


def _target_problem(target: Target, known: Known, where: str) -> str | None:
    if target.kind == "tool":
        if any(tool_is(tool, target.name) for tool in known.args):
            return None
        return f"tool {target.name!r} matches no tool in {where} ({_nearest(target.name, known.args)})"
    every = target.tool is None or target.tool == "*"
    tools = [t for t in known.args if every or tool_is(t, target.tool)]  # type: ignore[arg-type]
    if not tools or not any(t in known.informed for t in tools):
        return None  # the tool itself is unknown (its own warning) or its arguments are
    names = set().union(*(known.args[t] for t in tools)) | (known.written if target.tool == "*" else set())
    if target.name in names:
        return None
    of = "any tool" if every else (f"{target.tool}" if len(tools) == 1 else f"the tools {target.tool!r} matches")
    return f"argument {target.name!r} matches no argument of {of} in {where} ({_nearest(target.name, names)})"


def scenario_tools(scenario: Any) -> tuple[Toolkit | None, set[str]]:
    """What the scenario itself declares of the agent's tools: its script's `toolkit` (all of them),
    and the names its fixtures and its rules' `tools` lists give (some of them; globs left out)."""
    script = scenario.script
    kit = toolkit_of(script.toolkit, "the scenario's script toolkit") if script and script.toolkit else None
    names = set(script.tool_names()) if script is not None else set()
    for rule in scenario.rules:
        listed = getattr(rule, "tools", None)
        if isinstance(listed, list):
            names.update(t for t in listed if isinstance(t, str))
    return kit, {n for n in names if not any(c in n for c in GLOB)}


def _declared_problem(tool: str, kit: Toolkit | None, names: set[str]) -> str | None:
    """A rule's tool against the scenario's own declarations: any miss of its script toolkit, and a
    near miss (judge.checks.tool_names) of the other names it declares."""
    if kit is not None and not any(tool_is(name, tool) for name in kit.names):
        return f"tool {tool!r} matches no tool in {kit.origin} ({_nearest(tool, kit.names)})"
    found = near_miss(tool, names | set(kit.names if kit is not None else ()))
    if found is None:
        return None
    near, how = found
    differs = "only in case" if how == "case" else "in spelling"
    return (f"tool {tool!r} matches no tool the scenario declares (its fixtures and `tools` lists) but differs "
            f"from {near!r} {differs} (nearest: {near!r}; tool names match as written)")


Warn = Callable[[str, tuple[Any, ...]], None]
"""Adds one lint warning: (message, the location of the rule field it is about)."""


def lint_targets(ledger: ExpectedLedger, traces: Iterable[str | Path] = (), toolkit: Toolkit | None = None,
                 lines: dict[tuple[Any, ...], int] | None = None) -> list[LintIssue]:
    """Warnings for the rules whose tool or argument the traces and the toolkit do not know (with
    the nearest name), for rules that need a toolkit none declares, and for traces outside the
    session their header names."""
    lines = lines or {}
    traces = list(traces)
    known = collect(traces, ledger.expected_scenario, toolkit) if traces or toolkit is not None else None
    issues: list[LintIssue] = []

    def warn(message: str, loc: tuple[Any, ...]) -> None:
        issues.append(LintIssue("warning", message, dotted(loc), line_of(lines, loc)))

    registered = specs()
    own_kit, own_names = scenario_tools(ledger.scenario)
    for i, rule in enumerate(ledger.scenario.rules):
        spec = registered.get(rule.check)
        if spec is None or rule.key not in ledger:
            continue
        for target in spec.targets(rule):
            problem = _target_problem(target, known, " or ".join(known.sources)) if known is not None else None
            if problem is None and target.kind == "tool":
                problem = _declared_problem(target.name, own_kit, own_names)
            if problem:
                warn(f"{problem}: the rule never fires on it, and its key grades as if the agent complied",
                     ("rules", i, *target.loc))
        if toolkit is None and spec.make_tracker(rule).needs_toolkit():
            _toolkit_warning(traces, known, warn, ("rules", i, "check"))
    if known is not None:
        _session_warnings(ledger, known, warn)
    return issues


def _toolkit_warning(traces: list[Any], known: Known | None, warn: Warn, loc: tuple[Any, ...]) -> None:
    if not traces:
        warn("this rule lists no `tools`, so it judges only with `--tools FILE` or a trace whose run header "
             "declares `tools`; without either, its key stays not-exercised", loc)
    elif known is not None and known.without_tools:
        shown = ", ".join(known.without_tools[:3]) + (", ..." if len(known.without_tools) > 3 else "")
        warn(f"this rule lists no `tools`, no --tools file was given, and {len(known.without_tools)} of "
             f"{len(traces)} trace(s) declare no `tools` in their header ({shown}): it cannot judge them "
             "(their key stays not-exercised)", loc)


def _session_warnings(ledger: ExpectedLedger, known: Known, warn: Warn) -> None:
    sessions = sorted(ledger.scenario.sessions, key=lambda s: s.first_turn)
    if not sessions:
        return
    for trace, named, first, last in known.sessions:
        if named is None:
            continue
        at = next((i for i, s in enumerate(sessions) if s.id == named), None)
        if at is None:
            warn(f"{trace}: its run header names session {named!r}, which the scenario does not declare "
                 f"(it has {', '.join(s.id for s in sessions)})", ("sessions",))
            continue
        start = sessions[at].first_turn
        end = sessions[at + 1].first_turn - 1 if at + 1 < len(sessions) else None
        if first < start or (end is not None and last > end):
            span = f"turns {start}-{end}" if end is not None else f"turns from {start}"
            warn(f"{trace}: its run header names session {named!r} ({span}), but its events run from turn "
                 f"{first} to {last}: turns count on across sessions, and the rules guard by each event's turn "
                 "(a `session` key of an earlier session would guard it, or none would)", ("sessions", at))
