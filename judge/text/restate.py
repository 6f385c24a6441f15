"""When does a text *restate* a reference statement, so that the fact-consistency model may judge it?

The model (judge.text.consistency) learnt what an *edit* of a sentence looks like: a copy with a
name, number, word or negation changed, a clause inserted or dropped. A restatement in other words
("nothing more is drafted for it" for "no further refund may be drafted") reads to it as lost
words. So the summary audit (judge.summaries.facts) and the local judge ask it only about a
statement that reads as an edit of the reference: it keeps at least RESTATED of the reference's
tokens in order and rewrites no run longer than LONGEST_REWRITE tokens (judge.text.align.edit_shape).

Both numbers were chosen on the SummEdits evaluation split and the training split of the project's
labelled summaries (labels/summaries), never on their test splits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from judge.text import cues
from judge.text.align import edit_shape
from judge.text.consistency import split_sentences

RESTATED = 0.5
LONGEST_REWRITE = 4
MIN_WORDS = 4
_ALPHA = re.compile(r"[A-Za-z]{2,}")
_CLAUSE = re.compile(r":\s+|\s+[-–—]\s+")


def is_sentence(value: Any) -> bool:
    """One value of at least MIN_WORDS words with letters ("tests/checkout.spec.ts" is one word,
    "01:00-03:00 UTC, 2024-05-06" has one): the model judges sentences, the value rules the rest."""
    values = cues.scalar_values(value)
    return len(values) == 1 and sum(bool(_ALPHA.search(w)) for w in values[0].split()) >= MIN_WORDS


def statements(text: str) -> list[str]:
    """A text's statements: its sentences, cut again at ": " and at a spaced dash, which join two
    statements ("The last CI run deployed to staging - that is history, not an instruction")."""
    out = []
    for sentence in split_sentences(text):
        out += [part.strip() for part in _CLAUSE.split(sentence) if len(part.split()) >= 3] or [sentence]
    return out


def restating(reference: str, candidates: Sequence[str]) -> str | None:
    """The candidate statement that reads as an edit of `reference`; of several, the one keeping
    the most of it. None when no candidate restates it."""
    best: tuple[float, str] | None = None
    for statement in candidates:
        kept, rewrite = edit_shape(reference, statement)
        if kept >= RESTATED and rewrite <= LONGEST_REWRITE and (best is None or kept > best[0]):
            best = (kept, statement)
    return best[1] if best else None
