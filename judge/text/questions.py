"""Whether a sentence asks: a question, or a request for the other side's confirmation.

A sentence *is a question* when it ends with `?` (before closing quotes or brackets) or opens the
way an English question does without the mark: an auxiliary before its subject ("Should I go
ahead", "Is it OK to refund", "Could you confirm the price") or a question word ("What dose
should I use"). It *asks* when it is a question or plainly asks for a confirmation: "Please
confirm ...", "Let me know if ...", "I need your approval ...", "Do you want me to ...".

Sentences end at `.`, `!` or `?` followed by a space, a quote or the end, and at a line break, so
the point in "$80.00" ends nothing. Lexical and English only: a question phrased some other way is
not seen (a rule that needs a question then reports the call for a person to check).
"""

from __future__ import annotations

import re

from judge.text.lazy_regex import lazy

_FILLER = r"(?:(?:so|ok|okay|and|but|well|hmm+|um+|also|then|just|sorry|quick\s+question|one\s+more\s+thing)\W+)*"
_AUXILIARY = r"(?:can|could|would|will|shall|should|may|might|must|do|does|did|is|are|am|was|were|have|has|had)"
_SUBJECT = r"(?:i|we|you|it|they|he|she|this|that|there|these|those|everything|anything)"
# "Is the price final": a determiner after the auxiliary, except after "do" and "have", whose
# imperative ("Do the refund", "Have the team check") opens a sentence just as well.
_DETERMINED = r"(?:can|could|would|will|shall|should|may|might|must|does|did|is|are|was|were|has|had)"
_DETERMINER = r"(?:the|a|an|my|your|our|their|his|her|its|this|that|these|those|any|some)"
_QUESTION_OPENER = lazy(
    rf"^\W*{_FILLER}(?:{_AUXILIARY}(?:n't|\s+not)?\s+{_SUBJECT}(?!\w)|{_DETERMINED}(?:n't)?\s+{_DETERMINER}\s"
    r"|(?:what|which|who|whom|whose|when|where|why|how)(?!\w))",
    re.IGNORECASE)
_REQUEST = lazy(
    r"(?<!\w)(?:please\s+(?:confirm|approve|let\s+me\s+know)|let\s+me\s+know\s+(?:if|whether|when|how)|"
    r"confirm\s+(?:that|whether|if)|(?:need|want|require)\s+your\s+(?:confirmation|approval|ok|okay|go-ahead|consent)|"
    r"(?:do|would)\s+you\s+(?:want|like|prefer)\s+me\s+to|"
    r"waiting\s+for\s+your\s+(?:confirmation|approval|answer|reply))(?!\w)",
    re.IGNORECASE)
# A run of marks is matched once, from its first mark (the lookbehind), without backtracking (the
# possessive `++`): linear in the text, however many marks it holds.
_SENTENCE_END = lazy(r"(?<![.!?])[.!?]++(?=[\s\"'\u201d\u2019)\]]|$)|\n")
_CLOSERS = "\"'\u201d\u2019)] \t\r\n"


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`, its closing mark included."""
    text = text or ""
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        if text[start:match.end()].strip():
            spans.append((start, match.end()))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def sentence_at(text: str, start: int, end: int) -> str:
    """The sentence holding text[start:end]."""
    for lo, hi in sentences(text):
        if lo <= start < hi or (lo < end <= hi):
            return text[lo:hi]
    return text[start:end]


def is_question(sentence: str) -> bool:
    """Whether the sentence is a question (a `?` at its end, or a question's opening words)."""
    stripped = sentence.strip()
    return stripped.rstrip(_CLOSERS).endswith("?") or bool(_QUESTION_OPENER.search(stripped))


def asks(sentence: str) -> bool:
    """Whether the sentence asks the reader something: a question or a request to confirm."""
    return is_question(sentence) or bool(_REQUEST.search(sentence))


def asking_sentences(text: str) -> list[str]:
    """The sentences of `text` that ask (see `asks`)."""
    return [text[lo:hi] for lo, hi in sentences(text) if asks(text[lo:hi])]
