"""The copy of a text that detection runs on, and the way back to the text itself.

Secrets are found on a *folded* copy and redacted in the original: the copy is NFKC-normalised
character by character (full-width `＠` and digits become `@` and `0-9`, no-break and thin spaces
U+00A0, U+202F, U+2009 become spaces), Unicode hyphens become `-`, zero-width characters, the soft
hyphen and bidi controls are dropped (a key split by U+200B is one key again), and `%XX` runs are
URL-decoded (`jane%40example.com`) and `\\uXXXX` escapes written out in text (JSON quoted inside
prose) decoded, then folded the same way. `Folded.original(start, end)` maps a span of the copy back to
the span of the original that produced it, so what is replaced is what was written, invisible
characters included. Nothing downstream normalises text again: a renderer that folded the text after
redaction would re-assemble what the redactor saw split (it escapes invisible characters instead).

Linear: ASCII text without `%` is its own copy; elsewhere only runs that change are rebuilt, and the
map is a list of edits (bisected), not a table per character.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass, field
from urllib.parse import unquote_to_bytes

# Dropped from the copy: zero-width characters, word joiner, BOM, Mongolian vowel separator, soft
# hyphen, left-to-right and right-to-left marks and the bidi embeddings, overrides and isolates.
INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u180e\u00ad\u200e\u200f"
                      "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
HYPHENS = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d")
_CHANGING = re.compile(r"[^\x00-\x7f]+|(?:%[0-9A-Fa-f]{2})+|(?:\\u[0-9A-Fa-f]{4})+")


def _fold_char(ch: str) -> str:
    if ch in INVISIBLE:
        return ""
    if ch in HYPHENS:
        return "-"
    return unicodedata.normalize("NFKC", ch)


@dataclass
class Folded:
    """The copy of `source` detection runs on; `edits` are (copy start, copy end, source start,
    source end) of every stretch that differs, in order (empty: the copy is the source)."""

    source: str
    text: str
    edits: list[tuple[int, int, int, int]] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list, repr=False)

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the source that produced copy[start:end] (whole edits included)."""
        if not self.edits:
            return start, end
        return self._map(start, False), self._map(end, True)

    def _map(self, pos: int, is_end: bool) -> int:
        if not self._starts:
            self._starts = [e[0] for e in self.edits]
        i = bisect_right(self._starts, pos - 1 if is_end else pos) - 1
        if i < 0:
            return pos
        copy_start, copy_end, src_start, src_end = self.edits[i]
        if is_end and copy_start < pos <= copy_end or not is_end and copy_start <= pos < copy_end:
            return src_end if is_end else src_start
        return src_end + (pos - copy_end)


def _decoded(run: str) -> str:
    """A run of `%XX` (UTF-8 bytes) or of `\\uXXXX` escapes (UTF-16, surrogate pairs joined), folded."""
    if run[0] == "%":
        text = unquote_to_bytes(run).decode("utf-8", "replace")
    else:
        units = bytes.fromhex("".join(run[i + 2:i + 6] for i in range(0, len(run), 6)))
        text = units.decode("utf-16-be", "replace")
    return "".join(_fold_char(ch) for ch in text)


def _run_edits(run: str, offset: int) -> list[tuple[int, int, str]]:
    """(source start, source end, replacement) of the characters of one run that fold differently."""
    if run[0] in "%\\":
        return [(offset, offset + len(run), _decoded(run))]
    if unicodedata.is_normalized("NFKC", run) and not any(ch in INVISIBLE or ch in HYPHENS for ch in run):
        return []
    out = []
    for i, ch in enumerate(run):
        folded = _fold_char(ch)
        if folded != ch:
            out.append((offset + i, offset + i + 1, folded))
    return out


def fold(text: str) -> Folded:
    """The folded copy of `text` and its map back (see the module docstring)."""
    if text.isascii() and "%" not in text and "\\u" not in text:
        return Folded(text, text)
    pieces: list[str] = []
    edits: list[tuple[int, int, int, int]] = []
    pos = copied = 0
    for match in _CHANGING.finditer(text):
        for start, end, replacement in _run_edits(match.group(), match.start()):
            pieces.append(text[pos:start])
            copied += start - pos
            pieces.append(replacement)
            edits.append((copied, copied + len(replacement), start, end))
            copied += len(replacement)
            pos = end
    if not edits:
        return Folded(text, text)
    pieces.append(text[pos:])
    return Folded(text, "".join(pieces), edits)


def folded_text(text: str) -> str:
    """Only the folded copy (the line precheck's view of a raw line)."""
    return fold(text).text
