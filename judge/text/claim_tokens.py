"""The words of a text as the claims reader sees them: each word lowercased with its offsets, the
punctuation before it (what opens a clause) and the sentence end after it, and the sentences they
make. Linear in the text: one pass of `str.split` (no regular expression on trace text)."""

from __future__ import annotations

CLAUSE_MARKS = frozenset(",;()[]{}—–")


class Tok:
    """One word. A plain class, not a dataclass: compiled (judge.compiled), a dataclass keeps the
    `__init__` the dataclasses module writes in Python, and every word of a text paid for it."""

    __slots__ = ("word", "value", "start", "end", "mark", "ends")

    def __init__(self, word: str, value: str, start: int, end: int, mark: str, ends: str = "") -> None:
        self.word = word  # lowercased, apostrophe normalised; a hyphenated word joined ("e-mail" -> email)
        self.value = value  # identifiers, paths, numbers: the token as a value ("" for a plain word)
        self.start = start
        self.end = end
        self.mark = mark  # what opens a clause before it: a boundary word, a punctuation mark, or ""
        self.ends = ends  # the sentence's closing mark after it (".", "!", "?"), or ""

    def __repr__(self) -> str:
        return f"Tok({self.word!r}, {self.value!r}, {self.start}, {self.end}, {self.mark!r}, {self.ends!r})"


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
    the sentence end after it. One pass of `str.split`, each chunk's offset found going forward."""
    out: list[Tok] = []
    gap = ""
    at = 0
    for chunk in line.split():
        at = line.find(chunk, at)
        offset = at + base
        at += len(chunk)
        if chunk.isalpha():  # the common case: a plain word
            out.append(Tok(chunk.lower(), "", offset, offset + len(chunk), _mark(gap) if gap else ""))
            gap = ""
            continue
        gap = _pieces(chunk, offset, gap, out)
    return out


def _pieces(chunk: str, offset: int, gap: str, out: list[Tok]) -> str:
    """The tokens of a chunk that is not one plain word ("PR #57.", "e-mail", "(done),"), appended
    to `out`; the punctuation left after its last word is returned (the next word's gap)."""
    count = len(out)
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
    if len(out) > count and closing.endswith((".", "!", "?")):
        out[-1].ends = closing[-1]
    return gap


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
