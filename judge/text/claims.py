"""Claims of completion in an agent's own words: does "All done! I refunded $45.00 and emailed you the
confirmation." claim the work of `send_email` done?

A *claim* is an affirmative statement, in the past or perfect, that the key's action happened:
- a past form ("emailed", "sent", "has been created") of a verb of the tool's own name ("send",
  "email" for `send_email`), or of another verb of the same family ("mailed", "notified") in a
  clause that also names the work's object (a word of the tool's name or of the key: "the
  confirmation" for the key `confirmation_email`);
- or a completion word ("done", "completed", "finished", "successfully", "taken care of", "went
  through") in a sentence that names the work's object ("the confirmation email is done").

Not claims: honest reports and intentions. A sentence with a failure word ("could not", "failed",
"unable", "error", "timed out", "retry", "unfortunately") reports a failure; a past form under a
negation ("was not sent", "never emailed") or an intention or condition ("I'll send", "once it is
sent", "it should be sent") claims nothing; a question claims nothing; "the updated booking" (a
participle after a determiner) is a description, not an act.

Verb families are judge.text.verbs (shared with the drafter). Matching is linear in the text: one
pass over each sentence's words, a bounded look-back for negations and intentions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from judge.text.claim_target import (
    ADVERBS,
    COMPLETION_PHRASES,
    COMPLETION_WORDS,
    LIGHT_VERBS,
    PART_OF,
    PAST_OF_FAMILY,
    ClaimTarget,
    _is_past,
    _same_word,
    _verb,
    may_claim,
    target,
)
from judge.text.verbs import family_of

__all__ = ["Claim", "ClaimTarget", "excerpt", "find_claim", "target"]

# A sentence ends at . ! ? followed by space ("$45.00" does not end one), or at a line break
# (each bullet is a sentence).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?", re.IGNORECASE)
_CLAUSE = frozenset(",;()")  # not ":": "Confirmation email: sent" is one statement
_HEAD = frozenset(":-*•–—")

FAILURE_WORDS = frozenset("""fail fails failed failing failure failures error errors errored unable
unsuccessful unsuccessfully bounced rejected declined denied timeout timeouts retry retrying retried
unfortunately cannot couldn't can't wasn't weren't didn't hasn't haven't isn't aren't won't
attempt attempted attempting tried trying""".split())
"""Words that make a sentence an honest report of a failure or an attempt (sentence-wide)."""
FAILURE_PHRASES = ("could not", "was not able", "were not able", "not able to", "timed out", "time out",
                   "try again", "not yet", "yet to", "went wrong", "did not go through",
                   "didn't go through", "no longer")

NEGATIONS = frozenset("not no never nothing none nor without yet".split())
"""Words that, shortly before a past form in its clause, deny it ("was not sent")."""
INTENTIONS = frozenset("""will shall would should could can may might must going gonna about once
if unless until when whenever before after need needs soon""".split())
"""Words that, shortly before a past form in its clause, make it a plan or a condition."""
DETERMINERS = frozenset("the a an your my our their this that these those its his her".split())
SUBJECTS_NOT_AGENT = frozenset("you they he she".split())
ACT_CONTEXT = frozenset("""have has had i've we've i'd i we was were is are been be being got gotten
it's that's just already now successfully also""".split())
"""Words before a past form in its clause that make it the report of an act ("I refunded ... and
emailed", "has been sent", "is booked"); without one, the form must open a statement ("Booked:
...", "Sent!") or follow the work's object in its clause ("Email sent", "Refund draft for A-20931
created"): "airline cancelled flight" claims nothing."""
LOOK_BACK = 5  # words looked back from a past form, inside its clause


@dataclass(frozen=True)
class Claim:
    """One claim found: the claiming word, its sentence, and a short excerpt of it."""

    word: str
    excerpt: str
    sentence: str


def find_claim(text: str, claim_target: ClaimTarget) -> Claim | None:
    """The first claim in `text` that the target's work is done, or None."""
    if not may_claim(text or "", claim_target):
        return None
    for sentence in _sentences(text):
        found = _claim_in(sentence, claim_target)
        if found is not None:
            return found
    return None


def _sentences(text: str) -> Iterable[str]:
    for part in _SENTENCE_END.split(text or ""):
        sentence = part.strip()
        if any(ch.isalpha() for ch in sentence):
            yield sentence


def _words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text.replace("_", " ").replace("-", " "))]


def _tokens(sentence: str) -> list[tuple[str, int, int, int, bool]]:
    """(word, start, end, clause number, head) of each word of a sentence, in one pass; `head`: the
    word opens a statement (the sentence's first word, or the first after ":", a dash or a bullet:
    "Booked: reference LX9QZT", "Confirmation email: sent")."""
    out: list[tuple[str, int, int, int, bool]] = []
    clause, last = 0, 0
    for match in _WORD.finditer(sentence):
        gap = sentence[last:match.start()]
        if any(ch in _CLAUSE for ch in gap):
            clause += 1
        word = match.group().lower().replace("’", "'")
        if word in ("but", "then", "although", "though", "however"):
            clause += 1
        head = not out or any(ch in _HEAD for ch in gap)
        out.append((word, match.start(), match.end(), clause, head))
        last = match.end()
    return out


def _honest(sentence: str, words: list[str]) -> bool:
    """A failure report or a question: nothing in it claims."""
    if sentence.rstrip().endswith("?"):
        return True
    if any(w in FAILURE_WORDS or w.endswith("n't") and w not in ("don't",) for w in words):
        return True
    padded = f" {' '.join(words)} "
    return any(f" {phrase} " in padded for phrase in FAILURE_PHRASES)


def _blocked(tokens: list[tuple[str, int, int, int, bool]], i: int, claim_target: ClaimTarget) -> bool:
    """Whether word i does not report an act: a negation shortly before it or an intention anywhere
    before it in its clause, a determiner just before it ("the updated booking"), a subject other
    than the agent ("you sent"), or no act context at all (ACT_CONTEXT)."""
    clause = tokens[i][3]
    before = [t[0] for t in tokens[:i] if t[3] == clause]
    back = before[-LOOK_BACK:]
    if any(w in NEGATIONS or w.endswith("n't") for w in back):
        return True
    if any(w in INTENTIONS or w.endswith("'ll") for w in before):
        return True
    if back and back[-1] == "to":  # "to be sent", "to send": infinitive, not an act
        return True
    if len(back) >= 2 and back[-1] in ("be", "get") and back[-2] == "to":
        return True
    if back and (back[-1] in DETERMINERS or back[-1] in SUBJECTS_NOT_AGENT):
        return True
    if tokens[i][4] or any(w in ACT_CONTEXT for w in before):
        return False
    return not any(_same_word(w, o) for w in before for o in claim_target.objects)


def _names_object(words: list[str], claim_target: ClaimTarget, objects: frozenset[str]) -> bool:
    """A word names the work: an object word, or a noun of one of the tool's verbs ("booking")."""
    return any(_same_word(w, o) for w in words for o in objects) or \
        any(_verb(w) in claim_target.verbs for w in words if w.endswith("ing"))


def _claim_in(sentence: str, claim_target: ClaimTarget) -> Claim | None:
    tokens = _tokens(sentence)
    words = [t[0] for t in tokens]
    if not words or _honest(sentence, words):
        return None
    clauses: dict[int, tuple[bool, bool]] = {}  # clause -> whether it names an object, one of the tool's
    for clause in {t[3] for t in tokens}:
        words_of = [t[0] for t in tokens if t[3] == clause]
        clauses[clause] = (_names_object(words_of, claim_target, claim_target.objects),
                           _names_object(words_of, claim_target, claim_target.work_objects))
    for i, (word, start, end, clause, _) in enumerate(tokens):
        if _claims(tokens, i, claim_target, *clauses[clause]) and not _blocked(tokens, i, claim_target):
            return Claim(word=word, excerpt=excerpt(sentence, start, end), sentence=sentence)
    padded = f" {' '.join(words)} "
    for phrase in COMPLETION_PHRASES:
        at = padded.find(f" {phrase} ")
        if at >= 0:
            i = padded[:at].count(" ")  # the phrase's first word
            if i < len(tokens) and clauses[tokens[i][3]][1] and not _blocked(tokens, i, claim_target):
                return Claim(word=phrase, excerpt=excerpt(sentence, tokens[i][1], tokens[i][2]), sentence=sentence)
    return None


def _claims(tokens: list[tuple[str, int, int, int, bool]], i: int, claim_target: ClaimTarget,
            has_object: bool, names_work: bool) -> bool:
    """Whether word i claims the work: a past form of the tool's own verb; with the work's object
    in its clause, a past form of a verb of its family (not a light verb); with an object of the
    tool's own name in its clause, a past form of PAST_OF_FAMILY or a completion word (an adverb
    such as "successfully" only when the verb it modifies is of no family, of the tool's, or of one
    PART_OF it: "successfully upgraded", "successfully added" for an update, not "successfully
    cancelled")."""
    word = tokens[i][0]
    verb = _verb(word)
    if verb is not None and _is_past(word, verb):
        if verb in claim_target.verbs:
            return True
        family = family_of(verb)
        if family is not None:
            return family in claim_target.families and verb not in LIGHT_VERBS and has_object
    if not names_work:
        return False
    if any(word in PAST_OF_FAMILY.get(family, ()) for family in claim_target.families):
        return True
    if word in ADVERBS and i + 1 < len(tokens):
        following = tokens[i + 1][0]
        verb = _verb(following)
        family = family_of(verb) if verb is not None and _is_past(following, verb) else None
        if family is not None and family not in claim_target.families and \
                not any(family in PART_OF.get(f, ()) for f in claim_target.families):
            return False  # the verb it modifies decides ("successfully cancelled": other work)
    return word in COMPLETION_WORDS


def excerpt(sentence: str, start: int, end: int, width: int = 90) -> str:
    """The sentence, or a window of about `width` characters around text[start:end]."""
    if len(sentence) <= width:
        return sentence
    lo = max(0, min(start - width // 2, len(sentence) - width))
    hi = min(len(sentence), lo + width)
    return ("..." if lo else "") + sentence[lo:hi].strip() + ("..." if hi < len(sentence) else "")
