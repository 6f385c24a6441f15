"""The words of a text as the claims reader sees them: each word lowercased with its offsets, the
punctuation before it (what opens a clause) and the sentence end after it, and the sentences they
make. Linear in the text: one pass of `str.split` (no regular expression on trace text)."""

from __future__ import annotations

from dataclasses import dataclass

CLAUSE_MARKS = frozenset(",;()[]{}—–")


@dataclass(slots=True)
class Tok:
    word: str  # lowercased, apostrophe normalised; a hyphenated word joined ("e-mail" -> email)
    value: str  # identifiers, paths, numbers: the token as a value ("" for a plain word)
    start: int
    end: int
    mark: str  # what opens a clause before it: a boundary word, a punctuation mark, or ""
    ends: str = ""  # the sentence's closing mark after it (".", "!", "?"), or ""


def _chunks(text: str) -> list[tuple[int, str]]:
    """(offset, chunk) of each run of non-space characters: str.split, with the offsets found again
    in one forward pass."""
    out, at = [], 0
    for chunk in text.split():
        at = text.find(chunk, at)
        out.append((at, chunk))
        at += len(chunk)
    return out


def sentence_groups(text: str) -> list[tuple[int, int, list[Tok]]]:
    """(start, end, tokens) of each sentence of `text`: it ends at . ! ? before a space, or at a line
    break. One pass over the text's chunks."""
    out: list[tuple[int, int, list[Tok]]] = []
    at = 0
    for line in text.split("\n"):
        group: list[Tok] = []
        for tok in tokens(line, at):
            group.append(tok)
            if tok.ends:
                out.append((group[0].start, tok.end, group))
                group = []
        if group:
            out.append((group[0].start, group[-1].end, group))
        at += len(line) + 1
    return out


_SEPARATORS = str.maketrans({c: " " for c in "./_:@+-"})
_SPLITS = str.maketrans({c: " " for c in CLAUSE_MARKS})


def _core(chunk: str) -> tuple[int, int]:
    """The start and end of a chunk's word: without the punctuation around it (a leading `#`, `$` or
    `@` is kept: "#57", "$45.00")."""
    lo, hi = 0, len(chunk)
    while lo < hi and not (chunk[lo].isalnum() or chunk[lo] in "#$@"):
        lo += 1
    while hi > lo and not chunk[hi - 1].isalnum():
        hi -= 1
    return lo, hi


def tokens(line: str, base: int = 0) -> list[Tok]:
    """The words of a line (offsets from `base`), each with the punctuation before it as a mark and
    the sentence end after it."""
    out: list[Tok] = []
    gap = ""
    for offset, chunk in _chunks(line):
        offset += base
        if chunk.isalpha():  # the common case: a plain word
            out.append(Tok(chunk.lower(), "", offset, offset + len(chunk), _mark(gap) if gap else ""))
            gap = ""
            continue
        split = chunk.translate(_SPLITS)
        pieces = split.split(" ") if split != chunk else [chunk]
        at = offset
        for n, piece in enumerate(pieces):
            if n:
                gap += ","
            lo, hi = _core(piece)
            if lo < hi:
                out.append(_token(piece[lo:hi], at + lo, at + hi, gap + piece[:lo]))
                gap = piece[hi:]
            else:
                gap += piece
            at += len(piece) + 1
        closing = chunk.rstrip("\"')]*_")
        if out and closing.endswith((".", "!", "?")) and out[-1].start >= offset:
            out[-1].ends = closing[-1]
    return out


def _mark(gap: str) -> str:
    """What the punctuation between two words opens: a head (":"), a clause (","), or nothing."""
    if ":" in gap:
        return ":"
    return "," if gap.translate(_SPLITS) != gap or gap.strip() in ("-", "--") else ""


def _token(raw: str, start: int, end: int, gap: str) -> Tok:
    low = raw.replace("’", "'").lower()
    mark = _mark(gap) if gap else ""
    if low.isalpha():
        return Tok(low, "", start, end, mark)
    parts = low.translate(_SEPARATORS).split()
    if len(parts) > 1 and all(p.isalpha() for p in parts) and not any(c in low for c in "./_:@+"):
        return Tok(low.replace("-", ""), low, start, end, mark)  # "e-mail", "checkout-api"
    if len(parts) > 1 or any(ch.isdigit() for ch in low) or low[:1] in "#$@":
        value = low.split("'")[0]
        return Tok(value.lstrip("#$@"), value, start, end, mark)
    return Tok(low, "", start, end, mark)
