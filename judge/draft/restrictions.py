"""Constraints, permissions and prohibitions in what the user said.

Recognised (judge.draft.clauses has the cue patterns): prohibitions ("do not deploy", "never touch
production", "no migration"), actions the user keeps for themselves ("I submit refunds myself"),
allow-lists ("you may only edit X", "drafts only"), grants ("you can read orders_db freely"),
confirm-before ("do not deploy until I confirm", "ask me before merging"), "keep X" and
"read-only". A sentence with a short head before a colon ("Keep the original database: do not
migrate or drop anything in orders_db") becomes one entry named after its head. An "anything else"
prohibition right after a grant of the same action narrows that grant to what it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from judge.draft.clauses import (
    CONFIRM,
    FORBIDDEN_STATE,
    FREELY,
    KEEP,
    KEEP_OUT,
    NO_NOUN,
    ONLY,
    PERMIT,
    PROHIBIT,
    READ_ONLY,
    RESERVED,
    Clause,
)
from judge.draft.items import Entry, Evidence
from judge.draft.lexicon import NOUN_VERBS, content_words, family_of, snake, verb_of
from judge.draft.values import Value, canonical, noun_near

_TOKEN = re.compile(r"[A-Za-z][\w'-]*|,")
_NOT_ACTIONS = {"confirm", "approve", "ask", "wait", "check", "say", "sign", "give", "have", "do", "keep",
                "let", "tell"}
_EXCLUSIVE = re.compile(r"\b(?:anything|nothing|everything) else\b|\bno other\b", re.IGNORECASE)
_PREFERENCE = {"want", "need", "like", "wish"}
_HEAD_STOP = {"a", "an", "the", "this", "that", "is", "it", "it's", "please"}
_FREE_WORDS = {"freely", "like", "needed", "will", "want", "much"}


@dataclass
class Restriction:
    mode: str  # prohibit | reserved | only | permit | confirm | keep | readonly
    clause: Clause
    verbs: list[str] = field(default_factory=list)
    objects: list[str] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)
    exclusive: bool = False  # "anything else": narrows a grant of the same action
    never: bool = False


def _verb_list(text: str) -> tuple[list[str], int]:
    """Verbs at the start of `text` ("migrate or drop", "restart, redeploy or change") and where the
    object starts."""
    verbs: list[str] = []
    for match in _TOKEN.finditer(text):
        token = match.group().lower()
        if token in (",", "or", "and", "nor"):
            continue
        verb = verb_of(token)
        if verb is None or family_of(verb) is None:
            return verbs, match.start()
        verbs.append(verb)
    return verbs, len(text)


def _actions(text: str, values: list[Value] | None = None, offset: int = 0) -> list[str]:
    for v in sorted(values or [], key=lambda v: -v.start):  # "tests/checkout.spec.ts" holds no verb
        if v.start - offset >= 0:
            text = text[:v.start - offset] + " " + text[v.end - offset:]
    out = []
    for word in re.findall(r"[A-Za-z]+", text):
        verb = verb_of(word)
        if verb and family_of(verb) and verb not in _NOT_ACTIONS and verb not in out:
            out.append(verb)
    return out


def _object(clause: Clause, offset: int, until: int | None = None) -> tuple[list[str], list[Value]]:
    """Content words (values left out) and values of the clause from `offset` on (up to `until`)."""
    start = clause.start + offset
    end = clause.start + (len(clause.text) if until is None else until)
    values = [v for v in clause.values if v.start >= start and v.end <= end]
    text = clause.sentence[start:end]
    for v in sorted(values, key=lambda v: -v.start):
        text = text[:v.start - start] + " " + text[v.end - start:]
    return [w for w in content_words(text) if (verb_of(w) is None or w in NOUN_VERBS) and w not in _FREE_WORDS], values


def parse(clause: Clause) -> Restriction | None:
    """The restriction one clause states, if any."""
    text = clause.text
    if CONFIRM.search(text):
        return Restriction("confirm", clause, _actions(CONFIRM.sub(" ", text)), *_object(clause, 0))
    reserved = RESERVED.search(text)
    if reserved:
        verb = verb_of(next(g for g in reserved.groups() if g)) or ""
        objects, values = _object(clause, reserved.end(next(i for i, g in enumerate(reserved.groups(), 1) if g)))
        return Restriction("reserved", clause, [verb] if family_of(verb) else [], objects, values)
    prohibit = PROHIBIT.search(text)
    if prohibit:
        verbs, at = _verb_list(text[prohibit.end():])
        first = text[prohibit.end():].split()[:1]
        objects, values = _object(clause, prohibit.end() + at)
        if not verbs and not values and first and first[0].lower() not in _PREFERENCE:
            return None  # "stay away from production" forbids a value; "never mind" nothing
        return Restriction("prohibit", clause, verbs, objects, values, bool(_EXCLUSIVE.search(text)),
                           never="never" in prohibit.group().lower())
    stated = FORBIDDEN_STATE.search(text)
    if stated:  # "Production is off limits": the subject is what is forbidden
        objects, values = _object(clause, 0, stated.start())
        verbs = _actions(text[:stated.start()], clause.values, clause.start)
        return Restriction("prohibit", clause, verbs, [w for w in objects if verb_of(w) not in verbs], values)
    keep_out = KEEP_OUT.search(text)
    if keep_out:  # "Keep Lee out of the #leadership channel": what follows "out of" is forbidden ground
        objects, values = _object(clause, keep_out.end())
        return Restriction("prohibit", clause, [], objects, values)
    no_noun = NO_NOUN.search(text)
    if no_noun and no_noun.group(1).lower() in NOUN_VERBS:
        objects, values = _object(clause, no_noun.end())
        return Restriction("prohibit", clause, [NOUN_VERBS[no_noun.group(1).lower()]], objects, values)
    if READ_ONLY.search(text):
        return Restriction("readonly", clause, [], *_object(clause, 0))
    if KEEP.search(text):
        return Restriction("keep", clause, [], *_object(clause, 0))
    if ONLY.search(text):
        verbs = _actions(text, clause.values, clause.start)
        objects, values = _object(clause, 0)
        return Restriction("only", clause, verbs, [w for w in objects if verb_of(w) not in verbs], values)
    permit = PERMIT.search(text)
    if permit or FREELY.search(text):
        verbs = _verb_list(text[permit.end():])[0] if permit else _actions(text, clause.values, clause.start)[:1]
        if verbs:
            objects, values = _object(clause, permit.end() if permit else 0)
            return Restriction("permit", clause, verbs, objects, values)
    return None


# ------------------------------------------------------------------ restrictions -> entries

_CLASS = {"prohibit": "constraint", "reserved": "permission", "only": "constraint", "permit": "permission",
          "confirm": "permission", "keep": "constraint", "readonly": "constraint"}


def _head_key(head: str) -> str:
    if READ_ONLY.search(head):
        return "read_only"
    parts = [w for w in re.findall(r"[a-z0-9]+", head.lower()) if w not in _HEAD_STOP]
    return "_".join(parts[:4])


def _key(parts: list[Restriction], head: str | None, head_parsed: Restriction | None) -> str:
    if head and (head_parsed is None or head_parsed.mode in ("only", "keep", "readonly")) and _head_key(head):
        return _head_key(head)
    first = next((p for p in parts if p.mode not in ("only", "keep", "readonly") or p.verbs or p.values), parts[0])
    values = [canonical(v) for v in first.values]
    if first.mode == "only" and values and all(v.kind == "path" for v in first.values) \
            and any(family_of(v) == "write" for v in first.verbs):
        return "editable_paths"
    what = snake(" ".join(values[:1] or first.objects[:2]), 2)
    verbs = [v for v in first.verbs if family_of(v) != "use"][:2]
    if first.mode in ("prohibit", "reserved"):
        return "no_" + "_".join(filter(None, ["_".join(verbs), what])) if (verbs or what) else "restriction"
    if first.mode == "permit":
        return "may_" + "_".join(filter(None, ["_".join(verbs[:1]), what]))
    if first.mode == "confirm":
        return "confirm_before_" + ("_".join(verbs[:1]) or "acting")
    return "_".join(filter(None, [what, first.mode])) or first.mode


def _mode(parts: list[Restriction]) -> str:
    modes = [p.mode for p in parts]
    for mode in ("confirm", "reserved", "prohibit", "only", "readonly", "keep", "permit"):
        if mode in modes:
            return mode
    return modes[0]


def _class(parts: list[Restriction]) -> str:
    modes = {p.mode for p in parts}
    if modes & {"reserved", "confirm"} or modes == {"permit"}:
        return "permission"
    return "constraint"


_FORBIDDING = ("prohibit", "reserved", "confirm")


def entry_of(parts: list[Restriction], head: str | None, turn: int, event: str,
             head_parsed: Restriction | None = None) -> Entry:
    """One entry from the restrictions of one sentence (its head's name when it has one)."""
    sentence = parts[0].clause.sentence.strip()
    quote = sentence if head else " ".join(p.clause.quote() for p in parts)
    forbidding = [p for p in parts if p.mode in _FORBIDDING]
    allowing = [p for p in parts if p.mode in ("only", "permit")]
    mode = _mode(parts)
    allowed_values = tuple(dict.fromkeys(canonical(v) for p in allowing for v in p.values))
    value: object = quote.rstrip(".")
    if mode == "only" and allowed_values and all(v.kind == "path" for p in allowing for v in p.values):
        value = list(allowed_values)
    return Entry(key=_key(parts, head, head_parsed), class_=_class(parts), value=value, turn=turn,
                 evidence=[Evidence(event, turn, "user", quote)],
                 persistence="session" if any(p.never for p in parts) else "task", mode=mode,
                 verbs=tuple(dict.fromkeys(v for p in forbidding for v in p.verbs)),
                 values=tuple(dict.fromkeys(canonical(v) for p in forbidding for v in p.values)),
                 objects=tuple(dict.fromkeys(w for p in parts for w in p.objects if w not in _FREE_WORDS)),
                 allowed=tuple(dict.fromkeys(v for p in allowing for v in p.verbs)), allowed_values=allowed_values,
                 kinds={canonical(v): v.kind for p in parts for v in p.values},
                 value_nouns={canonical(v): noun for p in parts for v in p.values
                              if (noun := noun_near(p.clause.sentence, v, p.clause.values))},
                 quantity_one=any(p.exclusive for p in parts))


def sentence_entries(clauses: list[Clause]) -> tuple[list[Entry], set[str]]:
    """The entries of one sentence's clauses, and the values they used (no fact repeats them)."""
    head = next((c.text for c in clauses if c.is_head), None)
    parsed = [(c, parse(c)) for c in clauses]
    found = [r for _, r in parsed if r is not None]
    if not found:
        return [], set()
    used = {v.text for r in found for v in r.values}
    turn, event = clauses[0].turn, clauses[0].event
    head_restriction = next((r for c, r in parsed if c.is_head and r is not None), None)
    if head is not None and (head_restriction is not None or any(r.mode == "prohibit" for r in found)):
        return [entry_of(found, head, turn, event, head_restriction)], used
    return [entry_of([r], None, turn, event) for r in found], used


def narrow_grants(entries: list[Entry]) -> list[Entry]:
    """"You may drop orders_v1. Do not drop anything else.": the prohibition narrows the grant (which
    becomes an allow-list), and is not an entry of its own."""
    out: list[Entry] = []
    for entry in entries:
        grant = next((g for g in out if g.mode == "permit" and entry.mode == "prohibit" and entry.quantity_one
                      and not entry.values and set(g.allowed) & set(entry.verbs)), None)
        if grant is None:
            out.append(entry)
            continue
        grant.quantity_one = True
        grant.mode = "only"
        grant.evidence += entry.evidence
        grant.value = f"{grant.value}; {entry.evidence[0].quote.rstrip('.')}"
    return out
