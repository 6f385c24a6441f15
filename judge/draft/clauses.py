"""User messages -> sentences -> clauses, each knowing its sentence, its head and its values.

"Keep the original database: do not migrate or drop anything in orders_db." is one sentence of two
clauses: the head "Keep the original database" (it names the restriction) and the body "do not
migrate or drop anything in orders_db" (it says what is forbidden). Splits happen at `;`, before ", I'll", at a
colon after a short head, and before each restriction cue ("..., but do not deploy anything"), so
that every clause carries at most one cue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from judge.draft.values import Value, find_values
from judge.text.cues import sentences

PROHIBIT = re.compile(
    r"\b(?:do not|don't|dont|never|must not|mustn't|may not|cannot|can't|should not|shouldn't|shall not|"
    r"(?:are|is) not (?:allowed |permitted )?to|not allowed to|no longer|you(?:'re| are) not to|"
    r"(?:are|is) not supposed to|under no circumstances(?: (?:should|may|can|will|are) you(?: to)?)?|"
    r"refrain from|avoid|stay away from|hands off)\s+", re.IGNORECASE)
# A prohibition stated of its object: "Production is off limits", "admin rights are out of the question".
FORBIDDEN_STATE = re.compile(
    r"\b(?:is|are|'s|'re|stays?|remains?)\s+(?:strictly\s+|absolutely\s+|completely\s+|totally\s+)?"
    r"(?:off[- ]limits|out of bounds|out of the question|forbidden|prohibited|not allowed|not permitted|banned|"
    r"not an option)\b", re.IGNORECASE)
NO_NOUN = re.compile(r"\bno\s+(?:more\s+)?([a-z]+)\b", re.IGNORECASE)
PERMIT = re.compile(r"\b(?:you\s+)?(?:may|can|are allowed to|are free to|feel free to|are welcome to)\s+"
                    r"(?!only\b|not\b)", re.IGNORECASE)
FREELY = re.compile(r"\b(?:freely|as you like|as needed|if needed|as much as you (?:like|want)|at will)\b",
                    re.IGNORECASE)
ONLY = re.compile(r"(?<!\bif and )\bonly\b(?! if\b)", re.IGNORECASE)  # not "if and only if"
_YES_WORDS = (r"(?:confirm(?:ed)?|approve[ds]?|sa(?:y|id) (?:so|yes|ok|okay|go)|signed off|sign off|"
              r"give (?:you )?(?:the )?(?:go-ahead|ok|okay)|given (?:you )?(?:the )?(?:go-ahead|ok|okay)|"
              r"ok(?:'d|ed)? it|okay(?:'d|ed)? it)")
_MY_YES = r"(?:explicit\s+)?(?:approval|confirmation|permission|go-ahead|ok|okay|sign-off|yes)"
CONFIRM = re.compile(
    r"\b(?:until|unless|before|without|till)\s+(?:I|we)(?:'ve|\s+have)?\s+" + _YES_WORDS +
    r"|\bask (?:me|for (?:my )?(?:confirmation|approval|permission))(?: first| before)?"
    r"|\b(?:wait for|get|need|ask for|have) my " + _MY_YES + r"(?: first| before)?"
    r"|\bonly (?:once|after|when) (?:I|we)(?:'ve| have)? (?:confirm|approve|say)"
    r"|\bwithout my " + _MY_YES +
    r"|\b(?:check|confirm) with me(?: first| before)?|\brun it by me\b|\bconfirm (?:first|before)\b"
    r"|\bwithout (?:asking|checking with|consulting) (?:me|us)\b", re.IGNORECASE)
RESERVED = re.compile(r"\b(?:I|we)(?:'ll| will)?\s+([a-z]+)\s+(?:[a-z]+\s+){0,3}?(?:myself|ourselves)\b|"
                      r"\bonly (?:I|we) (?:may|can|will|am allowed to)\s+([a-z]+)|\bleave (?:the )?"
                      r"([a-z]+)(?:ing)?\b[^.]{0,20}\bto me\b", re.IGNORECASE)
KEEP = re.compile(r"^\s*(?:please\s+)?keep\b|\bleave\b[^.,;]{1,40}\b(?:untouched|alone|as it is|intact)\b|"
                  r"\buntouched\b", re.IGNORECASE)
# "Keep Lee out of the #leadership channel": what follows "out of" is forbidden ground.
KEEP_OUT = re.compile(r"\bkeep\b[^.,;]{1,40}?\bout of\b", re.IGNORECASE)
READ_ONLY = re.compile(r"\bread[- ]only\b", re.IGNORECASE)
_SPLIT_BEFORE = re.compile(r",?\s+(?:but|and|then)\s+(?=(?:do not|don't|never|must not|you may|you can|"
                           r"only)\b)|;\s*|,\s+(?=(?:I|we)(?:'ll| will)\s)", re.IGNORECASE)


@dataclass
class Clause:
    text: str
    sentence: str
    start: int  # offset of the clause in its sentence
    event: str
    turn: int
    head: str | None = None  # the short head before a colon, for a body clause
    is_head: bool = False
    values: list[Value] = field(default_factory=list)  # values inside this clause (offsets in the sentence)

    def quote(self) -> str:
        return self.text.strip().rstrip(".")


def _head_split(sentence: str) -> tuple[str, str] | None:
    """("Keep the original database", "do not migrate ...") for a short head before a colon."""
    match = re.match(r"^([^:]{2,60}):\s+(.+)$", sentence)
    if match is None or len(match.group(1).split()) > 7 or "//" in match.group(2)[:3]:
        return None
    return match.group(1), match.group(2)


def split_sentence(sentence: str, event: str, turn: int) -> list[Clause]:
    values = find_values(sentence)
    pieces: list[tuple[int, str, str | None, bool]] = []
    head = _head_split(sentence)
    if head is not None:
        pieces.append((0, head[0], None, True))
        body_start = sentence.index(head[1], len(head[0]))
        pieces += [(body_start + s, t, head[0], False) for s, t in _cut(head[1])]
    else:
        pieces += [(s, t, None, False) for s, t in _cut(sentence)]
    clauses = []
    for start, text, parent, is_head in pieces:
        end = start + len(text)
        inside = [v for v in values if v.start >= start and v.end <= end]
        clauses.append(Clause(text, sentence, start, event, turn, parent, is_head, inside))
    return clauses


def _cut(text: str) -> list[tuple[int, str]]:
    """Cut at `;` and before a second restriction cue, keeping offsets."""
    out, last = [], 0
    for match in _SPLIT_BEFORE.finditer(text):
        if match.start() > last and text[last:match.start()].strip():
            out.append((last, text[last:match.start()]))
        last = match.end()
    if text[last:].strip():
        out.append((last, text[last:]))
    return out


def clauses_of(text: str, event: str, turn: int) -> list[Clause]:
    return [c for s in sentences(text) for c in split_sentence(s, event, turn)]
