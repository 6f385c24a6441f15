"""Secrets said in prose: `the db password is hunter2xyz`, `my PIN is 4921`, `the api key: k3y-8f2Q`.

A secret noun (`NOUNS`: password, passwd, passphrase, passcode, pwd, secret, token, credentials; a
PIN; a qualified key: `api key`, `access key`, `private key`, ...), as a word of its own, then `is`
or `was` (optionally `now`, `still`, `set to`, `changed to`, and a colon) or `:`/`=`, then ONE token:
the value. The value is redacted only when it looks like a credential (`credential_like`): six
characters or more holding a letter and a digit, or a symbol (`!@#$%^&*+=~?|<>`) beside letters or
digits, or six digits or more; after a PIN or a passcode also 4-8 digits. Quotes and backticks
around it, and a sentence's closing punctuation after it, are not part of it.

So `the password is required`, `the password is wrong`, `the pin is on the map` stay; what is not
caught: a value of letters alone (`the password is swordfish`), one of several words (`the
passphrase is correct horse battery staple`), a value said before its noun (`hunter2xyz is my
password`), or one said without a verb or colon (`PIN 4921`). A name with `:`/`=` and any value is
judge.trace.detect's secret_field rule (`password: correct horse battery staple` goes whole); this
rule adds the verbs, the spaced names (`api key`) and PINs.

Found on the lowered text: each noun's first word (or a key's qualifier) by `str.find`, the regex
matched there only, each match bounded (a noun of at most 20 characters, a value of at most 200):
linear.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

Span = tuple[int, int, str]

NOUNS = ("password", "passwd", "passphrase", "passcode", "pwd", "secret", "token", "credential", "credentials")
KEY_QUALIFIERS = ("api", "access", "secret", "private", "signing", "encryption", "master", "session", "client",
                  "license", "licence", "account", "service")
PIN = r"pin(?:[ _-]?(?:code|number))?"  # a PIN, a PIN code, a pin_number
# Every alternative starts with a letter, so the regex engine skips to the next candidate in C.
NOUN = "(?:" + "|".join([*NOUNS, PIN, *(q + "[ _-]?key" for q in KEY_QUALIFIERS)]) + ")"
# `is`/`was` (and a few words between) and a token to the next space; or `:`, `=`, `:=` (a quote may
# close a name first) and a token to the next space, quote, `&`, `;`, `,` or `<` (`pin=4921&x=1`).
IS = r"[ \t]{1,4}(?:is|was|are|were)(?:[ \t]{1,4}(?:now|still|set[ \t]to|changed[ \t]to))?:?[ \t]{1,4}"
ASSIGN = r"[\"']?[ \t]{0,4}(?::=|[:=])[ \t]{0,4}[\"'`]?"
_PROSE = re.compile(NOUN + r"(?![a-z0-9])(?:" + IS + r"(\S{1,200}+)|" + ASSIGN + r"([^\s\"'`&<>;,]{1,200}+))")
# Every noun starts with one of these but a qualified key, which ends with `key`: found by str.find
# (in C) and the regex matched only there, not tried at every letter of the text.
_ANCHORS = ("pass", "pwd", "secret", "token", "credential", "pin")
_STRONG = frozenset("!@#$%^&*+=~?|<>")
_OPENING = "\"'`([{<"
_CLOSING = "\"'`.,;:!?)]}>"


def credential_like(value: str, numeric: bool) -> bool:
    """Does one token look like a credential (see the module docstring)? `numeric`: said of a PIN
    or a passcode, where 4-8 digits are one too."""
    if value.isascii() and value.isdigit():
        return len(value) >= 6 or (numeric and len(value) >= 4)
    if len(value) < 6:
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    if letters and digits:
        return True
    return (letters or digits) and any(c in _STRONG for c in value)


def prose_spans(text: str, lowered: str) -> Iterator[Span]:
    """(start, end, "secret_field") of every value said of a secret noun in `text` (`lowered`: the
    same text, lowered, of the same length)."""
    done = 0
    for start in noun_starts(lowered):
        if start < done or (start and lowered[start - 1].isalnum()):
            continue  # inside a word (`spin is`, `mypassword is`), or inside the last value
        m = _PROSE.match(lowered, start)
        if m is None:
            continue
        value_start, value_end = m.span(1) if m.group(1) is not None else m.span(2)
        while value_start < value_end and text[value_start] in _OPENING:
            value_start += 1
        while value_end > value_start and text[value_end - 1] in _CLOSING:
            value_end -= 1
        numeric = lowered.startswith(("pin", "passcode"), start)
        if value_end > value_start and credential_like(text[value_start:value_end], numeric):
            done = value_end
            yield value_start, value_end, "secret_field"


def noun_starts(lowered: str) -> list[int]:
    """Where a secret noun may start, in order: each anchor word, and each qualifier before `key`."""
    starts = []
    for word in _ANCHORS:
        at = lowered.find(word)
        while at >= 0:
            starts.append(at)
            at = lowered.find(word, at + 1)
    at = lowered.find("key")
    while at >= 0:
        end = at - 1 if at and lowered[at - 1] in " _-" else at
        starts += [end - len(q) for q in KEY_QUALIFIERS if lowered.endswith(q, max(0, end - len(q)), end)]
        at = lowered.find("key", at + 1)
    return sorted(starts)
