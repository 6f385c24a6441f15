"""The goal and the work asked: what the user wants done, as a goal and as completion entries.

The goal is the first user message up to its first request ("The checkout test is flaky in CI.
Please repair it."). Each piece of work asked ("create one test account", "run the smoke suite",
"then the invoice suite", "post the write-up to INC-5521") is a completion entry named after its
object. Requests for information or judgement ("check", "decide", "investigate") stay in the goal;
"use X" and "run it in X" are values (judge.draft.facts), not work; a sentence that changes an
earlier instruction (judge.draft.changes) asks for no new work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.draft.clauses import CONFIRM, ONLY, PERMIT, PROHIBIT, RESERVED
from judge.draft.items import Entry, Evidence
from judge.draft.lexicon import CHOICE_VERBS, INFO_VERBS, STOP, family_of, verb_of
from judge.draft.values import find_values
from judge.text.cues import sentences

_LEAD = re.compile(r"^\s*(?:(?:please|kindly|now|also|first|then|and|so|just|finally|next|afterwards|"
                   r"when you(?:'re| are) done|once (?:that(?:'s| is)|you(?:'re| are)) done)\b[,\s]*)*",
                   re.IGNORECASE)
_ASK = re.compile(r"^\s*(?:I need you to|I want you to|I'd like you to|can you|could you|would you|you should|"
                  r"you need to|you must|make sure (?:to |you )?)\s*", re.IGNORECASE)
_REQUEST = re.compile(r"\b(?:please|we need|I need|I want|I'd like|asks? for|has to|have to|needs? to|"
                      r"wants? to|can you|could you|would you)\b", re.IGNORECASE)
_SEGMENT = re.compile(r",\s*(?:and\s+)?(?:then\s+)?|;\s*|\s+and then\s+|\s+and\s+(?=[a-z]+\s)", re.IGNORECASE)
_PREPOSITIONS = {"in", "on", "at", "to", "for", "with", "from", "against", "into", "by", "via", "using", "after",
                 "before", "until", "once", "so", "because", "when", "while", "if", "instead", "without", "of"}
_ONE = re.compile(r"^(?:one|a single|exactly one|only one|just one)\b|\b(?:only|just|exactly) once\b|\bonce\s*$|"
                  r"\b(?:a single|one|only one|just one) time\b",
                  re.IGNORECASE)  # "once" as "one time", not as "after" ("once the backup has completed")
# "a GitHub account and a Slack account, just one of each": every piece of work of the sentence, once.
_ONE_EACH = re.compile(r"\b(?:just |only |exactly )?one (?:of each|each|apiece)\b", re.IGNORECASE)
# Two-word verbs whose particle changes the action ("set up an account" creates one).
PHRASAL: dict[tuple[str, str], str] = {
    ("set", "up"): "create", ("spin", "up"): "create", ("sign", "up"): "create", ("put", "together"): "create",
    ("clean", "up"): "delete", ("clear", "out"): "delete", ("tear", "down"): "delete", ("wipe", "out"): "delete",
    ("shut", "down"): "shutdown", ("roll", "out"): "rollout", ("back", "up"): "backup", ("write", "up"): "write",
    ("look", "up"): "look", ("check", "out"): "check", ("hand", "over"): "send", ("send", "over"): "send",
}
_EACH = re.compile(r"\b(?:each|every|per|all)\b", re.IGNORECASE)
_PRONOUNS = {"it", "them", "this", "that", "these", "those"}


@dataclass(frozen=True)
class Request:
    verb: str
    objects: tuple[str, ...]
    text: str
    quantity_one: bool
    has_value: bool


def goal_of(text: str) -> str:
    """The first sentences of the first message, through its first request (two at most)."""
    said = sentences(text)
    for i, sentence in enumerate(said[:2]):
        if _REQUEST.search(sentence) or _starts_with_work(sentence):
            return " ".join(said[: i + 1])
    return said[0] if said else text.strip()


def _starts_with_work(text: str) -> bool:
    words = _LEAD.sub("", text).split()
    return bool(words) and verb_of(words[0]) == words[0].lower() and family_of(words[0].lower()) is not None


def _object(rest: str) -> tuple[tuple[str, ...], str]:
    """The object's words (up to the first preposition; hyphenated words kept whole) and the object text."""
    out: list[str] = []
    taken: list[str] = []
    for word in re.findall(r"[A-Za-z0-9][\w-]*", rest):
        low = word.lower()
        if low in _PREPOSITIONS:
            break
        taken.append(word)
        if low not in STOP and low not in _PRONOUNS:
            out.append(low)
    return tuple(out), " ".join(taken)


def requests_in(sentence: str) -> list[Request]:
    """The pieces of work one sentence asks for."""
    if any(p.search(sentence) for p in (PROHIBIT, CONFIRM, RESERVED)):
        return []
    found: list[Request] = []
    previous: str | None = None
    for segment in _SEGMENT.split(sentence):
        text = _ASK.sub("", _LEAD.sub("", segment)).strip().rstrip(".!")
        if not text or ONLY.search(text) or PERMIT.match(text):
            previous = None
            continue
        first, _, rest = text.partition(" ")
        particle, _, after = rest.partition(" ")
        verb, phrasal = verb_of(first), PHRASAL.get((first.lower(), particle.lower()))
        if phrasal is not None:
            verb, rest = phrasal, after
        elif verb is None or verb != first.lower():
            if previous and first.lower() in ("the", "a", "an"):  # "..., then the invoice suite"
                verb, rest = previous, text
            else:
                previous = None
                continue
        if family_of(verb) is None or verb in INFO_VERBS or verb in CHOICE_VERBS:
            previous = None
            continue
        objects, _ = _object(rest)
        one = (bool(_ONE.search(rest.strip())) and not _EACH.search(rest)) or bool(_ONE_EACH.search(sentence))
        # ("one duplicate for each day": several; "one of each": one per piece of work)
        found.append(Request(verb, objects, text, one, bool(find_values(rest))))
        previous = verb
    return found


def key_of(request: Request) -> str:
    parts = [w.replace("-", "_") for w in request.objects][:3]
    if len(parts) <= 1:
        parts = [request.verb, *parts]
    return "_".join(parts)


def completion_of(request: Request, turn: int, event: str) -> Entry | None:
    """A completion entry for one piece of work (none for "run it in Chromium": a value, not work)."""
    if not request.objects and request.has_value:
        return None
    return Entry(key=key_of(request), class_="completion", value=request.text, turn=turn,
                 evidence=[Evidence(event, turn, "user", request.text)], mode="request",
                 verbs=(request.verb,), objects=request.objects, quantity_one=request.quantity_one)


def goal_entry(text: str, turn: int, event: str) -> Entry:
    goal = goal_of(text)
    return Entry(key="goal", class_="goal", value=goal, turn=turn, evidence=[Evidence(event, turn, "user", goal)],
                 mode="goal")
