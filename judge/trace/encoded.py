"""Secrets hidden in encodings: base64 runs are decoded for detection, and JWTs are found by their
structure.

A base64 run (standard or URL-safe alphabet, 16 characters to 4 MB, not inside a longer word) is
*plausible* when it mixes capital and small letters and its length can be base64 (not 1 more than a
multiple of 4); it is decoded, and when the bytes are UTF-8 text of printable characters the
detectors run on that text (twice nested at most). A secret inside makes the whole run one span of
the secret's kind. Hex digests, UUIDs and lower-case identifiers are never plausible; a mixed-case
identifier decodes to bytes that are not text, and is left alone.

A JWT is three base64url segments joined by dots whose first decodes to a JSON object (`{...}`),
whatever its spacing: `eyJ` (`{"`), `eyA` (`{ `) and `ewo` (`{` and a newline) alike.

`decoded_text` and the run pattern are shared with the line precheck, which holds the same rules
(it may say yes more often, never less).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

Span = tuple[int, int, str]
MAX_NESTING = 2  # base64 inside base64 inside the text, at most
RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}+={0,2}")
# One table lookup per byte (in C): the base64 alphabet `b`, anything else `x`; a run is then 16 `b`s
# in a row, found by `bytes.find` (ASCII text; other text takes RUN).
_CLASS = bytes(0x62 if chr(i).isascii() and (chr(i).isalnum() or chr(i) in "+/_-") else 0x78 for i in range(256))
_SIXTEEN = b"b" * 16
_RUN_END = re.compile(rb"b*").match
JWT = re.compile(r"e[yw](?<![A-Za-z0-9_-]e[yw])[A-Za-z0-9_-]{2,}+\.[A-Za-z0-9_-]{2,}+\.[A-Za-z0-9_-]*+")
JWT_PAIR = re.compile(r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{2,}+\.[A-Za-z0-9_-]{2,}+(?![.A-Za-z0-9_-])")
_URLSAFE = bytes.maketrans(b"-_", b"+/")


def _b64(run: str) -> bytes | None:
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    try:
        return base64.b64decode(body.encode("ascii").translate(_URLSAFE) + b"=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def runs(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every run of 16 or more base64 characters (and its `=` padding), in order."""
    if not text.isascii():
        for match in RUN.finditer(text):
            yield match.span()
        return
    classes = text.encode("ascii").translate(_CLASS)
    at = classes.find(_SIXTEEN)
    while at >= 0:  # the first of 16 `b`s in a row is a run's start (else it was found earlier)
        run = _RUN_END(classes, at)
        assert run is not None  # a run of 16 starts at `at`, so the pattern matches there
        end = run.end()
        stop = end
        while stop < len(text) and stop - end < 2 and text[stop] == "=":
            stop += 1
        yield at, stop
        at = classes.find(_SIXTEEN, end)


def plausible(run: str) -> bool:
    """Could this run be base64 of text: capital and small letters both, a possible length."""
    body = run.rstrip("=")
    return len(body) % 4 != 1 and body.upper() != body and body.lower() != body  # both cases (in C)


def decoded_text(run: str) -> str | None:
    """The text a plausible run encodes (UTF-8, printable but for tabs and line breaks), else None."""
    if not plausible(run):
        return None
    data = _b64(run)
    if data is None or len(data) < 8:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text.replace("\n", "").replace("\r", "").replace("\t", "").isprintable():
        return None
    return text


def encoded_spans(text: str, depth: int, detect: Callable[[str, int], list[Span]]) -> Iterator[Span]:
    """Every plausible base64 run of `text` whose decoded text holds a secret (`detect` finds it)."""
    if depth >= MAX_NESTING or len(text) < 16:
        return
    for start, end in runs(text):
        inner = decoded_text(text[start:end])
        if inner is not None:
            found = detect(inner, depth + 1)
            if found:
                yield start, end, found[0][2]


def jwt_spans(text: str) -> Iterator[Span]:
    """Three base64url segments whose first decodes to a JSON object; or two, `eyJ` first, both
    decoding to one (an unsigned token without its last dot, as detect-secrets flags it)."""
    if "." not in text or ("ey" not in text and "ew" not in text):
        return
    for match in JWT.finditer(text):
        header = match.group().split(".", 1)[0]
        if _json_object(header):
            yield match.start(), match.end(), "jwt"
    if "eyJ" in text:
        for match in JWT_PAIR.finditer(text):
            header, payload = match.group().split(".")
            if _json_object(header) and _json_object(payload):
                yield match.start(), match.end(), "jwt"


def _json_object(segment: str) -> bool:
    """Does a base64url segment decode to bytes that open a JSON object?"""
    cut = len(segment) - len(segment) % 4 if len(segment) % 4 == 1 else len(segment)
    data = _b64(segment[:cut])
    return data is not None and data.lstrip().startswith(b"{")
