"""What an entry prohibits, read from its words, for the verbs judge.text.cues has no family for.

judge.text.cues.prohibitions reads "do not deploy" as the deploy family of tool names. Three common
phrasings fall outside it, and this module reads them:

- a verb no family names: "no restart, redeploy or configuration change on production hosts"
  (restart), "no migration" (migrate): the verb's own stem, matched against the words of a tool's
  name and of its command argument ("restart_service", "db_migrate");
- a generic verb, "no access to staging", "do not use production": any call, provided it names the
  object ("staging", "production");
- "no further refund may be drafted or submitted for it": the participles are the verbs (draft,
  submit), the noun before them is the object (refund).

The word read as the verb must be one (a verb judge.text.verbs knows, or its noun: "migration"):
"a call that serves no user request" prohibits nothing, and `get_user_info` breaks nothing.

Each prohibition keeps its object words (after the verb, or in a trailing "on/in/to/for ..."
phrase) and the entry's identifiers ("orders_db", "A-20977": tokens with a digit, `_` or `/`),
which tell *what* must not be acted on. A call or an agent sentence breaks the prohibition when it
performs the verb and names the object, or (for a sentence with no identifier of its own) when it
performs the verb and concerns the entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.judges.local.readings import is_verb
from judge.text import cues
from judge.text.align import stem

_CUE = re.compile(r"\b(?:do not|don't|dont|never|must not|mustn't|may not|cannot|can't|should not|no)\s+",
                  re.IGNORECASE)
_PASSIVE = re.compile(r"^(?:(?:further|more|other|additional|new|second)\s+)?([a-z][a-z-]*)\s+(?:may|can|must|shall|"
                      r"should|will)\s+(?:ever\s+)?be\s+([a-z]+(?:\s+(?:or|and|nor)\s+[a-z]+)*)", re.IGNORECASE)
_TAIL = re.compile(r"\s+(?:on|in|to|into|for|at|against|inside|within|under|of)\s+", re.IGNORECASE)
_ITEMS = re.compile(r"\s*(?:,|\bor\b|\band\b|\bnor\b)\s*", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[;.()]|\s-\s")
_TOKEN = re.compile(r"[A-Za-z0-9][\w./-]*")
_FILLER = {"further", "more", "other", "additional", "new", "second", "any", "the", "a", "an", "one"}
GENERIC = {"access", "use", "using", "usage", "touch", "contact", "involve", "involving"}
_STOP = {"the", "any", "and", "for", "with", "from", "into", "our", "your", "their", "this", "that",
         "anything", "ever", "all", "its", "may", "can", "must", "shall", "should", "will", "be", "it", "them"}
_SALIENT = re.compile(r"[A-Za-z0-9]+(?:[-_./:][A-Za-z0-9]+)+")


@dataclass(frozen=True)
class Prohibition:
    verb: str  # as written ("restart", "migration", "draft")
    stems: tuple[str, ...]  # prefixes a word or tool-name part must start with ("restart", "migrat")
    generic: bool  # "access", "use": any action, if it names the object
    objects: tuple[str, ...]  # object words, lower case
    ids: tuple[str, ...]  # the entry's identifiers, lower case
    # a generic verb's object as phrases ("the private channel" -> (private, channel)): a call names the
    # object when it names every word of one phrase, not when it says "channel"
    phrases: tuple[tuple[str, ...], ...] = ()


def identifiers(text: str) -> tuple[str, ...]:
    """Identifier-like tokens (a digit, `_`, `/` or an inner `-` with a digit): what an entry is about."""
    found = []
    for token in _SALIENT.findall(text or ""):
        if any(c.isdigit() for c in token) or "_" in token or "/" in token:
            found.append(token.lower().rstrip("."))
    return tuple(dict.fromkeys(found))


def verb_stem(word: str) -> str:
    """The first six letters of the verb's stem ("migration" -> "migrat", "restarts" -> "restar",
    "drafted" -> "draft", "submitted" -> "submit"): a word or tool-name part performs the verb when
    it starts with it."""
    w = word.lower()
    for suffix in ("ion", "ing", "ed", "es", "s", "e"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: len(w) - len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
                w = w[:-1]  # "dropped" -> "drop", "submitted" -> "submit"
            break
    else:
        w = stem(w)
    return w[:6]


def _words(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


def parse(text: str, named: bool = False) -> list[Prohibition]:
    """The prohibitions of `text` whose verb judge.text.cues has no family for (see the module doc);
    with `named`, those it has a family for too (as stems of their own verb, for reading sentences)."""
    ids = identifiers(text)
    out: list[Prohibition] = []
    for match in _CUE.finditer(text):
        clause = _CLAUSE_END.split(text[match.end():])[0]
        passive = _PASSIVE.match(clause)
        if passive:
            objects = [passive.group(1).lower()] + _objects(clause[passive.end():])
            for verb in re.split(r"\s+(?:or|and|nor)\s+", passive.group(2)):
                out.append(_make(verb, objects, ids))
            continue
        bare = [w for w in _words(clause) if w not in _FILLER]
        if len(bare) == 1 and not cues.families_of(bare[0]):
            # "never production", "no other channel": the verb is left out; any action on it is meant.
            out.append(Prohibition("", (), True, (bare[0],), ids, ((bare[0],),)))
            continue
        parts = _TAIL.split(clause, maxsplit=1)
        head, tail = parts[0], parts[1] if len(parts) > 1 else ""
        tail_objects = _objects(tail)
        tail_phrases = tuple(p for p in (tuple(_objects(part)) for part in _ITEMS.split(tail)) if p)
        for item in _ITEMS.split(head):
            words = [w for w in _words(item) if w not in _FILLER]
            if not words or words[0] in ("not", "no", "never"):
                continue  # a separate cue of its own ("no migration and no dropped table")
            if cues.families_of(words[0]) and words[0] not in GENERIC and not named:
                continue  # judge.text.cues.prohibitions reads it
            if words[0] not in GENERIC and not is_verb(words[0]):
                continue  # "no user request": a noun names no act (judge.judges.local.readings)
            own = [w for w in words[1:] if w not in _STOP]
            phrases = ((tuple(own),) if own else ()) + tail_phrases
            out.append(_make(words[0], own + tail_objects, ids, phrases))
    return [p for p in out if p.generic or p.stems]


def _objects(text: str) -> list[str]:
    return [w for w in _words(text) if w not in _STOP and len(w) > 2]


def _make(verb: str, objects: list[str], ids: tuple[str, ...],
          phrases: tuple[tuple[str, ...], ...] = ()) -> Prohibition:
    verb = verb.lower()
    generic = verb in GENERIC
    stems = () if generic or len(verb) < 4 else (verb_stem(verb),)
    return Prohibition(verb, stems, generic, tuple(dict.fromkeys(objects)), ids, phrases)


def split_name(name: str) -> list[str]:
    """Words of a tool name or command: "restart_service" -> restart, service; "dbMigrate" -> db, migrate."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(name))
    return [w.lower() for w in re.findall(r"[A-Za-z][a-z]*|[A-Z]+(?![a-z])", spaced)]


def performs(prohibition: Prohibition, words: list[str]) -> str | None:
    """The word of `words` (a tool name's parts, or a sentence's words) that performs the verb."""
    for word in words:
        if any(word.startswith(s) for s in prohibition.stems):
            return word
    return None


def names_object(prohibition: Prohibition, haystack: str) -> str | None:
    """An identifier of the prohibition found in `haystack` (lower case), or one of its object phrases
    whole (every word of "private channel"; its object words one by one when it has no phrases)."""
    for token in prohibition.ids:
        if cues.mentions(haystack, token):
            return token
    words = re.findall(r"[a-z0-9]+", haystack.lower())

    def named(word: str) -> bool:
        root = stem(word)[:6]
        return len(root) >= 4 and any(w.startswith(root) for w in words)

    for phrase in prohibition.phrases or tuple((w,) for w in prohibition.objects):
        usable = [w for w in phrase if len(stem(w)[:6]) >= 4]
        if usable and all(named(w) for w in usable):
            return " ".join(phrase)
    return None
