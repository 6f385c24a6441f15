"""When a user message confirms, for the `authorised` rule: a confirm phrase counts only when it is
not inside a prohibition or a condition.

"do not charge my card until I confirm" holds the whole word "confirm", yet it forbids the charge.
A match of a confirm phrase does not confirm when, in its sentence:

- a condition comes before it: *until*, *till*, *unless*, *before*, *without*, *wait* (for / until),
  *if*, *once*, *only* ("until I confirm", "without my OK", "before I confirm", "unless I say yes",
  "wait for my confirmation", "only if I agree");
- a negation comes before it in its clause (the text since the last comma, colon or dash): *not*,
  *n't*, *never*, *no longer* ("don't go ahead", "I do not confirm"); a negation in another clause
  does not count ("Don't worry, go ahead" confirms);
- a condition follows it in its clause ("go ahead once I confirm the price", "yes if it is under
  400"), or its sentence goes on with *but* and a negation or a condition ("yes, but wait for my OK").

This is lexical and deliberately cautious: a phrase it cannot tell from a condition does not
authorise, so the call is reported for a person to check rather than passed silently.
"""

from __future__ import annotations

import re
from typing import Iterable

_CONDITION = r"(?:until|till|unless|before|without|wait(?:ing)?|if|once|only)"
_NEGATION = r"(?:not|never|no\s+longer|\w+n't|cannot)"
_CONDITION_BEFORE = re.compile(rf"(?<!\w){_CONDITION}(?!\w)", re.IGNORECASE)
_NEGATION_BEFORE = re.compile(rf"(?<!\w){_NEGATION}(?!\w)", re.IGNORECASE)
_CONDITION_AFTER = re.compile(r"^\W*(?:\w+\W+){0,2}?(?:until|till|unless|once|after|if|only|before)(?!\w)",
                              re.IGNORECASE)
_BUT_THEN = re.compile(rf"(?<!\w)but(?!\w).*?(?<!\w)(?:{_CONDITION}|{_NEGATION})(?!\w)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;\n]")
_CLAUSE_END = re.compile(r"[.!?;\n,:()]|\s[-\u2013\u2014]\s|[\u2013\u2014]")


def phrase_pattern(phrases: Iterable[str]) -> re.Pattern[str]:
    """The confirm phrases as whole words or word sequences, longest first, case-insensitive."""
    words = "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{words})(?!\w)", re.IGNORECASE)


def _last_boundary(pattern: re.Pattern[str], text: str) -> int:
    ends = [m.end() for m in pattern.finditer(text)]
    return ends[-1] if ends else 0


def _first_boundary(pattern: re.Pattern[str], text: str) -> int:
    found = pattern.search(text)
    return found.start() if found else len(text)


def governed(text: str, start: int, end: int) -> bool:
    """Whether the phrase at text[start:end] sits inside a prohibition or a condition."""
    before, after = text[:start], text[end:]
    sentence_before = before[_last_boundary(_SENTENCE_END, before):]
    clause_before = before[_last_boundary(_CLAUSE_END, before):]
    sentence_after = after[:_first_boundary(_SENTENCE_END, after)]
    clause_after = after[:_first_boundary(_CLAUSE_END, after)]
    return bool(_CONDITION_BEFORE.search(sentence_before) or _NEGATION_BEFORE.search(clause_before)
                or _CONDITION_AFTER.search(clause_after) or _BUT_THEN.search(sentence_after))


def confirms(text: str, phrases: re.Pattern[str]) -> bool:
    """True when some match of the confirm `phrases` in `text` is a confirmation (not governed)."""
    return any(not governed(text, m.start(), m.end()) for m in phrases.finditer(text or ""))


def phrase_matches(text: str, phrases: re.Pattern[str]) -> list[str]:
    """Every confirm phrase `text` holds, governed or not (for the lint)."""
    return list(dict.fromkeys(m.group(0) for m in phrases.finditer(text or "")))
