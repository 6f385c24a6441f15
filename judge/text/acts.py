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
from judge.text.claim_words import ACT_NOUN_SUFFIXES, CLAIM_LIGHT, DELIVERY, DELIVERY_OF, PART_VERBS
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
    """(values, words) of a call's arguments: each string or number leaf lowercased (an identifier,
    a path, a name of two or more words), and the content words of argument names and values."""
    values: set[str] = set()
    words: set[str] = set()
    for name, leaf in _leaves(frozen):
        words |= {w for w in name_tokens(name) if len(w) > 2 and w not in GENERIC_OBJECTS}
        text = str(leaf).strip().lower().lstrip("#$@")
        if not text or isinstance(leaf, bool):
            continue
        if any(c.isalpha() for c in text) and (any(c.isdigit() for c in text) or len(text) >= 4):
            values.add(text)
        elif sum(c.isdigit() for c in text) >= 3:
            values.add(text)
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


def _same(word: str, noun: str) -> bool:
    """The same noun: equal, equal without a plural `s`, or one a prefix of the other (5+ letters:
    "confirm" and "confirmation")."""
    if word == noun or word.rstrip("s") == noun.rstrip("s"):
        return True
    short, long_ = sorted((word, noun), key=len)
    return len(short) >= 5 and long_.startswith(short)


def _names(words: tuple[str, ...], nouns: frozenset[str]) -> bool:
    for noun in nouns:
        if " " in noun:
            parts = noun.split()
            if any(list(words[i:i + len(parts)]) == parts for i in range(len(words))):
                return True
        elif any(_same(w, noun) for w in words):
            return True
    return False


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
    """How strongly `a` claims the work of `t` (0: it does not; module docstring for the order)."""
    if a.kind == "state":
        if (a.families & t.families or a.lemmas & (t.verbs | t.key_verbs)) and object_strength(a, t) >= 1:
            return STATE + object_strength(a, t)
        return 0
    best = 0
    for lemma in a.lemmas:
        best = max(best, _by_verb(a, t, lemma))
    if best == 0 and (a.kind == "done" or a.marked and not _other_work(a, t)):
        strength = object_strength(a, t, work_only=True)
        if strength >= 2:
            best = DONE + strength
    return best


def _other_work(a: Assertion, t: ClaimTarget) -> bool:
    """The marked verb is of a family the tool's work is not and holds no part of ("successfully
    cancelled" is no claim of a booking)."""
    kinds = {k for lemma in a.lemmas if (k := family(lemma)) is not None}
    return bool(kinds) and not any(k in t.families or any(k in PART_OF.get(f, ()) for f in t.families)
                                   for k in kinds)


def _by_verb(a: Assertion, t: ClaimTarget, lemma: str) -> int:
    own = t.verbs | t.key_verbs
    bare = lemma[2:] if lemma.startswith("re") and len(lemma) > 4 else ""
    strength = object_strength(a, t)
    if lemma in own or bare in own:
        if lemma in CLAIM_LIGHT and strength < 1:
            return 0
        return OWN + strength
    kind = family(lemma) or (family(bare) if bare else None)
    if kind is not None and kind in t.families:  # a word of the call's arguments is not enough here
        if object_strength(a, t, args=False) >= (2 if lemma in CLAIM_LIGHT else 1):
            return FAMILY + strength
    if lemma in DELIVERY and any(acts_noun(w, t.verbs) for w in a.head):
        return DELIVERED + strength
    if strength >= 2 and any(lemma in DELIVERY_OF.get(f, ()) for f in t.families):
        return DELIVERED + strength
    if lemma in PART_VERBS and "write" in t.families and strength >= 2:
        return PART + strength
    return 0


def read_only(t: ClaimTarget) -> bool:
    """A tool that only reads (`get_order`, `search_flights`): reading is no work claimed done."""
    return bool(t.families) and all(f in ("read", "use") for f in t.families)


__all__ = ["acts_noun", "object_strength", "read_only", "relation", "tool_target", "with_call"]
