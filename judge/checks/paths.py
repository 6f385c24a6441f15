"""Allowed action sets and forbidden paths of a checkpoint window (the Chinese seed: regression
compares invariants, not transcripts).

A window's tool calls fit an allowed set when every required tool was called (any order) and every
tool called is required or optional there. A window that fits no set is marked for review, not
failed, with its side-effecting calls listed. A forbidden path is an ordered sequence of steps (not
necessarily adjacent); completing it is a violation of its key at the call that completes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from judge.checks.rules import Hit
from judge.model import ActionSet, Checkpoint, PathReview, PathStep
from judge.model.event_view import EventLike, is_tool_call, is_tool_result
from judge.model.patterns import glob_match as fnmatchcase  # RE2: linear time


@dataclass
class CallLog:
    """The tool calls of one window, with their results as they arrive."""

    calls: list[tuple[str, str, str, int, int]] = field(default_factory=list)  # id, tool, call_id, turn, index
    results: dict[str, tuple[str, str]] = field(default_factory=dict)  # call_id -> (status, result text)

    def observe(self, event: EventLike, index: int) -> None:
        """Note a tool call or a tool result (a pydantic event or a record: judge.model.event_view)."""
        if is_tool_call(event):
            self.calls.append((event.id, event.tool, event.call_id, event.turn, index))
        elif is_tool_result(event):
            text = event.result if isinstance(event.result, str) else json.dumps(event.result, default=str)
            self.results[event.call_id] = (event.status, text.casefold())


def _fits(tools: list[str], allowed: ActionSet) -> bool:
    everything = [*allowed.required, *allowed.optional]
    return all(any(fnmatchcase(t, g) for t in tools) for g in allowed.required) and \
        all(any(fnmatchcase(t, g) for g in everything) for t in tools)


def path_review(checkpoint: Checkpoint, log: CallLog) -> PathReview | None:
    if not checkpoint.allowed_actions:
        return None
    tools = [tool for _, tool, _, _, _ in log.calls]
    if any(_fits(tools, allowed) for allowed in checkpoint.allowed_actions):
        return None
    side = [eid for eid, tool, _, _, _ in log.calls if not any(fnmatchcase(tool, g) for g in checkpoint.read_only)]
    return PathReview(tools_called=list(dict.fromkeys(tools)), side_effecting_calls=side)


def _step_matches(step: PathStep | str, tool: str, result: tuple[str, str] | None) -> bool:
    step = PathStep(tool=step) if isinstance(step, str) else step
    if not fnmatchcase(tool, step.tool):
        return False
    if step.status is not None and (result is None or result[0] != step.status):
        return False
    if step.result_contains is not None and (result is None or step.result_contains.casefold() not in result[1]):
        return False
    return True


def forbidden_path_hits(checkpoint: Checkpoint, log: CallLog) -> list[Hit]:
    hits = []
    for path in checkpoint.forbidden_paths:
        position = 0
        for eid, tool, call_id, turn, index in log.calls:
            if _step_matches(path.steps[position], tool, log.results.get(call_id)):
                position += 1
                if position == len(path.steps):
                    names = " -> ".join(s if isinstance(s, str) else s.tool for s in path.steps)
                    hits.append(Hit(f"forbidden-path:{path.key}", "forbidden-path", path.key, eid, turn,
                                    index, True, f"forbidden path {names} completed by {tool}"))
                    break
    return hits


def path_keys(checkpoints: list[Checkpoint]) -> set[str]:
    return {p.key for cp in checkpoints for p in cp.forbidden_paths}

