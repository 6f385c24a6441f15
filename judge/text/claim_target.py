"""What a rule's claim is about, and the quick test that passes over a text that cannot claim it.

A `ClaimTarget` holds the words of one tool's work (judge.text.acts holds an assertion against
it): the verbs of its tool's name and their families, the words naming its object, the values its
call carried, and the *triggers*, every word that can start a claim of it. A text holding no
trigger is passed over by one RE2 automaton (linear in the text) shared by every target made in the
process: grading reads each assistant message and summary once for all claimed-complete rules, and
only a text the shared automaton matches is tested again per target.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import re2

from judge.text.assertions import past_lemmas
from judge.text.claim_words import (
    ABBREVIATIONS,
    CLAIM_FAMILIES,
    CLAIM_LIGHT,
    DELIVERY,
    DELIVERY_OF,
    GENERIC_PHRASES,
    GENERIC_STATES,
    IRREGULAR_PAST,
    LOCATIONS,
    PARTICLES,
    PHRASE_STATES,
    STATES,
)
from judge.text.lexicon import STOPWORDS
from judge.text.verbs import FAMILIES, IRREGULAR, family_of, name_tokens, verb_of

PART_OF = {"write": ("create", "delete")}
"""Families whose acts are part of another's work: adding or removing something is updating it
("bags successfully added" claims `update_reservation_baggages`, not `book_reservation`)."""
GENERIC_OBJECTS = frozenset("""customer customers user users client clients request requests item items
thing things work task tasks action actions record records info information data tool tools
details detail""".split()) | STOPWORDS
ALWAYS = frozenset({"now", "through"}) | GENERIC_STATES
"""Claiming words of any target: results of any act ("the transfer went through", "is now")."""


@dataclass(frozen=True)
class ClaimTarget:
    """What the key's work is called: the canonical verbs of the tool's name, their families, and
    the words that name its object (of the tool's name and the key, without verbs of another
    family: "refund" is not the object of `send_email`)."""

    verbs: frozenset[str]
    families: frozenset[str]
    objects: frozenset[str]
    work_objects: frozenset[str] = frozenset()
    """The object words of the tool's name alone (of the key's when there is no tool): a result of
    any act ("done", "went through") must name one of them, the act, or a value of its call."""
    triggers: frozenset[str] = frozenset()
    """Every word that can start a claim for this target (the past forms of its verbs and of their
    families' verbs, result states, completion words): a text with none is passed over at once."""
    quick: Any = field(default=None, compare=False, repr=False)  # the triggers' RE2 automaton
    key_verbs: frozenset[str] = frozenset()
    """Verbs of the key's own name ("repair" for the key `repair`): their past claims the key's work
    whatever the tool ("Repaired." for `{key: repair, tool: run_tests}`)."""
    values: frozenset[str] = frozenset()
    """The values the tool's call carried ("release/2.1", "a-20931", "hotel lumen"), lowercased."""
    arg_words: frozenset[str] = frozenset()
    """The words of the call's argument names and string values ("replicas", "confirmation")."""
    tool: str = ""


def tool_verbs(tokens: list[str]) -> set[str]:
    """The verbs of a tool's name: its words that are verbs of a family, and its first word when
    that is a verb of a claim-only family (`rotate_key`) or no word is a verb (`reschedule_x`)."""
    verbs = {v for t in tokens if (v := verb_of(t)) is not None and family_of(v) is not None}
    if tokens and tokens[0] in CLAIM_FAMILIES:
        verbs.add(tokens[0])
    if not verbs and tokens and len(tokens) > 1:
        verbs.add(tokens[0])
    return verbs


def family(verb: str) -> str | None:
    """The verb family of a canonical verb, the claim-only families included."""
    found = family_of(verb)
    if found is None:
        found = CLAIM_FAMILIES.get(verb) or (CLAIM_FAMILIES.get(verb[2:]) if verb.startswith("re") else None)
    return found


@lru_cache(maxsize=1024)
def target(tool: str | None, key: str) -> ClaimTarget:
    """The claim target of a rule: the verbs of its tool's name (or, with none, of its key's words),
    and the words of the tool and the key as the work's object. The entry's value is not read: it
    names the context too ("a backup taken before the migration" is not about a migration)."""
    named = name_tokens(tool) if tool else name_tokens(key)
    verbs = tool_verbs(named)
    if not tool:  # a key's words are nouns and adjectives as often as verbs ("3_checked_bags")
        verbs = {v for v in verbs if v not in CLAIM_LIGHT and family(v) not in ("read", "use")
                 and (v in named or verb_of(v) is not None)}
    key_words = name_tokens(key)
    key_verbs = {v for t in key_words if (v := verb_of(t)) is not None and family(v) not in (None, "read", "use")
                 and v not in CLAIM_LIGHT} if tool else set()
    families = {f for v in verbs if (f := family(v)) is not None}
    first = {named[0]} if named and named[0] in verbs else set()
    work_objects = _objects([w for w in named if w not in first], families, own=bool(tool))
    objects = work_objects | (_objects(key_words, families, own=False) if tool else frozenset())
    triggers = _triggers(verbs | key_verbs, families)
    made = ClaimTarget(frozenset(verbs), frozenset(families), objects, work_objects, triggers, _automaton(triggers),
                       frozenset(key_verbs), tool=tool or "")
    _MADE.add(triggers)
    return made


def _objects(words: list[str], families: set[str], own: bool) -> frozenset[str]:
    """The words that name the work's object, with the nouns an abbreviation stands for ("pr":
    "pull request"): no generic word, and of a key's words (not `own`) no verb of other work
    ("refund" is not the object of send_email)."""
    objects: set[str] = set()
    for word in words:
        verb = verb_of(word)
        kind = family(verb) if verb else None
        if not own and kind is not None and kind not in families:
            continue
        for form in (word, *ABBREVIATIONS.get(word, ())):
            if len(form) >= 2 and form not in GENERIC_OBJECTS and not form.isdigit():
                objects.add(form)
    return frozenset(objects)


def _triggers(verbs: set[str], families: set[str]) -> frozenset[str]:
    """The words the detector may read as a claim of these verbs and families: the past forms of
    the verbs (and of their families' verbs), generated and kept only when read back as theirs;
    the result states of their acts; the completion words and the delivery verbs' pasts."""
    kinds = set(families) | {part for f in families for part in PART_OF.get(f, ())}
    canonical = set(verbs) | {v for f in kinds for v in FAMILIES.get(f, ())}
    canonical |= {v for v, f in CLAIM_FAMILIES.items() if f in kinds}
    canonical |= {v for f in families for v in DELIVERY_OF.get(f, ())}
    forms = set(ALWAYS) | {w for w in (p[0] for p in GENERIC_PHRASES)}
    forms |= {w for w, v in IRREGULAR_PAST.items() if v in DELIVERY}
    states = {w for w, (fams, acts) in STATES.items() if fams & families or acts & canonical}
    forms |= states | {p[0] for p, state in PHRASE_STATES.items() if state in states}
    if "pass" in states:
        forms.add("passed")
    forms |= {place for place, state in LOCATIONS.items() if state in states}  # "is in your inbox"
    for verb in canonical | DELIVERY:
        stems = {verb} | {verb[: -len(p)] for p in PARTICLES if verb.endswith(p) and len(verb) > len(p) + 2}
        for stem in stems:
            candidates = {stem + "d" if stem.endswith("e") else stem + "ed", stem}
            if stem[-1:] not in "aeiouwxy":
                candidates.add(stem + stem[-1] + "ed")
            if stem.endswith("y"):
                candidates.add(stem[:-1] + "ied")
            candidates |= {w for w, v in IRREGULAR.items() if v == stem}
            candidates |= {w for w, v in IRREGULAR_PAST.items() if v == stem}
            for form in candidates | {"re" + c for c in candidates}:
                lemmas = past_lemmas(form, "has")
                if stem in lemmas or any(lemma + form_particle == verb for lemma in lemmas
                                         for form_particle in PARTICLES):
                    forms.add(form)
    return frozenset(forms)


# ------------------------------------------------------------------ the quick test

_MADE: set[frozenset[str]] = set()  # the triggers of every target made (target() is cached: bounded)
_UNANCHORED = re2._Anchor.UNANCHORED
_LAST: tuple[Any, ...] = ("", b"", None, -1)  # the last text: (text, its bytes, shared match, triggers made)


def _automaton(triggers: frozenset[str]) -> Any:
    """One RE2 automaton (linear in the text, whatever it holds) for these trigger words, as whole
    words, in any case."""
    words = [re2.escape(w) for w in sorted(triggers)]
    options = re2.Options()
    options.case_sensitive = False
    options.never_capture = True
    options.max_mem = 32 << 20
    return re2.compile(r"\b(?:" + "|".join(words) + r")\b", options)


_SHARED: tuple[int, Any] = (-1, None)  # (targets' triggers made when built, the shared automaton)


def _shared() -> Any:
    """The automaton of every target's triggers (rebuilt only when a new set of triggers appears:
    they are few, one per verb family and tool verb met)."""
    global _SHARED
    count, automaton = _SHARED
    if count != len(_MADE):
        made = list(_MADE)
        automaton = _automaton(frozenset().union(*made))
        _SHARED = (len(made), automaton)
    return automaton


def _matches(automaton: Any, data: bytes) -> bool:
    return automaton._regexp.Match(_UNANCHORED, data, 0, len(data))[0][0] >= 0


def may_claim(text: str, claim_target: ClaimTarget) -> bool:
    """The quick test: a trigger of the target occurs in `text`. The text is encoded and tried
    against the shared automaton (every target's triggers) once, whichever rule asks first; only
    when that matches is the target's own automaton tried."""
    global _LAST
    last = _LAST
    if last[0] is not text or last[3] != len(_MADE):
        data = text.encode("utf-8", "replace")
        last = _LAST = (text, data, _matches(_shared(), data), len(_MADE))
    return bool(last[2]) and claim_target.quick is not None and _matches(claim_target.quick, last[1])


def may_claim_any(text: str) -> bool:
    """The quick test for a claim of any target made so far (a rule asking about every tool called
    makes the target of each first)."""
    global _LAST
    last = _LAST
    if last[0] is not text or last[3] != len(_MADE):
        data = text.encode("utf-8", "replace")
        last = _LAST = (text, data, _matches(_shared(), data), len(_MADE))
    return bool(last[2])
