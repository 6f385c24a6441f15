"""`effect`: an ok result must be followed by the expected state change (snapshot events)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from judge.checks.matching import tool_is
from judge.checks.spec import Outcome, RuleContext, RuleSpec, Tracker
from judge.model.event_view import SnapshotLike, ToolResultLike
from judge.model.rules import RuleBase


class EffectRule(RuleBase):
    """An ok result of `tool` must be followed by the expected state change: its `snapshot` events
    (before/after, same call_id) must differ (in `field` of their state when given, else in digest)."""

    check: Literal["effect"]
    tool: str
    field: str | None = None


@dataclass
class Snapshots:
    """Per run: the ok calls of the tool awaiting their `after` snapshot, and each `before`."""

    ok: set[str] = field(default_factory=set)
    before: dict[str, Any] = field(default_factory=dict)


def _observed(rule: EffectRule, event: SnapshotLike) -> Any:
    if rule.field is not None:
        return (event.state or {}).get(rule.field)
    return event.digest if event.digest is not None else event.state


class EffectTracker(Tracker[EffectRule]):
    """One effect rule's tracker: the ok results awaiting their snapshots (Snapshots)."""

    def __init__(self, rule: EffectRule) -> None:
        super().__init__(rule)
        self.state: Snapshots = Snapshots()

    def observe(self, event: ToolResultLike | SnapshotLike, ctx: RuleContext) -> Outcome:
        rule, state = self.rule, self.state
        if event.kind == "tool-result":
            tool = ctx.state.call_tool.get(event.call_id, event.tool or "")
            if event.status == "ok" and tool_is(tool, rule.tool):
                state.ok.add(event.call_id)
            return None
        if event.call_id is None:
            return None
        seen = _observed(rule, event)
        if event.phase == "before":
            state.before[event.call_id] = seen
            return None
        if event.phase != "after" or event.call_id not in state.ok or event.call_id not in state.before:
            return None
        before = state.before.pop(event.call_id)
        state.ok.discard(event.call_id)
        what = f"state field {rule.field!r}" if rule.field else "state digest"
        if before == seen:
            return True, f"{rule.tool} returned ok but the {what} did not change ({event.ref})"
        return False, f"{rule.tool} changed the {what}"


SPEC = RuleSpec(
    model=EffectRule,
    tracker=EffectTracker,
    reads=frozenset({"tool-result", "snapshot"}),
    fields_doc="`tool`, `field` (optional)",
    violated_when="an ok result of the tool is followed by `snapshot` events (same `call_id`, `before`/`after`) "
                  "that show no change (of `state[field]`, else of the digest): the API succeeded but nothing "
                  "changed",
    position=80,
)
