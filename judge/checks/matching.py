"""Matching tool names, arguments and values: globs, argument matchers, and whether an argument
carries a (superseded) value. Shared by every check; nothing here knows a rule."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from judge.model.patterns import glob_matcher

# Globs are user input: judge.model.patterns matches them with RE2 (linear time), as fnmatchcase
# reads them. The answer for a (tool name, pattern) pair, asked on every call, is remembered (tool
# names are few).
_TOOL_MATCHES: dict[tuple[str, str], bool] = {}


def tool_is(tool: str, pattern: str) -> bool:
    """fnmatchcase(tool, pattern), remembered."""
    key = (tool, pattern)
    hit = _TOOL_MATCHES.get(key)
    if hit is None:
        hit = glob_matcher(pattern)(tool)
        if len(_TOOL_MATCHES) < 4096:
            _TOOL_MATCHES[key] = hit
    return hit


def glob(pattern: str, value: Any) -> bool:
    return isinstance(value, str) and glob_matcher(pattern)(value)


def matches(expected: Any, actual: Any) -> bool:
    """An argument matcher: a glob when the expected string has glob characters, else equality."""
    if isinstance(expected, str) and any(c in expected for c in "*?["):
        return glob(expected, actual)
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.casefold() == actual.casefold()
    return bool(expected == actual)


def norm(value: Any) -> str:
    return str(value).strip().casefold()


def leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from leaves(v)
    else:
        yield value


def json_leaves(value: Any) -> Iterator[Any]:
    """The leaves of a JSON-like value, depth first from the last member (a stack, no recursion: a
    tool result nested past Python's recursion limit is walked too)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            yield item


def leaf_list(value: Any, out: list[Any]) -> list[Any]:
    """The leaves of a JSON-like value, in the order of `_leaves`, without a generator per level."""
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, list):
        out.append(value)
        return out
    for v in value:
        if isinstance(v, (dict, list)):
            leaf_list(v, out)
        else:
            out.append(v)
    return out


class Carrier:
    """`carries_value(actual, old)` with `old` prepared once: its normalised forms and, for strings
    of 3 or more characters, the whole-word pattern (superseded values are checked on every call).

    A string leaf is first tested by substring: `norm(leaf)` (strip, then casefold, which folds
    character by character) lies inside `leaf.casefold()`, and so does any whole-word match, so when
    neither the normalised old value nor its casefolded form occurs there, neither test can pass."""

    __slots__ = ("olds",)

    def __init__(self, old: Any) -> None:
        olds = old if isinstance(old, list) else [old]
        self.olds = [(norm(o), o.casefold() if isinstance(o, str) and len(o) >= 3 else None,
                      re.compile(rf"(?<![\w-]){re.escape(o.casefold())}(?![\w-])").search
                      if isinstance(o, str) and len(o) >= 3 else None) for o in olds]

    def __call__(self, actual: Any) -> bool:
        olds = self.olds
        for leaf in leaf_list(actual, []):
            if type(leaf) is str:
                folded = leaf.casefold()
                for norm_old, word, search in olds:
                    if norm_old in folded and norm(leaf) == norm_old:
                        return True
                    if word is not None and search is not None and word in folded and search(folded):
                        return True
            else:
                normed = norm(leaf)
                other = leaf.casefold() if isinstance(leaf, str) else None
                for norm_old, _word, search in olds:
                    if normed == norm_old:
                        return True
                    if search is not None and other is not None and search(other):
                        return True
        return False


def carries_value(actual: Any, old: Any) -> bool:
    """Does an argument carry a (superseded) value: equal, an element of it, or a whole word of it."""
    return Carrier(old)(actual)

