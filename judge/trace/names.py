"""Secret-named fields: is this key (or `NAME=` in text) one whose value is a credential?

A name is split into words at `_`, `-`, `.`, spaces and camelCase humps, case folded: `X-API-Key`
-> x api key, `dbPassword` -> db password. It is secret-named when

- a word is one of `SECRET_WORDS` (password, passwd, pwd, passphrase, secret, token, auth,
  authorization, credential(s), cookie, apikey, ...), or
- a word `key` follows a qualifier (`api_key`, `private-key`, `AccessKey`, `signing_key`), or
- the name, its separators removed, contains one of `SECRET_PARTS` (`dbpassword`, `mysecretkey`,
  `xapikey`, `refreshtoken`),

unless its last word counts or sizes something (`token_count`, `password_min_length`,
`max_tokens` is not secret-named either: `tokens` is not `token`). The keyword list of
detect-secrets' KeywordDetector (api_key, auth_key, db_pass, private_key, password, secret, ...) is
a subset of what this matches (tests/hostile/test_hostile_redaction.py checks it).
"""

from __future__ import annotations

import re
from functools import lru_cache

SECRET_WORDS = frozenset({
    "password", "passwd", "pwd", "passphrase", "secret", "secrets", "token", "auth", "authorization",
    "credential", "credentials", "cookie", "apikey", "privatekey", "accesskey", "secretkey", "authkey",
    "contrasena", "contraseña", "passcode",
})
KEY_QUALIFIERS = frozenset({
    "api", "auth", "service", "account", "db", "database", "priv", "private", "client", "access",
    "secret", "signing", "encryption", "master", "session",
})
SECRET_PARTS = ("password", "passwd", "passphrase", "secret", "apikey", "authkey", "privatekey", "accesskey",
                "accesstoken", "refreshtoken", "authtoken", "bearertoken", "sessiontoken", "idtoken",
                "dbpass", "databasepass", "keypass", "credential", "contrasena", "contraseña")
COUNTING = frozenset({"count", "counts", "limit", "limits", "length", "len", "size", "type", "types", "usage",
                      "used", "max", "min", "ttl", "expiry", "expires", "expiration", "estimate", "budget",
                      "policy", "required", "enabled", "hint"})
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_A-Za-z]+")
# Every secret name holds one of these (case-insensitive): the cheap test before the word split,
# and the anchors judge.trace.detect and the line precheck search for.
WORD_HINT = re.compile(r"(?i:passw|passphrase|passcode|pwd|secret|token|auth|credential|cookie|contrase"
                       r"|(?:db|database|key)[_-]?pass|(?:api|service|account|db|database|priv|private|client"
                       r"|access|signing|encryption|master|session)[_-]?key)")


@lru_cache(maxsize=8192)
def is_secret_name(name: str, counting: bool = True) -> bool:
    """Is `name` a secret-named field (see the module docstring)? `counting=False` ignores the
    counting exception (the line precheck: it may say yes more often, never less)."""
    if len(name) > 200 or WORD_HINT.search(name) is None:
        return False
    words = [w.casefold() for w in _WORDS.findall(name)]
    if not words:
        return False
    if counting and len(words) > 1 and words[-1] in COUNTING:
        return False
    if any(w in SECRET_WORDS for w in words):
        return True
    if any(w == "key" and prev in KEY_QUALIFIERS for prev, w in zip(words, words[1:], strict=False)):
        return True
    joined = "".join(words)
    return any(part in joined for part in SECRET_PARTS)


PIN_ENDINGS = (("pin",), ("pin", "code"), ("pin", "number"), ("pincode",))


@lru_cache(maxsize=8192)
def is_pin_name(name: str) -> bool:
    """Does `name` end in a PIN (`pin`, `card_pin`, `pinCode`, `PIN number`)? Its value is redacted
    only when it is 4-8 digits (judge.trace.redact): `"pin": true` and a map's `pin` stay."""
    if len(name) > 200 or "pin" not in name.lower():
        return False
    words = tuple(w.casefold() for w in _WORDS.findall(name))
    return any(words[-len(end):] == end for end in PIN_ENDINGS)
