"""Numeric limits in what the user said: a bound on an amount, for a `limit` rule.

"Do not refund more than $50 without asking me" (a bound the user can allow beyond: `confirm`),
"If a replacement would cost more than $120, ask me before you create it" (the same, stated as a
condition), "under €180 a night", "a budget of $300", "at most 20 EUR" (a firm bound). A bound is a
money amount (judge.draft.values) right after a bound cue; "more than"-style cues count only where
the sentence forbids or conditions the action (`do not`, `never`, `if`, `ask me`), so "it costs more
than $50" states nothing. The action is the sentence's verb (refund, create: the tools that do it);
with none ("I need a hotel ... under €180 a night"), every tool that is not a read and has an
amount argument (judge.draft.rules).
"""

from __future__ import annotations

import re

from judge.draft.clauses import CONFIRM, PROHIBIT
from judge.draft.items import Entry, Evidence
from judge.draft.lexicon import content_words, family_of, verb_of
from judge.draft.values import Value
from judge.text.amounts import readings

_EXCEED = re.compile(r"\b(?:more than|over|above|exceeding|exceeds?|in excess of|greater than|beyond|higher than)"
                     r"\s*$", re.IGNORECASE)
_CAP = re.compile(r"\b(?:under|below|less than|at most|no more than|not more than|up to|max(?:imum)?|within|"
                  r"budget of|budget is|budget:|capped at|cap of|no higher than)\s*$", re.IGNORECASE)
_FLOOR = re.compile(r"\b(?:at least|no less than|not less than|minimum(?: of)?|min\.?)\s*$", re.IGNORECASE)
_CONDITION = re.compile(r"\b(?:if|when|whenever|should)\b", re.IGNORECASE)
_NOT_ACTIONS = {"cost", "costs", "ask", "confirm", "approve", "check", "say", "tell", "need", "want", "have", "be"}


def _number(value: Value) -> float | None:
    found = readings(value.text)
    return float(found[0]) if len(found) == 1 else None


def _bound(sentence: str, value: Value) -> str | None:
    """`max`, `min`, or None: the cue right before the amount."""
    before = sentence[max(0, value.start - 30):value.start]
    if _CAP.search(before):
        return "max"
    if _FLOOR.search(before):
        return "min"
    if _EXCEED.search(before) and (PROHIBIT.search(sentence) or CONFIRM.search(sentence)
                                   or _CONDITION.search(sentence)):
        return "max"
    return None


def _verbs(sentence: str) -> list[str]:
    out = []
    for word in re.findall(r"[A-Za-z]+", sentence):
        verb = verb_of(word)
        if verb and family_of(verb) not in (None, "read", "use") and word.lower() not in _NOT_ACTIONS \
                and verb not in _NOT_ACTIONS and verb not in out:
            out.append(verb)
    return out


def limit_in(sentence: str, values: list[Value], turn: int, event: str) -> Entry | None:
    """The limit one sentence states, if any (the first bounded amount)."""
    for value in values:
        if value.kind != "amount":
            continue
        side, number = _bound(sentence, value), _number(value)
        if side is None or number is None:
            continue
        verbs = _verbs(sentence[:value.start] + " " + sentence[value.end:])
        objects = [w for w in content_words(sentence[:value.start]) if verb_of(w) is None][-3:]
        return Entry(key=f"{verbs[0]}_limit" if verbs else "budget", class_="constraint",
                     value=sentence.strip().rstrip("."), turn=turn,
                     evidence=[Evidence(event, turn, "user", sentence.strip())], mode="limit",
                     verbs=tuple(verbs), objects=tuple(objects), values=(value.text,), kinds={value.text: "amount"},
                     value_kind="amount", bound=(side, number), confirmable=bool(CONFIRM.search(sentence)))
    return None
