"""Cheap tests that tell whether a detector of judge.trace.detect can find anything in a text.

Both the line precheck (judge.trace.redact) and the detectors run them: a detector whose gate is
closed costs one C-level scan, not a regex tried at every position. Each gate is a superset of its
detector: it may open when the detector then finds nothing, never stay closed when it would.
"""

from __future__ import annotations

import re
from typing import Iterator

# Literals the key, JWT and PEM detectors need, as written (they match case-sensitively); `\u`
# escapes, which could hide any character in a raw JSON line, and `+digit` (phones) too. The regex
# starts with one class of rarer characters, so the engine skips every other character in C; each
# branch then looks behind for the rest of its literal (an alternation of literals would be tried
# at every position instead).
TRIGGER = re.compile(
    r"[JNEAS\\+_k-](?:(?<=eyJ)|(?<=-----BEGIN)|(?<=pypi-AgE)|(?<=hooks\.slack)"
    r"|(?<=A)(?:KIA|SIA|BIA|CCA|3T|C[0-9a-f]{32}|Iza|ccountKey=)|(?<=S)(?:K[0-9a-f]{32}|G\.[\w-]{22}\.)"
    r"|(?<=-)(?:(?<=sk-)[A-Za-z0-9_-]{16}|(?<=xox[abposre]-)|(?<=glpat-)|(?<=gldt-)|(?<=glrt-)|(?<=glft-)"
    r"|(?<=glsoat-)|(?<=glcbt-)|(?<=glimt-)|(?<=sq0csp-)|(?<=sq0atp-))"
    r"|(?<=_)(?:(?<=[sr]k_)(?:live|test)_|(?<=github_pat_)|(?<=gh[pousr]_)|(?<=whsec_)|(?<=hf_)[A-Za-z0-9]{30}"
    r"|(?<=npm_)[A-Za-z0-9]{36})|(?<=\\)u|(?<=\+)\d)"
).search
# An IBAN starts with two capital letters and two digits: bytes mapped to A/0/x first (in C).
IBAN_CLASS = bytes(0x41 if 0x41 <= i <= 0x5A else 0x30 if 0x30 <= i <= 0x39 else 0x78 for i in range(256))
IBAN_SHAPE = re.compile(r"[A-Z]{2}\d\d(?: ?[A-Z0-9]){11}").search
# A number needs 9 digits or more with separators between: a run of 9 bytes of [0-9 .()-] first
# (one table lookup per byte, in C), then the shapes of judge.trace.numbers.NUMBER_SHAPE on it.
# `\d` also takes non-ASCII digits, so every byte of a non-ASCII character counts for the run.
DIGIT_CLASS = bytes(0x30 if i >= 0x80 or chr(i) in "0123456789 .()-" else 0x78 for i in range(256))
DIGIT_RUN = b"0" * 9
RUN_END = re.compile(rb"0*").match
# Under IGNORECASE these four match an ASCII letter of a field name (`re` folds them so), and
# `str.lower` would not turn them into it (İ even becomes two characters): folded first, a lowered
# text keeps every index of the original.
FOLDS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
# Secret names (judge.trace.names.WORD_HINT): the hint words found with `str.find`.
_HINT_WORDS = ("pwd", "secret", "token", "auth", "credential", "cookie", "contrase")
_PASS_AFTER = ("passw", "passphrase", "passcode")
_PASS_BEFORE = tuple(q + sep for q in ("db", "database", "key") for sep in ("", "_", "-"))
_KEY_BEFORE = tuple(q + sep for q in ("api", "service", "account", "db", "database", "priv", "private", "client",
                                      "access", "signing", "encryption", "master", "session")
                    for sep in ("", "_", "-"))


def lower(text: str) -> str:
    """`text` lowered with the same length (see FOLDS)."""
    return text.lower() if text.isascii() else text.translate(FOLDS).lower()


def hint_spans(lowered: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every hint of a secret name in a lowered text (all of WORD_HINT's words)."""
    for word in _HINT_WORDS:
        at = lowered.find(word)
        while at >= 0:
            yield at, at + len(word)
            at = lowered.find(word, at + 1)
    yield from _qualified(lowered, "pass", _PASS_BEFORE, _PASS_AFTER)
    yield from _qualified(lowered, "key", _KEY_BEFORE, ())


def _qualified(lowered: str, word: str, before: tuple[str, ...], after: tuple[str, ...]) -> Iterator[tuple[int, int]]:
    """`word` where a qualifier ends right before it (`db_pass`, `api-key`) or a longer word starts
    with it (`passw`)."""
    at = lowered.find(word)
    while at >= 0:
        end = at + len(word)
        if after and lowered.startswith(after, at):
            yield at, end
        elif lowered.endswith(before, max(0, at - 11), at):
            yield max(0, at - 11) + next(len(lowered[max(0, at - 11):at]) - len(q) for q in before
                                         if lowered.endswith(q, max(0, at - 11), at)), end
        at = lowered.find(word, end)


def digit_runs(encoded: bytes) -> Iterator[tuple[int, int]]:
    """Byte spans of the runs of 9 or more [0-9 .()-] bytes (character spans for ASCII text)."""
    classes = encoded.translate(DIGIT_CLASS)
    at = classes.find(DIGIT_RUN)
    while at >= 0:
        end = RUN_END(classes, at).end()
        yield at, end
        at = classes.find(DIGIT_RUN, end)


def iban_gate(encoded: bytes) -> bool:
    return b"AA00" in encoded.translate(IBAN_CLASS)
