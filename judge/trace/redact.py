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
# secret-named field, needs one of these literals or digit shapes in the raw line: the literals
# carry no word boundaries or look-behinds, so an escape such as `\n` right before a key (raw
# `\nAKIA...`) cannot hide it, and `\u` escapes, which could hide any character, always count.
# Case-insensitive needles are looked for in the lowered line. Running `_COMBINED` over every raw
# line instead cost ~100 us a line (its e-mail branch retries at every letter); this costs ~3 us.
_NEEDLES = ("@", "\\u", "eyJ", "-----BEGIN", "AKIA", "AIza", "sk-", "sk_", "glpat-", "xox", "+")
_LOWER_NEEDLES = ("bearer", "apikey\"", "api_key\"", "api-key\"", "passw", "secret\"", "token\"", "auth")
_GITHUB = re.compile(r"gh[pousr]_")
# Card numbers need 13 digits, phone numbers 10 or 11 digits, with at most single separators in
# between: a run of 11 characters of [0-9 .)-] first (one C-speed table lookup per byte), then the
# shape itself. `+` numbers are caught by the "+" needle.
_DIGIT_CLASS = bytes(0x30 if chr(i) in "0123456789 .)-" else 0x78 for i in range(256))
_DIGIT_RUN = b"0" * 11
_DIGIT_SHAPE = re.compile(r"\d(?:(?:[ -]?\d){12}|\d\d\)?[ .-]\d{3}[ .-]\d{4}|\d{9})")


def line_needs_redaction(line: str) -> bool:
    """May anything in this raw JSONL line need redacting? (A superset test, see above.)"""
    for needle in _NEEDLES:
        if needle in line:
            return True
    lowered = line.lower()
    for needle in _LOWER_NEEDLES:
        if needle in lowered:
            return True
    if _GITHUB.search(line) is not None:
        return True
    return _DIGIT_RUN in line.encode("utf-8", "surrogatepass").translate(_DIGIT_CLASS) and \
        _DIGIT_SHAPE.search(line) is not None


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
CONTENT_FIELDS = ("text", "args", "result", "value")


def redact_event_dict(record: dict[str, Any], redactor: Redactor) -> dict[str, Any]:
    for name in CONTENT_FIELDS:
        if name in record:
            record[name] = redactor.value(record[name])
    return record
