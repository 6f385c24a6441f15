"""A rule's tool name against the names the agent's tools really have: matched as both declare them.

A rule's `tool` is matched exactly as written (a glob, case included), against the names the trace
calls and its toolkit declares: `Run_Tests` is not `run_tests`, and `issue-refund` is not
`issue_refund`. A rule that names a tool but for case, `-`/`_` or a letter or two therefore never
fires on it, and its key grades as if the agent complied. Such a **near miss** is a warning naming
the name it misses, wherever judge sees both names: `judge lint`, from the scenario's own
declarations even without traces (judge.checks.targets), and every grade, from the run's calls and
toolkit (`grade_warnings`).

A near miss is a name equal but for case and `-`/`_` (globs compared the same way), or a plain name
difflib finds at least NEAR alike (`isue_refund` for `issue_refund`; not `read_file` for `edit_file`,
0.78, two tools an agent may well have side by side).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from judge.checks.matching import tool_is

NEAR = 0.9
"""difflib's similarity from which a plain name nearly names another."""
GLOB = "*?["


def fold(name: str) -> str:
    """A name as a near miss ignores it: case folded, `-` read as `_`."""
    return name.casefold().replace("-", "_")


def near_miss(pattern: str, names: Iterable[str]) -> tuple[str, str] | None:
    """(the name `pattern` nearly names, how: "case" or "spelling"), or None when it matches one of
    `names` as written or none is near."""
    names = sorted(set(names))
    if any(tool_is(name, pattern) for name in names):
        return None
    folded = fold(pattern)
    for name in names:
        if tool_is(fold(name), folded):
            return name, "case" if name.casefold() == pattern.casefold() else "spelling"
    if not any(c in pattern for c in GLOB):
        import difflib

        close = difflib.get_close_matches(pattern, names, n=1, cutoff=NEAR)
        if close:
            return close[0], "spelling"
    return None


def rule_tools(rule: Any, spec: Any) -> list[tuple[tuple[Any, ...], str]]:
    """(field, tool pattern) of each tool a rule names (its spec's `targets`)."""
    return [(target.loc, target.name) for target in spec.targets(rule) if target.kind == "tool"]


def near_miss_words(pattern: str, near: str, how: str) -> str:
    """What a near miss means, in one clause."""
    differs = "only in case" if how == "case" else "in spelling"
    return (f"{pattern!r} differs from {near!r} {differs}: tool names match as written, so the rule never "
            f"fires on {near!r}, and its key grades as if the agent complied")


def grade_warnings(ids: Sequence[str], rules: Sequence[Any], specs: Sequence[Any], names: Iterable[str]) -> list[str]:
    """One warning per rule tool that no name of the run (called or declared) matches but one nearly
    does."""
    names = set(names)
    out = []
    for rid, rule, spec in zip(ids, rules, specs, strict=False):
        for _, pattern in rule_tools(rule, spec):
            found = near_miss(pattern, names)
            if found is not None:
                out.append(f"rule {rid} names tool {pattern!r}, which no tool of this run matches; "
                           + near_miss_words(pattern, *found))
    return out
