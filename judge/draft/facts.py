"""Facts with values, and open questions, in what the user said.

Every value the user names (judge.draft.values) that no restriction or change used is a fact,
under the key its neighbouring noun gives ("host web-03" -> host): values of one shape in one
sentence ("two orders: A-20931 ... and A-20977") are one fact with a list. "I'll tell you whether to
run the smoke or the full suite" is an uncertainty whose options a later message settles.
"""

from __future__ import annotations

import re

from judge.draft.items import Entry, Evidence
from judge.draft.lexicon import STOP, snake
from judge.draft.values import Value, canonical, context_words, key_for, shape

_DEFER = re.compile(r"\b(?:I(?:'ll| will)|we(?:'ll| will)) (?:tell|let) you\b|\bonce I hear\b|\bnot (?:sure|decided)"
                    r"\b|\bto be decided\b|\bTBD\b|\bdon't know yet\b|\bhaven't decided\b|\bundecided\b",
                    re.IGNORECASE)
_WHETHER = re.compile(r"\bwhether (?:to [a-z]+ )?(?:the |a |an )?([\w.-]+)(?: [a-z]+)? or (?:the |a |an )?"
                      r"([\w.-]+)(?:\s+([a-z]+))?", re.IGNORECASE)


def uncertainty_in(sentence: str, turn: int, event: str) -> Entry | None:
    """"I'll tell you whether to run the smoke or the full suite once I hear from QA"."""
    if not _DEFER.search(sentence):
        return None
    match = _WHETHER.search(sentence)
    if match is None:
        return None
    first, second, noun = match.group(1), match.group(2), match.group(3)
    key = noun.lower() if noun and noun.lower() not in STOP else snake(f"{first} or {second}")
    options = (first.lower(), second.lower())
    return Entry(key=key, class_="uncertainty", value=f"not decided yet: {options[0]} or {options[1]}", turn=turn,
                 evidence=[Evidence(event, turn, "user", sentence.strip())], persistence="until-replaced",
                 mode="uncertainty", alternatives=options,
                 description="the user will decide; settled by a later message")


def facts_in(sentence: str, values: list[Value], skip: set[str], turn: int, event: str) -> list[Entry]:
    """Facts for the values of one sentence not in `skip` (values a restriction or a change used)."""
    groups: dict[tuple[str, str], list[Value]] = {}
    for value in values:
        if value.text in skip or canonical(value).lower() in {s.lower() for s in skip}:
            continue
        group = (value.kind, shape(value.text) if value.kind in ("id", "code") else "")
        groups.setdefault(group, []).append(value)
    out = []
    for (kind, _), members in groups.items():
        unique = list(dict.fromkeys(canonical(v) for v in members))
        first = members[0]
        out.append(Entry(
            key=key_for(sentence, first, values), class_="fact", value=unique[0] if len(unique) == 1 else unique,
            turn=turn, evidence=[Evidence(event, turn, "user", sentence.strip())], persistence="until-replaced",
            mode="fact", value_kind=kind, values=tuple(unique), kinds={u: kind for u in unique},
            context=tuple(w for v in members for w in context_words(sentence, v))))
    return out
