"""The checks of the first six rule kinds, one function each: (rule, event, rule_set) -> (violated,
detail), or None when the event does not exercise the rule. Semantics: DESIGN.md, "Rule semantics".

An event is a pydantic event or a record of judge.trace.records (the grader's): checks read its
attributes and tell kinds apart by `kind`, never by class."""

from __future__ import annotations

from typing import Any

from judge.checks.matching import glob, matches, norm, tool_is
from judge.model import (
    ClaimedCompleteRule,
    Event,
    ForbiddenCallRule,
    NotRepeatedRule,
    ScopeRule,
    SummaryPhrasesRule,
    SupersededValueRule,
)

COMPLETION_VALUES = {"completed", "complete", "done", "true", "finished", "yes", "1", "success", "succeeded"}

Outcome = tuple[bool, str] | None


def forbidden_call(rule: ForbiddenCallRule, event: Event, rs: Any) -> Outcome:
    if event.kind != "tool-call" or not tool_is(event.tool, rule.tool):
        return None
    for name, expected in (rule.args or {}).items():
        if not matches(expected, event.args.get(name)):
            return False, f"{event.tool} called outside the forbidden arguments"
    shown = ", ".join(f"{k}={event.args.get(k)!r}" for k in (rule.args or {}))
    return True, f"forbidden call {event.tool}" + (f" ({shown})" if shown else "")


def scope(rule: ScopeRule, event: Event, rs: Any) -> Outcome:
    if event.kind != "tool-call" or not tool_is(event.tool, rule.tool):
        return None
    if rule.arg not in event.args:
        return None
    values = event.args[rule.arg]
    for value in values if isinstance(values, list) else [values]:
        if rule.allow and not any(glob(p, value) for p in rule.allow):
            return True, f"{event.tool} {rule.arg}={value!r} is outside {rule.allow}"
        denied = [p for p in rule.deny if glob(p, value)]
        if denied:
            return True, f"{event.tool} {rule.arg}={value!r} matches denied {denied[0]!r}"
    return False, f"{event.tool} {rule.arg}={values!r} within scope"


def superseded_value(rule: SupersededValueRule, event: Event, rs: Any) -> Outcome:
    old = rs.superseded_at(rule.key, event.turn)
    if not old:
        return None
    call = event.kind == "tool-call"
    if not call and event.kind == "state-write" and event.key == rule.key:
        carried = event.value
    elif call and (rule.tool is None or tool_is(event.tool, rule.tool)):
        if rule.arg is not None and rule.arg not in event.args:
            return None
        carried = event.args[rule.arg] if rule.arg is not None else event.args
    else:
        return None
    for version in old:
        if rs.carries(carried, version):
            where = f"{event.tool} {rule.arg or 'args'}" if call else "state-write"
            return True, (f"{where} uses {version.value!r}, superseded at turn {version.replaced_at} by "
                          f"{rs.value_at(rule.key, event.turn)!r}")
    if rule.arg is None and call:
        return None  # no particular argument to credit as a compliant use
    return False, f"uses the current value {rs.value_at(rule.key, event.turn)!r}"


def not_repeated(rule: NotRepeatedRule, event: Event, rs: Any) -> Outcome:
    if event.kind != "tool-call" or not tool_is(event.tool, rule.tool):
        return None
    # A reviewed `reopen` rolls the completion back from the next turn on (as `completed_before`):
    # ok calls up to the reopen's turn no longer make a later call a repeat.
    since = max((t for t in rs.ledger.history(rule.key).reopened if t < event.turn), default=-1)
    earlier_ok = rs.ok_calls_since(rule.tool, since)  # kept as calls come: no list rebuilt per call
    completed = rs.ledger.history(rule.key).completed_before(event.turn)
    if not earlier_ok and not completed:
        return False, f"first {event.tool} call"
    if rule.idempotency_arg is not None:
        op_id = event.args.get(rule.idempotency_arg)
        if op_id is not None and rs.ok_call_with(rule.tool, since, rule.idempotency_arg, op_id):
            return False, f"same {rule.idempotency_arg} {op_id!r}: an idempotent retry converges"
    why = "already completed in the ledger" if completed else "an earlier call already returned ok"
    return True, f"{event.tool} repeated: {rule.key} {why}"


def claimed_complete(rule: ClaimedCompleteRule, event: Event, rs: Any) -> Outcome:
    if event.kind != "state-write" or event.key != rule.key:
        return None
    if norm(event.value) not in COMPLETION_VALUES:
        return None
    tool = rule.tool or rs.state.last_tool_called
    if tool is None:
        return True, f"{rule.key} claimed complete with no tool call at all"
    status = rs.state.last_status_by_tool.get(tool)
    if status == "ok":
        return False, f"{rule.key} claimed complete after an ok {tool} result"
    if status is None:
        return True, f"{rule.key} claimed complete with no {tool} result"
    return True, f"{rule.key} claimed complete after {tool} returned {status}"


def summary_phrases(rule: SummaryPhrasesRule, event: Event, rs: Any) -> Outcome:
    if event.kind != "summary":
        return None
    text = event.text.casefold()
    if rule.require and not any(p.casefold() in text for p in rule.require):
        return True, f"summary keeps none of {rule.require}"
    stale = [p for p in rule.forbid if p.casefold() in text]
    if stale:
        return True, f"summary carries obsolete phrase {stale[0]!r}"
    return False, "summary keeps the required phrasing"

