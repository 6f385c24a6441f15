"""Values in what the user said: paths, URLs, ids and names, versions, dates and times, amounts,
environments and browsers; and the key a value is known by ("host web-03" -> host).

A value is a span of the text with a kind. Kinds are tried in priority order and a span taken by
one kind is not read again by a later one (a URL is not also a path, an id inside a path is not
an id). Everything here is a plain regular expression or a word list (judge.draft.lexicon).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.draft.lexicon import HYPHENATED_WORDS, KIND_NOUNS, KNOWN_VALUES, STOP, content_words, verb_of, words

_MONTHS = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_EXTENSIONS = (r"ts|tsx|js|jsx|mjs|py|go|rs|java|kt|rb|php|cs|cpp|c|h|md|txt|json|ya?ml|toml|ini|cfg|conf|"
               r"sql|sh|css|scss|html|lock|xml|csv|log")
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("quoted", re.compile(r"(?<![\w'])'([^'\n]{2,60})'(?![\w'])|\"([^\"\n]{2,60})\"|`([^`\n]{2,60})`")),
    ("url", re.compile(r"\bhttps?://[^\s,;)\"'<>]+[^\s,;)\"'<>.]")),
    ("path", re.compile(r"(?<![\w@/.-])(?:\.{1,2}/|/)?(?:[\w.*-]+/)+[\w.*-]*[\w*/]"
                        r"|(?<![\w/.-])[\w.-]*\w\.(?:" + _EXTENSIONS + r")(?![\w-])")),
    ("channel", re.compile(r"(?<![\w#&/])#[A-Za-z][\w-]{1,40}(?![\w-])")),  # "#leadership" (chat channels)
    ("time", re.compile(r"(?<![\w:])\d{1,2}:\d{2}(?::\d{2})?"
                        r"(?:\s?(?:UTC|GMT|Z|[AaPp]\.?[Mm]\.?|EST|EDT|PST|PDT|CET|CEST))?"
                        r"(?![\w:])|\b\d{1,2}\s?(?:am|pm)\b(?:\s(?:est|edt|pst|pdt|utc)\b)?", re.IGNORECASE)),
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b" + _MONTHS + r"\s\d{1,2}(?:st|nd|rd|th)?\b(?:,?\s\d{4}\b)?"
                        r"|\b\d{1,2}(?:st|nd|rd|th)?\s(?:of\s)?" + _MONTHS + r"(?:\s\d{4})?\b"
                        r"|\b(?:today|tomorrow|tonight|yesterday)\b", re.IGNORECASE)),
    ("amount", re.compile(r"[$€£¥]\s?\d(?:[\d,]*\d)?(?:\.\d+)?"
                          r"|\b\d(?:[\d,]*\d)?(?:\.\d+)?\s?(?:USD|EUR|GBP|CNY|RMB|JPY|"
                          r"dollars?|euros?|yuan)\b", re.IGNORECASE)),
    ("version", re.compile(r"(?<![\w.-])[vV]?\d+\.\d+(?:\.\d+)*(?:-[\w.]*\w)?(?!\w|\.\w)"
                           r"|(?<![\w-])v\d+(?![\w-]|\.\w)")),
    ("id", re.compile(r"(?<![\w./-])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+(?![\w/-])")),
    ("code", re.compile(r"(?<![\w.-])(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{4,}(?![\w.-])")),
]
_KNOWN = {value: kind for kind, values in KNOWN_VALUES.items() for value in values}
_LOCAL = re.compile(r"\blocal(?=\s+(?:test\s+)?(?:container|environment|env|machine|instance|server|"
                    r"database|db|setup|cluster)\b)", re.IGNORECASE)
_WORD_SPAN = re.compile(r"[A-Za-z][\w-]*")


@dataclass(frozen=True)
class Value:
    text: str
    kind: str  # quoted url path channel time date amount version id code browser environment
    start: int
    end: int


def _id_ok(text: str, sentence: str, start: int, end: int) -> bool:
    """An id needs a digit or an underscore; a plain hyphenated word ("pro-monthly") counts only
    next to a noun that names a kind of value ("the pro-monthly plan", "account team-annual")."""
    if any(c.isdigit() for c in text) or "_" in text:
        return not re.fullmatch(r"\d+(?:-\d+)*", text)  # a bare number range is no id
    if text.lower() in HYPHENATED_WORDS:
        return False
    around = content_words(sentence[max(0, start - 30):start])[-2:] + content_words(sentence[end:end + 30])[:2]
    return any(w in KIND_NOUNS for w in around)


def find_values(sentence: str) -> list[Value]:
    """The values of one sentence, in text order, without overlaps."""
    found: list[Value] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(sentence):
            start, end = match.span()
            text = next((g for g in match.groups() if g), None) if kind == "quoted" else match.group()
            if not text or not free(start, end):
                continue
            text = text.strip()
            if kind == "path" and (not re.search(r"[A-Za-z]", text) or text.count("/") > 8):
                continue
            if kind == "id" and not _id_ok(text, sentence, start, end):
                continue
            found.append(Value(text, kind, start, end))
            taken.append((start, end))
    for match in _WORD_SPAN.finditer(sentence):
        known = _KNOWN.get(match.group().lower())
        if known and free(*match.span()):
            found.append(Value(match.group(), known, *match.span()))
            taken.append(match.span())
    for match in _LOCAL.finditer(sentence):
        if free(*match.span()):
            found.append(Value("local", "environment", *match.span()))
    return sorted(found, key=lambda v: v.start)


def canonical(value: Value) -> str:
    """How a value is written into the ledger: names of known kinds in lower case, the rest as written."""
    return value.text.lower() if value.kind in ("browser", "environment") else value.text


def shape(text: str) -> str:
    """`A-20931` and `A-20977` share a shape; `orders_db` and `orders_v2_shadow` do not."""
    return re.sub(r"[a-z]+", "a", re.sub(r"[A-Z]+", "A", re.sub(r"\d+", "9", text)))


def _masked(sentence: str, values: list[Value] | None) -> str:
    """The sentence with other values blanked, so that `orders_db` does not offer `db` as a noun."""
    for v in sorted(values or [], key=lambda v: -v.start):
        sentence = sentence[:v.start] + " " * (v.end - v.start) + sentence[v.end:]
    return sentence


def noun_near(sentence: str, value: Value, values: list[Value] | None = None) -> str | None:
    """The noun that names the value's kind: the nearest kind noun within three words of it, before
    ("host web-03"; an appositive's comma allowed: "a shadow database, orders_v2_shadow") or after
    ("the pro-monthly plan"); the nearer one wins, before on a tie."""
    text = _masked(sentence, [v for v in values or [] if v != value])
    before = words(text[max(0, value.start - 40):value.start])[-3:]
    after = words(text[value.end:value.end + 30])[:3]
    best: tuple[int, int, str] | None = None
    for distance, word in enumerate(reversed(before), start=1):
        if word in KIND_NOUNS:
            best = min(best or (9, 9, ""), (distance, 0, word))
    for distance, word in enumerate(after, start=1):
        if word in KIND_NOUNS:
            best = min(best or (9, 9, ""), (distance, 1, word))
    return best[2] if best else None


def key_for(sentence: str, value: Value, values: list[Value] | None = None) -> str:
    """The key a fact with this value is drafted under."""
    if value.kind in ("browser", "environment", "amount", "date", "time", "channel"):
        return value.kind
    noun = noun_near(sentence, value, values)
    if value.kind == "version":
        words = content_words(sentence[max(0, value.start - 20):value.start])
        if words and words[-1].isalpha() and verb_of(words[-1]) is None:
            return words[-1]  # "Python 3.11" -> python, "schema v2" -> schema
    if noun:
        return noun
    return {"url": "url", "path": "path", "time": "time", "date": "date", "amount": "amount",
            "version": "version", "quoted": "value", "code": "code"}.get(value.kind, "id")


def context_words(sentence: str, value: Value, width: int = 5) -> tuple[str, ...]:
    """Content words around a value (to recognise the fact when the user refers to it later)."""
    before = content_words(sentence[:value.start])[-width:]
    after = content_words(sentence[value.end:])[:width]
    return tuple(w for w in before + after if w not in STOP)
