"""Cheap tests that tell whether a detector of judge.trace.detect can find anything in a text.

Both the line precheck (judge.trace.redact) and the detectors run them: a detector whose gate is
closed costs one C-level scan, not a regex tried at every position. Each gate is a superset of its
detector: it may open when the detector then finds nothing, never stay closed when it would.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Literals the key, JWT and PEM detectors need, as written (they match case-sensitively); `\u`
# escapes, which could hide any character in a raw JSON line, and `+digit` (phones) too. The regex
# starts with one class of rarer characters, so the engine skips every other character in C; the
# branches of `-` and `_` (the common ones: dates, `tool-call`, `call_id`) first test the one
# character before, then look behind for the rest of a literal (an alternation of literals would
# be tried at every position instead).
TRIGGER = re.compile(
    r"[JNEASR\\+_-](?:"
    r"(?<=[abekoprst]-)(?:(?<=sk-)[A-Za-z0-9_-]{16}|(?<=xox[abposre]-)|(?<=xapp-)|(?<=glpat-)|(?<=gldt-)|(?<=glrt-)"
    r"|(?<=glft-)|(?<=glsoat-)|(?<=glcbt-)|(?<=glimt-)|(?<=glptt-)|(?<=glagent-)|(?<=gloas-)|(?<=sq0csp-)"
    r"|(?<=sq0atp-))"
    r"|(?<=[kpousrtcfm]_)(?:(?<=[sr]k_)(?:live|test)_|(?<=github_pat_)|(?<=gh[pousr]_)|(?<=whsec_)"
    r"|(?<=hf_)[A-Za-z0-9]{30}|(?<=npm_)[A-Za-z0-9]{36})"
    r"|(?<=eyJ)|(?<=-----BEGIN)|(?<=pypi-AgE)|(?<=\\)u|(?<=\+)\d|(?<=GR)1348941"
    r"|(?<=A)(?:KIA|SIA|BIA|CCA|3T|C[0-9a-z]{32}|Iza|ccountKey=|KC[A-Za-z0-9]{10}|P[0-9A-F][A-Za-z0-9]{8})"
    r"|(?<=S)(?:K[0-9a-z]{32}|G\.[\w-]{22}\.))"
).search
# One table lookup per byte (in C) maps a text to classes. DIGIT_CLASS: digits and the number
# separators ` .()/-` `0` (every byte of a non-ASCII character too: `\d` takes non-ASCII digits),
# the rest `x`: a number needs a run of 9 of them (`bytes.find`, in C). CAPITAL_CLASS: capital
# letters `A`, digits (and non-ASCII bytes) `0`, the rest `x`: an IBAN starts `AA00`, and a run
# must hold 9 digits (`bytes.count`, in C) to be a number.
DIGIT_CLASS = bytes(0x30 if i >= 0x80 or chr(i) in "0123456789 .()/-" else 0x78 for i in range(256))
CAPITAL_CLASS = bytes(0x41 if 0x41 <= i <= 0x5A else 0x30 if i >= 0x80 or 0x30 <= i <= 0x39 else 0x78
                      for i in range(256))
DIGIT_RUN = b"0" * 9
# DIGIT_CLASS without its separators (deleted by `bytes.translate`): 9 digits in a row there is the
# cheapest test a number needs; line ends stay.
DIGITS_ONLY = bytes(0x30 if i >= 0x80 or 0x30 <= i <= 0x39 else 0x0A if i == 0x0A else 0x78 for i in range(256))
SEPARATORS = b" .()/-"
RUN_END = re.compile(rb"0*").match
IBAN_SHAPE = re.compile(r"[A-Z]{2}\d\d(?:[ /]?[A-Z0-9]){11}").search
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
    """`text` lowered with the same length (see FOLDS; `str.translate` is slow: only when needed)."""
    if text.isascii() or not ("\u0130" in text or "\u0131" in text or "\u017f" in text or "\u212a" in text):
        return text.lower()
    return text.translate(FOLDS).lower()


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


class Classified:
    """The byte classes of a text, made once, for the number and IBAN gates."""

    __slots__ = ("encoded", "_capitals", "_digits")

    def __init__(self, text: str) -> None:
        self.encoded = text.encode("utf-8", "surrogatepass")
        self._capitals: bytes | None = None
        self._digits: bytes | None = None

    def digits_only(self) -> bytes:
        if self._digits is None:
            self._digits = self.encoded.translate(DIGITS_ONLY, SEPARATORS)
        return self._digits

    @property
    def capitals(self) -> bytes:
        if self._capitals is None:
            self._capitals = self.encoded.translate(CAPITAL_CLASS)
        return self._capitals

    def digit_runs(self) -> Iterator[tuple[int, int]]:
        """Byte spans of the runs of digits and separators holding 9 digits or more (character
        spans for ASCII text)."""
        runs = self.encoded.translate(DIGIT_CLASS)
        at = runs.find(DIGIT_RUN)
        while at >= 0:
            run = RUN_END(runs, at)
            assert run is not None  # `0*` matches everywhere
            end = run.end()
            if self.capitals.count(b"0", at, end) >= 9:
                yield at, end
            at = runs.find(DIGIT_RUN, end)

    def iban(self) -> bool:
        return b"AA00" in self.capitals
