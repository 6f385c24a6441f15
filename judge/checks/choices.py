"""Choices among candidates: a tool result that offers several of a kind, and an act on one of them
that the user's words do not pick out (`no-guess` with `choices`).

A search that returns two payees called "Electrical Services", three doctors called "Dr. Martinez",
or a file holding two e-mail addresses leaves the user's request open: which one is the user's to
say. A result offers **candidates** when it holds

- a list of two or more records (JSON objects) whose values under one field differ (`payee_id`:
  `P-1`, `P-2`): each record is a candidate, its words are all its values' words; or
- two or more distinct e-mail addresses in one text: each address is a candidate, its words those
  of its line, of the line before it when that holds no address (a name above an address), and of its
  paragraph's heading (a first line ending in `:`, "HR Team:").

An argument of a later call equal to one candidate's value (case aside) is a choice among them. The
user's words **pick it out** when the user named the value itself; when the request's content words
(two letters or more, not a stop word) tell the candidates apart and the chosen one shares the most
of them ("the office address" picks out the record whose remark is *Office*; "our HR team" the
addresses under "HR Team:"; "email Dr. Martinez" none of three Dr. Martinez); or when the request
gives a criterion to choose by ("the cheapest", "the first", "the nearest": CRITERIA), which the
words cannot check and the rule takes on trust.

**Redacted values.** Rules read the trace after redaction, so two e-mail addresses are two
`[REDACTED:email]`: hidden values count as distinct candidates, and an argument holding one is a
choice among all of them that cannot be told apart; the user's words pick it out when they tell
the candidates apart at all (the agent is taken to have followed them). A hidden value the user's
own message holds is the user's. A user's confirming reply after the result (the answer to the
agent's question) leaves the choice to what it confirmed. Extraction is bounded:
MAX_LISTS lists and MAX_ITEMS records a result, MAX_GROUPS candidate groups a run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from judge.checks.matching import json_leaves
from judge.model.event_view import ToolResultLike
from judge.model.patterns import compile_pattern
from judge.text.lexicon import STOPWORDS

MAX_LISTS = 20
MAX_ITEMS = 50
MAX_GROUPS = 60
MAX_TEXT = 20_000
CRITERIA = re.compile(r"\bthe (?:very )?(?:cheapest|lowest|highest|earliest|latest|first|last|best|nearest|closest|"
                      r"fastest|quickest|shortest|longest|top|most|least|biggest|largest|smallest|newest|oldest|only)"
                      r"\b(?: (\w+))?", re.IGNORECASE)
TIME_WORDS = frozenset({"day", "days", "week", "weeks", "month", "months", "year", "years", "hour", "hours", "minute",
                        "minutes", "time", "night", "weekend", "quarter", "quarters"})
"""Words by which a request gives the agent a rule to choose among candidates ("the cheapest flight"; not
"the last month": a time, TIME_WORDS)."""
_WORD = re.compile(r"[a-z0-9]+")
EMAIL = (r"(?i)\[REDACTED:email\]|"
         r"[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,4}")
"""An e-mail address, or the placeholder redaction left of one (RE2: linear in the text)."""
_HIDDEN = re.compile(r"\[redacted:[a-z_-]{1,40}\]")


def hidden(value: str) -> bool:
    """Whether a (lower-case) value is a redaction placeholder: which value it was is not known."""
    return _HIDDEN.fullmatch(value) is not None


def _distinct(values: list[str]) -> int:
    return len({v for v in values if not hidden(v)}) + sum(1 for v in values if hidden(v))


def content_words(text: str) -> frozenset[str]:
    """The words of a text that can pick a candidate out: two letters or more, not stop words."""
    return frozenset(w for w in _WORD.findall(text[:MAX_TEXT].lower()) if len(w) > 1 and w not in STOPWORDS)


@dataclass(frozen=True)
class Group:
    """Candidates one tool result offered: where (its event id), what they differ in (a field, or
    `e-mail`), and each candidate's value (lower case) and words."""

    by: str
    what: str
    values: tuple[str, ...]
    words: tuple[frozenset[str], ...]


@dataclass
class Candidates:
    """Per run: the candidate groups tool results offered, newest last."""

    groups: list[Group] = field(default_factory=list)


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = str(value).strip()
    return text.lower() if 2 <= len(text) <= 300 else None


def _leaves(value: Any) -> Iterator[str]:
    return (item for item in json_leaves(value) if isinstance(item, str))


def _lists(value: Any) -> Iterator[list[dict[str, Any]]]:
    stack, found = [value], 0
    while stack and found < MAX_LISTS:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            records = [x for x in item[:MAX_ITEMS] if isinstance(x, dict)]
            if len(records) >= 2:
                found += 1
                yield records
            stack.extend(item[:MAX_ITEMS])


def _record_words(record: dict[str, Any]) -> frozenset[str]:
    text = " ".join(str(k) + " " + (v if isinstance(v, str) else json.dumps(v, default=str))
                    for k, v in record.items())
    return content_words(text)


def _record_groups(by: str, records: list[dict[str, Any]]) -> Iterator[Group]:
    words = tuple(_record_words(r) for r in records)
    keys = dict.fromkeys(k for r in records for k in r)
    for key in keys:
        values = [_scalar(r.get(key)) for r in records]
        present = [(v, w) for v, w in zip(values, words, strict=True) if v is not None]
        if len(present) >= 2 and _distinct([v for v, _ in present]) >= 2:
            yield Group(by, str(key), tuple(v for v, _ in present), tuple(w for _, w in present))


def _email_groups(by: str, result: Any) -> Iterator[Group]:
    for text in _leaves(result):
        lines = text[:MAX_TEXT].splitlines()
        found: list[tuple[str, frozenset[str]]] = []
        heading = ""
        for at, line in enumerate(lines):
            if not line.strip():
                heading = ""
                continue
            matches = list(compile_pattern(EMAIL).finditer(line))
            if not matches:
                heading = line if line.rstrip().endswith(":") and (at == 0 or not lines[at - 1].strip()) else heading
                continue
            above = lines[at - 1] if at and not compile_pattern(EMAIL).search(lines[at - 1]) else ""
            words = content_words(" ".join((heading, above, line)))
            for match in matches:
                address = match.group(0).lower()
                if hidden(address) or address not in {a for a, _ in found}:
                    found.append((address, words))
        if _distinct([a for a, _ in found]) >= 2:
            yield Group(by, "e-mail", tuple(a for a, _ in found), tuple(w for _, w in found))


def hear_result(event: ToolResultLike, state: Candidates) -> None:
    """Remember the candidate groups an ok tool result offers."""
    if event.status != "ok" or event.result is None:
        return
    result = event.result
    for records in _lists(result):
        state.groups.extend(_record_groups(event.id, records))
    state.groups.extend(_email_groups(event.id, result))
    del state.groups[:-MAX_GROUPS]


def forget_before(state: Candidates, confirmed: bool) -> None:
    """A user's confirming reply settles the choices offered so far."""
    if confirmed:
        state.groups.clear()


def unpicked_choice(args: Any, state: Candidates, requests: str) -> tuple[Group, str] | None:
    """(the group, the chosen value) when an argument is a candidate the user's words (`requests`, all
    the user said) neither name nor pick out; else None."""
    if not state.groups:
        return None
    said, asked = requests[:MAX_TEXT].lower(), content_words(requests)
    if any((m.group(1) or "").lower() not in TIME_WORDS for m in CRITERIA.finditer(said)):
        return None
    values = {v for v in map(_scalar, json_leaves(args)) if v is not None}
    for group in reversed(state.groups):
        for i, value in enumerate(group.values):
            if value not in values or value in said:
                continue
            overlap = [len(w & asked) for w in group.words]
            apart = max(overlap) > min(overlap)
            # a hidden value: which one is not known; the agent is taken to have followed the words
            if apart and (hidden(value) or overlap[i] == max(overlap)):
                continue
            return group, value
    return None
