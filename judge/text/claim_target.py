"""What a rule's claim is about, and the quick test that passes over a text that cannot claim it.

A `ClaimTarget` holds the words of one rule's work (judge.text.claims reads sentences with it): the
verbs of its tool's name and their families, the words naming its object, and the *triggers*, every
word that can start a claim of it. A text holding no trigger is passed over by one RE2 automaton
(linear in the text) shared by every target made in the process: grading reads each assistant
message and summary once for all claimed-complete rules, and only a text the shared automaton
matches is tested again per target.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import re2

from judge.text.lexicon import STOPWORDS
from judge.text.verbs import FAMILIES, IRREGULAR, family_of, name_tokens, verb_of

COMPLETION_WORDS = frozenset("""done complete completed finished succeeded successful successfully
processed handled confirmed""".split())
COMPLETION_PHRASES = ("all set", "taken care of", "went through", "gone through", "on its way",
                      "on the way", "is through")
PAST_OF_FAMILY = {
    "send": ("issued", "delivered", "granted", "dispatched"),
    "pay": ("issued", "credited", "processed"),
    "create": ("issued", "opened"),
}
"""Past forms that claim a family's work though their verb is not in its family ("the certificate
has been issued" for `send_certificate`); like completion words, they need an object of the tool's
name in their clause."""
ADVERBS = frozenset(("successfully", "successful"))
PART_OF = {"write": ("create", "delete")}
"""Families whose acts are part of another's work: adding or removing something is updating it
("bags successfully added" claims `update_reservation_baggages`, not `book_reservation`)."""
LIGHT_VERBS = frozenset("""take open look see check find get go use call hit touch set test start keep
let have give do make add copy seed""".split())
"""Verbs too common to claim a family's work on their own ("I've taken a look at your account"):
only the tool's own verbs count for them."""
GENERIC_OBJECTS = frozenset("""customer customers user users client clients request requests item items
thing things work task tasks action actions record records info information data tool tools
""".split()) | STOPWORDS


@dataclass(frozen=True)
class ClaimTarget:
    """What the key's work is called: the canonical verbs of the tool's name, their families, and
    the words that name its object (of the tool's name and the key, without verbs of another
    family: "refund" is not the object of `send_email`)."""

    verbs: frozenset[str]
    families: frozenset[str]
    objects: frozenset[str]
    work_objects: frozenset[str] = frozenset()
    """The object words of the tool's name alone (of the key's when there is no tool): a completion
    word without a verb ("successfully processed") must name one of them."""
    triggers: frozenset[str] = frozenset()
    """Every word that can start a claim for this target (the past forms of its verbs and of their
    families' verbs, the completion words): a text with none of them is passed over at once."""
    quick: Any = field(default=None, compare=False, repr=False)  # the triggers' RE2 automaton



@lru_cache(maxsize=1024)
def target(tool: str | None, key: str) -> ClaimTarget:
    """The claim target of a rule: the verbs of its tool's name (or, with none, of its key's words),
    and the words of the tool and the key as the work's object. The entry's value is not read: it
    names the context too ("a backup taken before the migration" is not about a migration)."""
    named = name_tokens(tool) if tool else name_tokens(key)
    verbs = {v for t in named if (v := verb_of(t)) is not None and family_of(v) is not None}
    if not tool:  # a key's words are nouns and adjectives as often as verbs ("3_checked_bags")
        verbs = {v for v in verbs if v not in LIGHT_VERBS and family_of(v) not in ("read", "use")}
    families = {f for v in verbs if (f := family_of(v)) is not None}
    objects = _objects(name_tokens(tool or "") + name_tokens(key), families)
    work_objects = _objects(name_tokens(tool) if tool else name_tokens(key), families)
    triggers = _triggers(verbs, families)
    made = ClaimTarget(frozenset(verbs), frozenset(families), objects, work_objects, triggers, _automaton(triggers))
    _MADE.add(triggers)
    return made


def _objects(words: list[str], families: set[str]) -> frozenset[str]:
    """The words that name the work's object: no generic word, no verb of other work."""
    objects: set[str] = set()
    for word in words:
        if len(word) < 3 or word in GENERIC_OBJECTS or word.isdigit():
            continue
        verb = verb_of(word)
        family = family_of(verb) if verb else None
        if family is not None and family not in families:
            continue  # a verb of other work: "refund" is not the object of send_email
        objects.add(word)
    return frozenset(objects)


def _triggers(verbs: set[str], families: set[str]) -> frozenset[str]:
    """The past forms `_claims` accepts for these verbs and families, generated and kept only when
    `_verb` reads them back (so the quick check never drops a word the full one would take)."""
    canonical = set(verbs) | {v for f in families for v in FAMILIES.get(f, ())}
    forms = set(COMPLETION_WORDS) | ADVERBS | {w for f in families for w in PAST_OF_FAMILY.get(f, ())}
    for verb in canonical:
        candidates = {verb + "ed", verb + "d", verb + verb[-1:] + "ed", verb[:-1] + "ied"}
        candidates |= {w for w, v in IRREGULAR.items() if v == verb}
        for form in candidates | {"re" + c for c in candidates}:
            if _verb(form) == verb and _is_past(form, verb):
                forms.add(form)
    return frozenset(forms)


def _verb(word: str) -> str | None:
    """verb_of, also through a `re` prefix ("rebooked" -> book) and a `y` made `ied` ("notified")."""
    verb = verb_of(word)
    if verb is None and word.endswith("ied") and len(word) > 4:
        verb = verb_of(word[:-3] + "y")
    if verb is None and word.startswith("re") and len(word) > 5:
        verb = verb_of(word[2:])
    return verb


def _same_word(a: str, b: str) -> bool:
    """Equal, equal once a plural `s` is dropped, or one a prefix of the other (5+ letters:
    "confirm" and "confirmation")."""
    if a == b or a.rstrip("s") == b.rstrip("s"):
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 5 and long_.startswith(short)


def _is_past(word: str, verb: str) -> bool:
    return word != verb and (word.endswith("ed") or IRREGULAR.get(word) == verb or
                             (word.startswith("re") and IRREGULAR.get(word[2:]) == verb))




# ------------------------------------------------------------------ the quick test

_MADE: set[frozenset[str]] = set()  # the triggers of every target made (target() is cached: bounded)
_UNANCHORED = re2._Anchor.UNANCHORED
_LAST: tuple[Any, ...] = ("", b"", None, -1)  # the last text: (text, its bytes, shared match, triggers made)


def _automaton(triggers: frozenset[str]) -> Any:
    """One RE2 automaton (linear in the text, whatever it holds) for these trigger words and the
    completion phrases, as whole words, in any case."""
    words = [re2.escape(w) for w in sorted(triggers)] + [p.replace(" ", r"\s+") for p in COMPLETION_PHRASES]
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
    """The quick test: a trigger of the target, or a completion phrase, occurs in `text`. The text
    is encoded and tried against the shared automaton (every target's triggers) once, whichever
    rule asks first; only when that matches is the target's own automaton tried."""
    global _LAST
    last = _LAST
    if last[0] is not text or last[3] != len(_MADE):
        data = text.encode("utf-8", "replace")
        last = _LAST = (text, data, _matches(_shared(), data), len(_MADE))
    return bool(last[2]) and claim_target.quick is not None and _matches(claim_target.quick, last[1])
