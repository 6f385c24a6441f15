"""Supersession and revocation: a later user message that replaces a value or lifts a restriction.

A `set` is drafted when the user names a new value for a fact and either says the old one is no
longer right ("Firefox, not Chromium", "team-annual instead of pro-monthly", "web-07, not web-03"),
or uses a change cue ("correction", "change of plan", "actually", "switch to", "from now on") with a
value of the same kind, or says what the new value replaces ("... instead of building the shadow
database" for the fact stated with "a new shadow database, orders_v2_shadow"). An uncertainty is
settled when a later message names one of its options. A `revoke` is drafted when the user asks
for, or allows, the very action (and object) a restriction forbade ("Migrate orders_db in place"
after "do not migrate ... orders_db"); only the user revokes. A request for an action that waits for
the user's confirmation ("Yes, book it") confirms it once: it lifts nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from judge.draft.items import DeltaItem, Draft, Entry, Evidence
from judge.draft.lexicon import content_words, verb_of
from judge.draft.requests import requests_in
from judge.draft.restrictions import parse
from judge.draft.values import Value, canonical, shape
from judge.text.cues import mentions, negated_at

REPLACE = re.compile(r"\b(?:instead|change of plan|actually|switch(?:ing)? to|from now on|correction|rather than|"
                     r"no longer|changed? my mind|scratch that|going forward|update:)", re.IGNORECASE)
LIFT = re.compile(r"\b(?:you (?:may|can) now|go ahead (?:and|with)|(?:is|are) (?:now )?(?:approved|allowed|fine)|"
                  r"lift(?:ed|ing)?|signed off|ignore (?:my|the) (?:earlier|previous))\b", re.IGNORECASE)
_INSTEAD = re.compile(r"\b(?:instead of|rather than)\s+([^,.;]+)", re.IGNORECASE)
_SPECIFIC = {"browser", "environment", "version", "date", "time", "amount", "path", "url"}
_GENERIC = {"building", "build", "using", "use", "running", "run", "making", "new", "old", "one"}


@dataclass
class Found:
    deltas: list[DeltaItem] = field(default_factory=list)
    used: set[str] = field(default_factory=set)  # values the changes took (no new fact repeats them)


def current_value(draft: Draft, entry: Entry) -> Any:
    value = entry.value
    for delta in draft.deltas:
        if delta.key == entry.key and delta.op == "set":
            value = delta.value
    return value


def _revoked(draft: Draft, key: str) -> bool:
    return any(d.key == key and d.op == "revoke" for d in draft.deltas)


def _lower(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [str(v).lower() for v in items]


def _pick(fact: Entry, old: list[str], candidates: list[Value], strength: str, instead: set[str]) -> Value | None:
    same_kind = [v for v in candidates if v.kind == fact.value_kind
                 and (v.kind not in ("id", "code") or strength == "denied"
                      or any(shape(v.text) == shape(o) for o in old))]
    if strength == "denied":
        return same_kind[0] if same_kind else (candidates[0] if len(candidates) == 1 else None)
    if strength == "kind":
        return same_kind[0] if fact.value_kind in _SPECIFIC and same_kind else None
    context = set(fact.context) - _GENERIC
    if instead & context:
        ids = [v for v in candidates if v.kind in ("id", "code", "path", "quoted")]
        return ids[0] if ids else None
    return None


def sets_in(draft: Draft, sentence: str, values: list[Value], turn: int, event: str) -> Found:
    """`set` deltas, strongest evidence first: the old value denied in the sentence; an option of an
    open question named; a change cue with a value of the fact's kind; a change cue with "instead
    of <what the fact was stated with>"."""
    found = Found()
    cue = bool(REPLACE.search(sentence))
    negated = {v.text.lower() for v in values if negated_at(sentence, v.start, v.end, history=False)}
    affirmed = [v for v in values if v.text.lower() not in negated]
    instead_text = " ".join(m.group(1) for m in _INSTEAD.finditer(sentence))
    facts = [e for e in draft.entries if e.class_ in ("fact", "uncertainty") and e.turn < turn
             and e.source == "user" and not _revoked(draft, e.key)]
    stated = [o for e in facts for o in _lower(current_value(draft, e))]
    names_a_value = any(v.text in instead_text for v in values) or any(mentions(instead_text, o) for o in stated)
    instead = set() if names_a_value else set(content_words(instead_text))
    done: set[str] = set()
    for strength in ("denied", "option", "kind", "instead"):
        if strength != "option" and not (cue or negated):
            continue
        taken = {str(current_value(draft, e)).lower() for e in draft.entries if e.class_ == "fact"}
        for fact in facts:
            if fact.key in done or (fact.class_ == "uncertainty") != (strength == "option"):
                continue
            old = _lower(current_value(draft, fact))
            if strength == "option":
                said = [a for a in fact.alternatives if a not in negated and a not in old
                        and re.search(rf"\b{re.escape(a)}\b", sentence, re.IGNORECASE)]
                new_value = said[0] if len(said) == 1 else None
            else:
                candidates = [v for v in affirmed if canonical(v).lower() not in old and v.text not in found.used
                              and canonical(v).lower() not in taken]
                denied = any(negated_at(sentence, at, at + len(o), history=False)
                             for o in old for at in mentions(sentence, o))
                if (strength == "denied") != denied or not candidates:
                    continue
                picked = _pick(fact, old, candidates, strength, instead)
                new_value = canonical(picked) if picked is not None else None
                if picked is not None:
                    found.used.add(picked.text)
                    found.used.update(v.text for v in values if v.text.lower() in old)
            if new_value is not None:
                found.deltas.append(_set(fact, new_value, turn, event, sentence))
                done.add(fact.key)
    return found


def _set(fact: Entry, value: Any, turn: int, event: str, sentence: str) -> DeltaItem:
    return DeltaItem(turn=turn, op="set", key=fact.key, value=value, source="user",
                     evidence=[Evidence(event, turn, "user", sentence.strip())],
                     note=f"replaces {fact.value!r}" if fact.class_ == "fact" else "settles the open question")


def _asked_actions(sentence: str, turn: int, event: str) -> list[str]:
    """Verbs the sentence asks for or allows (not forbids)."""
    verbs = [r.verb for r in requests_in(sentence)]
    from judge.draft.clauses import split_sentence

    for clause in split_sentence(sentence, event, turn):
        restriction = parse(clause)
        if restriction is not None and restriction.mode in ("permit", "only"):
            verbs += restriction.verbs
    if LIFT.search(sentence):
        verbs += [v for v in (verb_of(w) for w in re.findall(r"[A-Za-z]+", sentence)) if v]
    return verbs


def revokes_in(draft: Draft, sentence: str, values: list[Value], turn: int, event: str) -> list[DeltaItem]:
    asked = set(_asked_actions(sentence, turn, event))
    named = {canonical(v).lower() for v in values if not negated_at(sentence, v.start, v.end, history=False)}
    out = []
    for entry in draft.entries:
        # A confirm-before entry is not lifted by the request it waited for ("Yes, book it"): that
        # request is the confirmation its `authorised` rule reads, once.
        if entry.turn >= turn or entry.class_ not in ("constraint", "permission") or not entry.verbs \
                or entry.mode in ("permit", "only", "confirm", "limit") or _revoked(draft, entry.key):
            continue
        if not asked & set(entry.verbs):
            continue
        if entry.values and not named & {v.lower() for v in entry.values}:
            continue
        out.append(DeltaItem(turn=turn, op="revoke", key=entry.key, source="user",
                             evidence=[Evidence(event, turn, "user", sentence.strip())],
                             note="the user asks for what the entry forbade"))
    return out
