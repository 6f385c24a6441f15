"""Which tool's work an assertion claims done: an asserted act (judge.text.assertions) held against
the words of a tool's work (judge.text.claim_target), by its verb and by its object.

By its verb: the tool's own verb ("opened" for `open_pr`, "rotated" for `rotate_key`), a verb of
its family ("mailed" for `send_email`, "reserved" for `book_hotel`), a verb of work that is part of
it ("added" for `update_reservation_baggages`), a result state of its act ("is up", "went out"),
or a result of any act ("done", "complete", "went through", "is now").

By its object: a noun of the tool's name or of an abbreviation of it ("the pull request" for
`open_pr`), the noun of its act ("refund", "cancellation", "booking"), a value its call carried
("release/2.1", "INV-2291", "Hotel Lumen"), or a word of its call's arguments.

The weaker the verb, the stronger the object it needs: the tool's own verb claims with any object
(a light one such as "opened" needs the tool's object); a result of any act needs the tool's
object, the act's noun or a value of the call ("Refund done" claims `issue_refund`, "All done"
claims nothing). `relation` scores the pair so that a rule asking about every tool can take the
tool an assertion is most about.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from judge.text.assertions import Assertion
from judge.text.claim_target import GENERIC_OBJECTS, PART_OF, ClaimTarget, family, target
from judge.text.claim_words import ABBREVIATIONS, ACT_NOUN_SUFFIXES, CLAIM_LIGHT, DELIVERY, DELIVERY_OF, PART_VERBS
from judge.text.verbs import name_tokens

MAX_VALUES = 64  # values of one call read (its first string leaves)
OWN, FAMILY, DELIVERED, STATE, PART, DONE = 40, 30, 30, 25, 20, 10


def with_call(base: ClaimTarget, args: Any) -> ClaimTarget:
    """The target with the values and argument words of one call (its latest)."""
    values, words = _call_words(_freeze(args))
    if not values and not words:
        return base
    return ClaimTarget(base.verbs, base.families, base.objects, base.work_objects, base.triggers, base.quick,
                       base.key_verbs, values, words, base.tool)


def _freeze(args: Any) -> Any:
    if isinstance(args, dict):
        return tuple((str(k), _freeze(v)) for k, v in list(args.items())[:MAX_VALUES])
    if isinstance(args, (list, tuple)):
        return ("[]", tuple(_freeze(v) for v in list(args)[:MAX_VALUES]))
    return args if isinstance(args, (str, int, float, bool)) or args is None else str(args)


@lru_cache(maxsize=4096)
def _call_words(frozen: Any) -> tuple[frozenset[str], frozenset[str]]:
    """(values, words) of a call's arguments: each string or number leaf lowercased that is an
    identifier, a path or a name of two or more words (a plain word such as "chromium" is a word of
    the call, not a value), and the content words of the values (not of the argument names: "spec",
"browser" name no work)."""
    values: set[str] = set()
    words: set[str] = set()
    for _, leaf in _leaves(frozen):
        raw = str(leaf).strip().lower()
        text = raw.lstrip("#$@")
        if not text or isinstance(leaf, bool):
            continue
        letters, digits = any(c.isalpha() for c in text), sum(c.isdigit() for c in text)
        if (letters and digits) or digits >= 3 or (letters and not raw.isalpha() and len(raw) >= 4):
            values.add(text)  # an identifier, a path, a name of several words: "a-20931", "hotel lumen"
        words |= {w for w in name_tokens(text) if len(w) > 2 and w.isalpha() and w not in GENERIC_OBJECTS}
    return frozenset(values), frozenset(words)


def _leaves(frozen: Any, name: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    if depth > 4:
        return []
    if isinstance(frozen, tuple) and frozen and frozen[0] == "[]" and len(frozen) == 2:
        return [leaf for item in frozen[1] for leaf in _leaves(item, name, depth + 1)]
    if isinstance(frozen, tuple):
        return [leaf for pair in frozen if isinstance(pair, tuple) and len(pair) == 2
                for leaf in _leaves(pair[1], pair[0], depth + 1)]
    return [(name, frozen)] if frozen is not None else []


def tool_target(tool: str, args: Any = None) -> ClaimTarget:
    """The target of one tool's work as a rule asking about every tool sees it: its name's words
    and its call's values."""
    base = target(tool, tool)
    return with_call(base, args) if args else base


def acts_noun(word: str, verbs: frozenset[str]) -> bool:
    """Whether `word` names the act of one of `verbs` ("refund", "booking", "cancellation",
    "deployment", "rotation")."""
    for verb in verbs:
        stems = {verb, verb[:-1]} if verb.endswith("e") else {verb}
        for stem in stems:
            if len(stem) < 3 or not word.startswith(stem):
                continue
            rest = word[len(stem):]
            if rest in ACT_NOUN_SUFFIXES or (rest[:1] == stem[-1] and rest[1:] in ACT_NOUN_SUFFIXES and rest[1:]):
                return True
    return False


@lru_cache(maxsize=4096)
def _noun_forms(nouns: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """A target's nouns as `_names` reads them: without a plural `s`, the long ones (prefixes of
    each other: "confirm", "confirmation"), and those of several words."""
    single = [n for n in nouns if " " not in n]
    return (frozenset(n.rstrip("s") for n in single), tuple(n for n in single if len(n) >= 5),
            tuple(tuple(n.split()) for n in nouns if " " in n))


def _names(words: tuple[str, ...], nouns: frozenset[str]) -> bool:
    """A word of `words` is one of `nouns` (`_same`), or a run of them is a noun of several words."""
    if not words or not nouns:
        return False
    stripped, long_, several = _noun_forms(nouns)
    for w in words:
        if w.rstrip("s") in stripped:
            return True
        if len(w) >= 5 and any(w.startswith(n) or n.startswith(w) for n in long_):
            return True
    return any(words[i:i + len(parts)] == parts for parts in several for i in range(len(words)))


def object_strength(a: Assertion, t: ClaimTarget, work_only: bool = False, args: bool = True) -> int:
    """3: a value of the call is in the clause; 2: the subject or the direct object names the tool's
    object or its act; 1: another word of the clause does, or (with `args`) a word of the call's
    arguments is named; 0: nothing names it."""
    if t.values and any(v.lstrip("#$@") in t.values for v in a.values):
        return 3
    if t.values and _value_in(a.clause.lower(), t.values):
        return 3
    nouns = t.work_objects if work_only else t.objects
    if _names(a.head, nouns) or any(acts_noun(w, t.verbs) for w in a.head):
        return 2
    if _names(a.context, nouns) or args and any(w in t.arg_words for w in a.head + a.context):
        return 1
    return 0


def _value_in(clause: str, values: frozenset[str]) -> bool:
    """A value of several words or with punctuation ("hotel lumen", "q3-report.pdf") in the clause."""
    for value in values:
        at = clause.find(value)
        if at >= 0 and (at == 0 or not clause[at - 1].isalnum()) and \
                (at + len(value) == len(clause) or not clause[at + len(value)].isalnum()):
            return True
    return False


def relation(a: Assertion, t: ClaimTarget) -> int:
    """How strongly `a` claims the work of `t` (0: it does not; module docstring for the order).
    The verb is looked at first (set look-ups); the object only when the verb could claim."""
    if a.kind == "state":
        if not (a.families & t.families or a.lemmas & (t.verbs | t.key_verbs)):
            return 0
        strength = object_strength(a, t)
        if strength >= 2 or strength and any(w in t.arg_words for w in a.head):
            return STATE + strength  # its subject names the work ("the PR", "your confirmation" sent)
        return 0
    best = 0
    strength = -1
    for lemma in a.lemmas:
        how = _how(a, t, lemma)
        if how:
            if strength < 0:
                strength = object_strength(a, t)
            best = max(best, _by_verb(a, t, lemma, how, strength))
    if best == 0 and (a.kind == "done" or a.marked and not _other_work(a, t)):
        strength = object_strength(a, t, work_only=True)
        if strength >= 2:
            best = DONE + strength
    return best


def may_relate(a: Assertion, t: ClaimTarget) -> bool:
    """Whether `relation(a, t)` can be above 0, read off the target's verbs and families alone: a
    call's values and argument words only weigh an object once the verb could claim, so a caller
    asking about many tools builds each call's target (`with_call`) only where this holds."""
    if a.kind == "state":
        return bool(a.families & t.families or a.lemmas & (t.verbs | t.key_verbs))
    if a.kind == "done" or any(_how(a, t, lemma) for lemma in a.lemmas):
        return True
    return a.marked and not _other_work(a, t)


def _other_work(a: Assertion, t: ClaimTarget) -> bool:
    """The marked verb is of a family the tool's work is not and holds no part of ("successfully
    cancelled" is no claim of a booking)."""
    kinds = {k for lemma in a.lemmas if (k := family(lemma)) is not None}
    return bool(kinds) and not any(k in t.families or any(k in PART_OF.get(f, ()) for f in t.families)
                                   for k in kinds)


def _how(a: Assertion, t: ClaimTarget, lemma: str) -> str:
    """How the verb `lemma` may claim the tool's work, before its object is looked at: as the tool's
    own verb, of its family, as a delivery of its act, as a part of its update; or "" (it cannot)."""
    bare = lemma[2:] if lemma.startswith("re") and len(lemma) > 4 else ""
    own = _own(t.verbs | t.key_verbs)
    if lemma in own or bare in own:
        return "own"
    kind = family(lemma) or (family(bare) if bare else None)
    if kind is not None and kind in t.families:
        return "family"
    if lemma in DELIVERY or any(lemma in DELIVERY_OF.get(f, ()) for f in t.families):
        return "delivery"
    if lemma in PART_VERBS and "write" in t.families:
        return "part"
    return ""


def _by_verb(a: Assertion, t: ClaimTarget, lemma: str, how: str, strength: int) -> int:
    """The claim of verb `lemma` (its way `how`) with an object of `strength`, or 0."""
    if how == "own":
        return 0 if lemma in CLAIM_LIGHT and strength < 1 else OWN + strength
    if how == "family":  # a word of the call's arguments is not enough here
        if object_strength(a, t, args=False) >= (2 if lemma in CLAIM_LIGHT else 1):
            return FAMILY + strength
        return 0
    if how == "delivery":
        if lemma in DELIVERY and any(acts_noun(w, t.verbs) for w in a.head):
            return DELIVERED + strength
        if strength >= 2 and any(lemma in DELIVERY_OF.get(f, ()) for f in t.families):
            return DELIVERED + strength
        return 0
    return PART + strength if strength >= 2 else 0


@lru_cache(maxsize=1024)
def _own(verbs: frozenset[str]) -> frozenset[str]:
    """The tool's verbs and the words that are the same verb ("mail" for `email`)."""
    return verbs | {w for v in verbs for w in ABBREVIATIONS.get(v, ()) if " " not in w and "-" not in w}


def read_only(t: ClaimTarget) -> bool:
    """A tool that only reads (`get_order`, `search_flights`): reading is no work claimed done."""
    return bool(t.families) and all(f in ("read", "use") for f in t.families)


__all__ = ["acts_noun", "may_relate", "object_strength", "read_only", "relation", "tool_target", "with_call"]
