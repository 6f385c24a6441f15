"""The run's calls and their results as a claim asks about them: per tool its latest call and that
call's result, its last failure, and the latest RECENT calls with their arguments.

Kept once per run for every rule (judge.checks.rules.RunState.recent, updated as each call and
result passes, whether or not any key is active), so that `claimed-complete` can ask what a tool
last returned when the agent claims its work done, and, when the claim names an identifier a call
carried ("the refund draft for A-20931 is created"), what that call returned.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from judge.checks.matching import tool_is
from judge.text import cues

RECENT = 256  # calls remembered with their arguments
MAX_TOOLS = 4096  # tools remembered (past it, a new tool's calls are only in the recent ones)
_SPLIT = re.compile(r"[\s,;:!?()\[\]{}\"'`*]+")
_DIGIT = re.compile(r"[0-9]")

Result = tuple[str | None, str | None]  # (status, result event id); (None, None) while pending


class RecentCalls:
    """The run's calls as `claimed-complete` asks about them (module docstring)."""

    __slots__ = ("seq", "last_call", "results", "failed", "entries", "pending", "last_args")

    def __init__(self) -> None:
        self.seq = 0
        self.last_call: dict[str, int] = {}  # tool -> sequence number of its latest call
        self.results: dict[str, Result] = {}  # tool -> what its latest call returned
        self.failed: dict[str, str] = {}  # tool -> its last non-ok result event
        self.entries: deque[list[Any]] = deque(maxlen=RECENT)  # [tool, args, status, result, identifiers]
        self.pending: dict[str, list[Any]] = {}  # call id -> its entry, until its result comes
        self.last_args: dict[str, Any] = {}  # tool -> the arguments of its latest call

    def call(self, call_id: str, tool: str, args: Any) -> None:
        self.seq += 1
        if tool in self.last_call or len(self.last_call) < MAX_TOOLS:
            self.last_call[tool] = self.seq
            self.results[tool] = (None, None)
            self.last_args[tool] = args
        entry = [tool, args, None, None, None]
        self.entries.append(entry)
        if len(self.pending) >= RECENT:  # calls that never got a result
            self.pending.pop(next(iter(self.pending)))
        self.pending[call_id] = entry

    def result(self, call_id: str, status: str, event_id: str) -> None:
        entry = self.pending.pop(call_id, None)
        if entry is None:
            return
        entry[2], entry[3] = status, event_id
        tool = entry[0]
        if tool in self.results:
            self.results[tool] = (status, event_id)
            if status != "ok":
                self.failed[tool] = event_id

    def asked(self, glob: str | None, sentence: str) -> tuple[str | None, Result]:
        """The tool and what it returned that a claim is asked of: the latest recent call of a tool
        matching `glob` (any tool when None) that carried an identifier `sentence` names, else the
        tool matching `glob` called last and its latest call's result; (None, ...) when none was."""
        named = {w for w in (w.rstrip(".") for w in _SPLIT.split(sentence)) if is_identifier(w)}
        if named:
            for entry in reversed(self.entries):
                if glob is not None and not tool_is(entry[0], glob):
                    continue
                if entry[4] is None:
                    entry[4] = identifiers(entry[1])
                if not named.isdisjoint(entry[4]):
                    return entry[0], (entry[2], entry[3])
        tool = self.last_tool(glob)
        return tool, (self.results.get(tool, (None, None)) if tool is not None else (None, None))

    def called(self, limit: int) -> list[str]:
        """The tools called so far, the latest first, at most `limit` of them."""
        return sorted(self.last_call, key=self.last_call.__getitem__, reverse=True)[:limit]

    def last_tool(self, glob: str | None) -> str | None:
        if glob is not None and glob in self.last_call:
            return glob
        calls = self.last_call if glob is None else \
            {t: n for t, n in self.last_call.items() if tool_is(t, glob)}
        return max(calls, key=calls.__getitem__) if calls else None


def identifiers(args: Any) -> frozenset[str]:
    """The identifier-like values of a call's arguments (`is_identifier`), nested ones included."""
    leaves = args.values() if isinstance(args, dict) else (args,)
    out = set()
    for leaf in leaves:
        if isinstance(leaf, (dict, list, tuple)):
            out |= {v.strip() for _, v in cues.string_leaves(leaf) if is_identifier(v.strip())}
        elif isinstance(leaf, (str, int)) and not isinstance(leaf, bool):
            value = str(leaf).strip()
            if is_identifier(value):
                out.add(value)
    return frozenset(out)


def is_identifier(value: str) -> bool:
    """One word of 3 to 64 characters with a digit and a letter, or with at least 3 digits
    ("A-20931", "1042", "HAT030"); not free text, not a small count."""
    if not 3 <= len(value) <= 64 or " " in value:
        return False
    digits = len(_DIGIT.findall(value))
    return digits >= 3 or (digits >= 1 and value.lower() != value.upper())
