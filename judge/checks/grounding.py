"""Where a value could have come from: the normalised forms of what the user said, what tools
returned and what the ledger holds, remembered as a bounded set of forms (never whole texts).

A text gives its tokens (case-folded, split at spaces and punctuation, with the parts of
`bob@example.com` or `a/b` at `@` and `/` as well), the readings of its numbers
(judge.text.amounts: "$45.00", "45 dollars" and "45" are one number) and the forms of its dates
(judge.text.dates: "March 5, 2024" is "2024-03-05"). A value is grounded when its number, its date
or every one of its tokens was seen; which sources held it is kept for the finding's detail.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from judge.text.amounts import canonical_readings, numbers_in
from judge.text.dates import date_forms, dates_in, sayers, with_day_index

USER, TOOL, LEDGER, ASKED = 1, 2, 4, 8
SOURCES = {USER: "the user's words", TOOL: "a tool result", LEDGER: "the ledger", ASKED: "the agent's question"}
MAX_FORMS = 50_000
"""At most this many distinct forms per rule and run (about 5 MB); later ones are not remembered."""
MAX_LEAVES = 10_000
"""At most this many leaves of one tool result are read."""
MAX_TEXT = 1 << 20
"""At most this many characters of one text are read (about a second of work at worst)."""

_TOKEN = re.compile(r"[^\s,;!?()\[\]{}<>\"\u201c\u201d]+")
_EDGES = ".:'`*#\u2018\u2019-"
_PARTS = re.compile(r"[@/]")


def tokens(text: str) -> list[str]:
    """The case-folded tokens of a text, their edge punctuation dropped."""
    out = []
    for raw in _TOKEN.findall(text):
        token = raw.strip(_EDGES).casefold()
        if token:
            out.append(token)
    return out


def forms_of_text(text: str) -> set[str]:
    """Everything a text says that a value can be matched against: tokens (and their parts at
    `@` and `/`), numbers (`#` and the canonical reading), dates (`@` and the form)."""
    found: set[str] = set()
    for token in tokens(text):
        found.add(token)
        if _PARTS.search(token):
            found.update(part for part in _PARTS.split(token) if part)
    found.update("#" + n for n in numbers_in(text))
    found.update("@" + d for d in with_day_index(dates_in(text)))
    return found


def leaves(value: Any, limit: int = MAX_LEAVES) -> Iterable[Any]:
    """The scalar leaves of a JSON-like value (object values, list items), at most `limit`."""
    stack, seen = [value], 0
    while stack and seen < limit:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, (list, tuple)):
            stack.extend(reversed(node))
        else:
            seen += 1
            yield node


class Grounds:
    """The forms seen so far, each with the sources (bit flags) that said it."""

    __slots__ = ("forms", "full", "cut")

    def __init__(self) -> None:
        self.forms: dict[str, int] = {}
        self.full = False  # MAX_FORMS reached: later forms were not remembered
        self.cut = False  # a text was longer than MAX_TEXT: its end was not read

    def add_text(self, text: str, source: int) -> None:
        if len(text) > MAX_TEXT:
            text, self.cut = text[:MAX_TEXT], True
        self._add(forms_of_text(text), source)

    def add_value(self, value: Any, source: int) -> None:
        """Remember a JSON-like value (a tool result, a ledger value): its strings as texts, its numbers."""
        for leaf in leaves(value):
            if isinstance(leaf, str):
                self.add_text(leaf, source)
            elif isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
                self._add({"#" + n for n in canonical_readings(leaf)}, source)

    def _add(self, forms: set[str], source: int) -> None:
        known = self.forms
        for form in forms:
            flags = known.get(form)
            if flags is not None:
                known[form] = flags | source
            elif len(known) < MAX_FORMS:
                known[form] = source
            else:
                self.full = True

    def source_of(self, value: Any, extra: dict[str, int] | None = None) -> int | None:
        """The sources (flags) that said the scalar `value`, 0 for none, None when it holds nothing
        to ground (an empty string); `extra`: forms that count for this call only."""
        known, more = self.forms, extra or {}

        def flags(form: str) -> int:
            return known.get(form, 0) | more.get(form, 0)

        numbers = canonical_readings(value)
        if numbers:
            return _union(flags("#" + n) for n in numbers)
        dates = date_forms(value)
        if dates:
            return _union(flags("@" + said) for form in dates for said in sayers(form))
        words = tokens(str(value))
        if not words:
            return None
        found = [flags(w) or _union(flags("#" + n) for n in canonical_readings(w)) for w in words]
        return _union(found) if all(found) else 0


def _union(flags: Iterable[int]) -> int:
    out = 0
    for flag in flags:
        out |= flag
    return out


def sources_text(flags: int) -> str:
    """The sources of a flag set, in words."""
    return " and ".join(name for bit, name in SOURCES.items() if flags & bit)
