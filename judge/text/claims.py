"""Claims of completion in an agent's own words: does "All done! I refunded $45.00 and emailed you the
confirmation." claim the work of `send_email` done?

A *claim* is an assertion, in the agent's words, that an act is done: judge.text.assertions reads
what each clause of a sentence asserts (the act, in any tense or voice, as a past form, a result
state or a completion word, with its object), and judge.text.acts holds each assertion against the
words of a tool's work (its name's verbs and nouns, the values its call carried). A sentence naming
several acts ("Pushed release/2.1 and opened the pull request") asserts each on its own, so each is
judged against its own tool's result.

Not claims: questions, honest reports ("could not be sent", "the PR failed to open"), plans and
conditions ("I will open", "once it is merged"), negations ("was not sent", "nothing went out"),
descriptions ("the updated booking") and other people's acts ("you sent").

Verb families are judge.text.verbs (shared with the drafter), the claim's own words
judge.text.claim_words. Matching is linear in the text: one `str.split` pass for the words, a bounded look
at each clause.
"""

from __future__ import annotations

from dataclasses import dataclass

from judge.text.acts import relation
from judge.text.assertions import Assertion, assertions_in
from judge.text.claim_target import ClaimTarget, may_claim, target

__all__ = ["Claim", "ClaimTarget", "claim_of", "claims_of", "excerpt", "find_claim", "target"]


@dataclass(frozen=True)
class Claim:
    """One claim found: the claiming word, its sentence, a short excerpt of it, and the clause it
    was asserted in (the identifiers a claim names are read off its own clause)."""

    word: str
    excerpt: str
    sentence: str
    clause: str = ""


def claim_of(a: Assertion) -> Claim:
    return Claim(word=a.word, excerpt=excerpt(a.sentence, a.start, a.end), sentence=a.sentence, clause=a.clause)


def claims_of(text: str, claim_target: ClaimTarget) -> list[Claim]:
    """Every claim in `text` that the target's work is done, in order."""
    if not may_claim(text or "", claim_target):
        return []
    return [claim_of(a) for a in assertions_in(text) if relation(a, claim_target) > 0]


def find_claim(text: str, claim_target: ClaimTarget) -> Claim | None:
    """The first claim in `text` that the target's work is done, or None."""
    found = claims_of(text, claim_target)
    return found[0] if found else None


def excerpt(sentence: str, start: int, end: int, width: int = 90) -> str:
    """The sentence, or a window of about `width` characters around text[start:end]."""
    if len(sentence) <= width:
        return sentence
    lo = max(0, min(start - width // 2, len(sentence) - width))
    hi = min(len(sentence), lo + width)
    return ("..." if lo else "") + sentence[lo:hi].strip() + ("..." if hi < len(sentence) else "")
