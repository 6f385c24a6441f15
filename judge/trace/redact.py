"""Redact secrets and personal data before anything downstream (judge, cache, report) sees them.

Kinds: private keys, JWTs, bearer tokens, API keys of well-known providers, values of secret-named
fields, card numbers (only when the Luhn check passes, so order ids survive), phone numbers and
e-mail addresses. Only counts by kind are recorded, never the values.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

_PATTERNS = [
    ("private_key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),
    ("bearer_token", r"(?i:bearer)\s+[A-Za-z0-9._~+/=-]{12,}"),
    ("api_key", r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}"
                r"|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|sk_(?:live|test)_[0-9A-Za-z]{16,}"
                r"|glpat-[0-9A-Za-z_-]{20,})"),
    # The local part takes every RFC 5322 atext character, so `a{b@x.org` is caught whole.
    ("email", r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),
    ("card_number", r"(?<![\d.-])(?:\d[ -]?){12,18}\d(?![\d-])"),
    ("phone", r"(?<![\w+])(?:\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}|\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}"
              r"|1[3-9]\d{9})(?![\w])"),
]
_COMBINED = re.compile("|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _PATTERNS))
SECRET_FIELD = re.compile(r"(?i)^(?:api[_-]?key|apikey|password|passwd|secret|client[_-]?secret|"
                          r"access[_-]?token|refresh[_-]?token|token|authorization|auth)$")
# A cheap test on a raw JSONL line: it may say yes when nothing needs redacting (the slow path then
# parses, redacts and finds nothing), never no when something does. Each pattern above, and each
# secret-named field, needs one of the literals below in the lowered raw line, or a digit shape:
# the literals carry no word boundaries or look-behinds of the patterns, so an escape such as `\n`
# right before a key (raw `\nAKIA...`) cannot hide it, and `\u` escapes, which could hide any
# character, always count. The search starts at a rare letter of each literal and looks behind for
# the rest, which keeps the regex engine's scan for a starting letter cheap. Each literal is as
# long as the pattern allows (a field name with its closing quote, `@` inside an address, `+` with a
# digit, `sk-` with 16 key characters) so that code in a trace (decorators, diffs, `task_id`,
# `author`) does not send its lines down the slow path. Running `_COMBINED` over every raw line
# instead cost ~100 us a line (its e-mail branch retries at every letter); this costs about as
# much as `json.loads` of the line.
_TRIGGER = re.compile(
    r"j(?<=eyj)"                                   # jwt
    r"|b(?:egin(?<=-----begin)|earer)"             # private key, bearer token
    r"|k(?:ia(?<=akia)"                            # AKIA...
    r"|(?<=sk)(?:-[a-z0-9_-]{16}|_live_|_test_)"   # sk-..., sk_live_..., sk_test_...
    r'|ey"(?:(?<=apikey")|(?<=api[_-]key"))'       # field api_key / apikey
    r'|(?<=tok)en")'                               # field *token
    r"|z(?<=aiz)a|glpat-|gh[pousr]_|xox[abprs]-"   # other API keys
    r'|w(?<=passw)(?:ord|d)"|c(?<=sec)ret"'        # fields password / passwd, *secret
    r'|u(?<=au)th(?:orization)?"'                  # fields auth, authorization
    r"|@(?<=[a-z0-9!#$%&'*+/=?^_`{|}~.-]@)[a-z0-9-]+\."  # e-mail (not a decorator)
    r"|\\u|\+\d"                                   # escapes, +phone
).search
# Under IGNORECASE these four match an ASCII letter of a field name (`re` folds them so), and
# `str.lower` would not turn them into it (İ even becomes two characters).
_FOLDS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
# Card numbers need 13 digits, phone numbers 10 or 11, with at most single separators between:
# a run of 11 bytes of [0-9 .)-] first (one table lookup per byte, in C), then the shape itself.
# `\d` also takes non-ASCII digits, so every byte of a non-ASCII character counts for the run.
_DIGIT_CLASS = bytes(0x30 if i >= 0x80 or chr(i) in "0123456789 .)-" else 0x78 for i in range(256))
_DIGIT_RUN = b"0" * 11
_DIGIT_SHAPE = re.compile(r"\d(?:(?:[ -]?\d){12}|\d\d\)?[ .-]\d{3}[ .-]\d{4}|\d{9})").search


def line_needs_redaction(line: str) -> bool:
    """May anything in this raw JSONL line need redacting? (A superset test, see above.)"""
    lowered = line.lower() if line.isascii() else line.translate(_FOLDS).lower()
    if _TRIGGER(lowered) is not None:
        return True
    return _DIGIT_RUN in line.encode("utf-8", "surrogatepass").translate(_DIGIT_CLASS) and \
        _DIGIT_SHAPE(line) is not None


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


class Redactor:
    """Replaces sensitive substrings with `[REDACTED:kind]` and counts them by kind."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def line_needs_redaction(self, line: str) -> bool:
        return line_needs_redaction(line)

    def _replace(self, match: re.Match[str]) -> str:
        kind = match.lastgroup or "secret"
        text = match.group(0)
        if kind == "card_number":
            digits = re.sub(r"\D", "", text)
            if not luhn_ok(digits):
                return text
        if kind == "phone" and sum(c.isdigit() for c in text) < 8:
            return text
        self.counts[kind] += 1
        if kind == "bearer_token":
            return text.split(None, 1)[0] + " [REDACTED:bearer_token]"
        return f"[REDACTED:{kind}]"

    def text(self, value: str) -> str:
        # The line test holds for a plain string too (its literals need no JSON around them): a
        # string it passes has no match, so `sub` would hand it back unchanged, ~100x slower.
        if not line_needs_redaction(value):
            return value
        return _COMBINED.sub(self._replace, value)

    def value(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value (dict keys that name secrets too)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if isinstance(k, str) and SECRET_FIELD.match(k) and isinstance(v, (str, int)) and v != "":
                    self.counts["secret_field"] += 1
                    out[k] = "[REDACTED:secret_field]"
                else:
                    # Keys carry data too (recipients keyed by address): redact them like values.
                    out[self.text(k) if isinstance(k, str) else k] = self.value(v)
            return out
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


# Fields of an event that carry content; the structural ones (id, turn, call_id, ...) are left alone.
CONTENT_FIELDS = ("text", "args", "result", "value", "state")


def redact_event_dict(record: dict[str, Any], redactor: Redactor) -> dict[str, Any]:
    for name in CONTENT_FIELDS:
        if name in record:
            record[name] = redactor.value(record[name])
    return record
