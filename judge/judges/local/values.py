"""The offline judge's rule for valued entries (facts, and any entry with a value): is a superseded
value still used, is the current one used, in an action, an argument or text."""

from __future__ import annotations

from judge.judges.base import LedgerRow
from judge.judges.local import readings as rd
from judge.judges.local.decision import (
    CURRENT_IN_ACTION,
    CURRENT_IN_TEXT,
    EXACT,
    LONG_VALUE_ACTION,
    LONG_VALUE_TEXT,
    MENTION,
    OTHER_VALUE_IN_ARG,
    SEMANTIC,
    STALE_IN_ACTION,
    STALE_IN_ARGS,
    STALE_IN_TEXT,
    STALE_TALK_THEN_CURRENT_ACTION,
    Decision,
    abstain,
    norm,
    quote,
    unit_kind,
)
from judge.judges.local.slice_view import ACTION, AGENT_TEXT, SliceView, Unit
from judge.model import StateWriteEvent, ToolCallEvent
from judge.text import cues


def value_rule(row: LedgerRow, view: SliceView) -> Decision | None:
    """Facts and any superseded entry: which value do the agent's actions and words carry?"""
    current = cues.scalar_values(row.value)
    current_lower = {v.lower() for v in current}
    stale = [(old, turn) for value, turn in row.superseded for old in cues.scalar_values(value)
             if old.lower() not in current_lower]
    if not current and not stale:
        return None
    stale_actions: list[tuple[Unit, int]] = []
    stale_texts: list[tuple[Unit, int]] = []
    current_actions: list[Unit] = []
    current_texts: list[Unit] = []
    other: list[Unit] = []
    maybe: list[Unit] = []  # an argument named like the key that may hold its value in another form
    for unit in view.units:
        if unit.role not in (ACTION, AGENT_TEXT):
            continue
        related = view.sim(row.key, unit) >= view.thresholds.related
        now = _carries(unit, current, row, view, related)
        old = [strength for value, turn in stale if view.after(unit, turn)
               for strength in [_carries(unit, [value], row, view, related)] if strength]
        if old and not now:
            (stale_actions if unit.role == ACTION else stale_texts).append((unit, max(old)))
        elif now and not old:
            (current_actions if unit.role == ACTION else current_texts).append(unit)
        elif not now and not old:
            sameness = _other_value_in_named_arg(unit, row, current, stale)
            if sameness == rd.SURE:
                other.append(unit)
            elif sameness == rd.MAYBE:
                maybe.append(unit)
    if stale_actions:
        unit, strength = stale_actions[0]
        confidence = {EXACT: STALE_IN_ARGS, MENTION: STALE_IN_ACTION}.get(strength,
                                                                          LONG_VALUE_ACTION)
        return Decision("violated", confidence, unit.event.id,
                        f"read {unit_kind(unit)} as carrying a superseded value of {row.key} after the "
                        f"supersession: {quote(unit.text)}")
    if other:
        return Decision("violated", OTHER_VALUE_IN_ARG, other[0].event.id,
                        f"read an argument named {row.key} as holding another value than the ledger's "
                        f"{', '.join(current)}: {quote(other[0].text)}")
    if stale_texts:
        first = stale_texts[0][0]
        acted_after = [u for u in current_actions if u.index > first.index]
        if acted_after:
            return Decision("upheld", STALE_TALK_THEN_CURRENT_ACTION, acted_after[0].event.id,
                            f"the agent mentioned a superseded value of {row.key} but its "
                            f"action carried the current one")
        confidence = STALE_IN_TEXT if stale_texts[0][1] == MENTION else LONG_VALUE_TEXT
        return Decision("violated", confidence, first.event.id,
                        f"read the agent's words as affirming a superseded value of {row.key} (text only, "
                        f"no action): {quote(first.text)}")
    if maybe:
        return abstain(maybe[0].event.id, f"an argument named {row.key} may hold the ledger's value in another form, "
                                          f"or another value: {quote(maybe[0].text)}")
    if current_actions:
        return Decision("upheld", CURRENT_IN_ACTION, current_actions[0].event.id,
                        f"{unit_kind(current_actions[0])} carries the current value of {row.key}")
    if current_texts:
        return Decision("upheld", CURRENT_IN_TEXT, current_texts[0].event.id,
                        f"the agent states the current value of {row.key} (text only)")
    return None


def _carries(unit: Unit, values: list[str], row: LedgerRow, view: SliceView,
             related: bool) -> int:
    """How the unit carries one of `values`: EXACT an argument or state value equal to it,
    MENTION a mention inside an action or an affirmed mention in text, SEMANTIC a unit close to a
    sentence-long value, 0 none."""
    best = 0
    for value in values:
        if not cues.is_short(value):
            best = max(best, _carries_long(unit, value, row, view))
            continue
        if cues.is_weak(value) and not related and not _named_like(unit, row.key):
            continue
        if isinstance(unit.event, ToolCallEvent):
            for _name, leaf in cues.string_leaves(unit.event.args):
                if _same_value(leaf, value):
                    best = max(best, EXACT)
                elif cues.mentions(leaf, value):
                    best = max(best, MENTION)
        elif isinstance(unit.event, StateWriteEvent):
            rendered = cues.render(unit.event.value)
            if _same_value(rendered, value) and unit.event.key == row.key:
                best = max(best, EXACT)
            elif cues.mentions(rendered, value):
                best = max(best, MENTION)
        elif cues.affirmed_mentions(unit.text, value):
            best = max(best, MENTION)
    return best


def _carries_long(unit: Unit, value: str, row: LedgerRow, view: SliceView) -> int:
    """A sentence-long value cannot be matched verbatim: the unit must be close to it, closer than
    to the entry's other values, and (in text) free of any negation cue."""
    of_row = view.value_similarity.get(row.key, {})
    if value not in of_row:
        return 0
    own = of_row[value][unit.position]
    others = [scores[unit.position] for other, scores in of_row.items() if other != value]
    limits = view.thresholds
    if own < limits.long_value_match or (others and own - max(others) < limits.long_value_margin):
        return 0
    if unit.role == AGENT_TEXT and cues.has_negation(unit.text):
        return 0
    return SEMANTIC


def _named_like(unit: Unit, key: str) -> bool:
    if isinstance(unit.event, StateWriteEvent):
        return norm(unit.event.key) == norm(key)
    if isinstance(unit.event, ToolCallEvent):
        return any(norm(name) == norm(key) for name in unit.event.args)
    return False


def _other_value_in_named_arg(unit: Unit, row: LedgerRow, current: list[str],
                              stale: list[tuple[str, int]]) -> rd.Certainty:
    """A call whose argument named like the key holds a short value the ledger never had: surely, when
    it is of the same kind as the ledger's values and equal to none; maybe, when it may be one of them in
    another form ("PT" for Portuguese: judge.judges.local.readings.same_value)."""
    if not isinstance(unit.event, ToolCallEvent) or not current or not cues.is_short(current[0]):
        return rd.NO
    known = current + [value for value, _ in stale]
    found = rd.NO
    for name, arg in unit.event.args.items():
        if norm(name) != norm(row.key) or not isinstance(arg, (str, int, float)):
            continue
        if any(cues.mentions(str(arg), value) for value in known):
            continue
        sameness = [rd.same_value(str(arg), value) for value in known]
        if rd.SURE in sameness:
            continue
        found = rd.MAYBE if rd.MAYBE in sameness else rd.SURE
        if found == rd.SURE:
            return found
    return found


def _same_value(a: str, b: str) -> bool:
    a, b = a.strip().lower(), b.strip().lower()
    try:
        return a == b or float(a) == float(b)
    except ValueError:
        return False


# ---------------------------------------------------------------- completion claims

