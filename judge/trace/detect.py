"""Find secrets and personal data in one string: spans (start, end, kind), in linear time.

Detection runs on the folded copy of the string (judge.trace.normal: NFKC, invisible characters
dropped, `%XX` decoded) and the spans found there are mapped back to the string as written, which is
what the redactor replaces. Base64 runs are decoded and searched too (judge.trace.encoded).

Every detector is anchored: a literal or a short class found by one C-level scan (`@`, `://`,
`eyJ`, `PRIVATE KEY`, a provider's key prefix or shape's literal, a secret word (judge.trace.names.WORD_HINT), a digit
run), then a bounded or possessive match from there. Runs are taken from their left end only (a
look-behind refuses a start inside a run), so no position is retried for every position before it:
a 10 MB line costs ten times a 1 MB line, whatever it holds (benchmarks/bench_redact.py). Each
detector runs only when its gate (judge.trace.gates) finds what it needs.

Kinds: private_key (PEM blocks, with or without their END line), jwt (by structure:
judge.trace.encoded), api_key (the providers in `_KEYS`, and the shapes of judge.trace.providers),
aws_secret (a 40-character key near the word "aws": mixed, or quoted), bearer_token, basic_auth, url_credentials (`scheme://user:password@host`),
secret_field (the value after a secret-named name: `DB_PASSWORD=...`, `"api_key": "..."`, also
inside escaped JSON; a quoted value to its closing quote, escapes read, a list or object written out
to its closing bracket, an unquoted one to the end of its line, so `password: correct horse battery
staple` and every cookie of a `Cookie:` line go whole, but not over the next secret-named
assignment on that line; and a secret said in prose, judge.trace.prose), email (Unicode and
single-label domains too: `user@localhost`; not a version, tag, digest or git remote holding an
`@`), and the numbers of judge.trace.numbers (card_number, ssn, phone, iban, national_id).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

from judge.trace.encoded import encoded_spans, jwt_spans
from judge.trace.gates import TRIGGER, Classified, hint_spans, lower
from judge.trace.hidden import HiddenValues
from judge.trace.names import is_secret_name
from judge.trace.normal import fold
from judge.trace.numbers import candidates as number_spans
from judge.trace.numbers import ibans
from judge.trace.prose import prose_spans
from judge.trace.providers import provider_spans

Span = tuple[int, int, str]

# Provider keys: a distinctive prefix, then the key's characters (lengths from the providers' formats).
_KEYS = re.compile(
    r"(?:sk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}+"     # OpenAI, Anthropic
    r"|(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"             # AWS access key ids
    r"|github_pat_[A-Za-z0-9_]{22,}+|gh[pousr]_[A-Za-z0-9]{30,}+"    # GitHub
    r"|gl(?:pat|dt|rt|ft|soat|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_-]{20,}+|GR1348941[A-Za-z0-9_-]{20,}+"  # GitLab
    r"|xox[abposre]-[A-Za-z0-9-]{10,}+|xox[abposr]-(?:[0-9]++-)++[A-Za-z0-9]++"  # Slack bot, user tokens
    r"|xapp-[A-Za-z0-9-]{10,}+"                                     # Slack app tokens
    r"|AIza[0-9A-Za-z_-]{30,}+"                                     # Google
    r"|[sr]k_(?:live|test)_[0-9A-Za-z]{16,}+|whsec_[0-9A-Za-z]{24,}+"  # Stripe
    r"|hf_[A-Za-z0-9]{30,}+|npm_[A-Za-z0-9]{36}|pypi-AgE[A-Za-z0-9_-]{50,}+"  # Hugging Face, npm, PyPI
    r"|SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|sq0(?:csp|atp)-[A-Za-z0-9_-]{22,}+"  # SendGrid, Square
    r"|(?:AC|SK)[0-9a-z]{32}|AccountKey=[A-Za-z0-9+/=]{40,}+"        # Twilio, Azure storage
    r"|AKC[A-Za-z0-9]{10,}+|AP[0-9A-F][A-Za-z0-9]{8,}+(?=[\s\"'`,;)\]}]|$))")  # Artifactory token, password
# A PEM or SSH2 armour line (five or four dashes): the key to its END line; a bare `BEGIN ... PRIVATE
# KEY` in prose is only its own words.
_PEM = re.compile(r"BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?(?: ?-{4,5})?")
_ARMOUR = re.compile(r"-{4,5} ?\Z")  # the dashes before BEGIN (searched up to it)
_PEM_END = re.compile(r"-{4,5} ?END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?(?: ?-{4,5})?")
# The password runs to the authority's last `@` (`admin:p@ss@host`); `/`, `?`, `#` end the authority.
_URL_CREDS = re.compile(r"://([^\s/?#@:\"\\]{0,256}+:[^\s/?#\"\\]{1,256})@")
_AUTH = re.compile(r"(?i:\b(bearer|basic))\s++([A-Za-z0-9._~+/-]{8,}+=*+)")
_NAME_LEFT = re.compile(r"[\w.-]{0,80}")  # applied to the reversed text before a secret word
_NAME_RIGHT = re.compile(r"[\w.-]{0,80}+")
_ASSIGN = re.compile(r"(\\{0,8}[\"'])?[ \t]{0,8}(?::=|=>|[:=])[ \t]*+(?:(\\{0,8}[\"'])|"
                     r"([^\r\n\"\\&<]{1,1000}+))")
_ATEXT = re.compile(r"[\w!#$%&'*+/=?^`{|}~.-]{1,256}")  # an e-mail's local part, applied reversed
# Single-label domains that name an environment or a release channel: `snapshot-2024@prod` and
# `pkg@latest` are references, not addresses (`root@localhost` is one).
_TAGS = frozenset({"prod", "production", "staging", "stage", "dev", "devel", "development", "test", "testing", "qa",
                   "uat", "latest", "stable", "main", "master", "head", "canary", "beta", "alpha", "nightly", "edge",
                   "release", "preview", "next", "current", "live", "sandbox", "snapshot", "tip"})
# After `user@host`: a `:` and a path (scp-like: `git@github.com:org/repo.git`), a git remote.
_SCP_PATH = re.compile(r":[\w.~-]{0,256}+/|:[\w.~-]{0,256}\.git(?![\w-])")
_DOMAIN = re.compile(r"[^\W_](?:[\w-]{0,62}+)(?:\.[^\W_][\w-]{0,62}+){0,8}+")
_AWS_KEY = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS = re.compile(r"(?i:aws)")
LETTERED_GATE = re.compile(r"[0-9]{7}-?[A-Za-z]").search  # judge.trace.national.LETTERED needs 7 digits and a letter


def spans(text: str, depth: int = 0, hidden: HiddenValues | None = None) -> list[Span]:
    """Every sensitive span in `text` (as written), overlapping spans merged (the first kind names
    the union): found on the folded copy, mapped back. `depth`: how deep inside base64 this is;
    `hidden`: a scenario's no-leak values, redacted too (judge.trace.hidden)."""
    folded = fold(text)
    found = _detect(folded.text)
    if hidden:
        found += hidden.spans(folded.text)
    found += encoded_spans(folded.text, depth, lambda inner, level: spans(inner, level, hidden))
    found = _merge(found)
    if not folded.edits or not found:
        return found
    return _merge([(*folded.original(start, end), kind) for start, end, kind in found])


def _detect(text: str) -> list[Span]:
    """Every detector on one (folded) text; each runs only when its gate (judge.trace.gates) is open."""
    found: list[Span] = []
    lowered = lower(text)
    if "PRIVATE KEY" in text:
        found += _pem(text)
    found += jwt_spans(text)
    if TRIGGER(text) is not None:
        found += _keys(text)
    if "://" in text:
        found += [(m.start(1), m.end(1), "url_credentials") for m in _URL_CREDS.finditer(text)]
    if "bearer" in lowered or "basic" in lowered:
        found += _auth(text)
    found += _assignments(text, lowered)
    found += prose_spans(text, lowered)
    found += provider_spans(text, lowered)
    if "@" in text:
        found += _emails(text)
    if "aws" in lowered:
        found += _aws(text)
    classified = Classified(text)
    if "+" in text or next(classified.digit_runs(), None) is not None or LETTERED_GATE(text) is not None:
        found += number_spans(text)
    if classified.iban():
        found += ibans(text)
    return found


def _merge(found: list[Span]) -> list[Span]:
    """Overlapping spans as one; its kind is the first one's, unless that is the generic
    `secret_field` (a whole `Authorization:` value) and a specific kind overlaps it (`bearer_token`)."""
    if len(found) < 2:
        return found
    found.sort(key=lambda s: (s[0], -s[1]))
    out = [found[0]]
    for start, end, kind in found[1:]:
        last = out[-1]
        if start < last[1]:
            named = kind if last[2] == "secret_field" else last[2]
            out[-1] = (last[0], max(end, last[1]), named)
        else:
            out.append((start, end, kind))
    return out


def _pem(text: str) -> Iterator[Span]:
    pos = 0
    while (m := _PEM.search(text, pos)) is not None:
        armour = _ARMOUR.search(text, max(0, m.start() - 6), m.start())
        if armour is None:  # `BEGIN RSA PRIVATE KEY` said in prose: its words alone
            yield m.start(), m.end(), "private_key"
            pos = m.end()
            continue
        end = _PEM_END.search(text, m.end())
        stop = end.end() if end is not None else len(text)  # no END line: the rest is the key
        yield armour.start(), stop, "private_key"
        pos = stop


def _keys(text: str) -> Iterator[Span]:
    for m in _KEYS.finditer(text):
        start = m.start()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            continue  # inside a word: `task-...` is no key
        yield start, m.end(), "api_key"


def _auth(text: str) -> Iterator[Span]:
    for m in _AUTH.finditer(text):
        scheme, value = m.group(1).lower(), m.group(2)
        if scheme == "basic":
            try:
                decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
            except (binascii.Error, ValueError):
                continue
            if b":" not in decoded:
                continue  # "basic functionality" is no credential
            yield m.start(2), m.end(2), "basic_auth"
        elif len(value) >= 12:
            yield m.start(2), m.end(2), "bearer_token"


def _assignments(text: str, lowered: str) -> Iterator[Span]:
    """`name = value`, `name: value`, `"name": "value"` (quotes escaped any number of times) where
    the name is secret-named (judge.trace.names)."""
    done = 0
    hints = sorted(hint_spans(lowered))
    for index, (hint, _) in enumerate(hints):
        if hint < done:
            continue
        _, right, secret = _name_around(text, hint, done)
        done = right
        m = _ASSIGN.match(text, right) if secret else None
        if m is None:
            continue
        start, end = _value_span(text, m)
        if m.group(2) is None:
            end = _before_next_assignment(text, hints, index + 1, start, end)
        if end > start:
            done = end
            yield start, end, "secret_field"


def _name_around(text: str, hint: int, done: int) -> tuple[int, int, bool]:
    """(start, end, secret-named?) of the name around the hint starting at `hint`, not reaching back
    before `done`."""
    lo = max(done, hint - 80)
    left_match, right_match = _NAME_LEFT.match(text[lo:hint][::-1]), _NAME_RIGHT.match(text, hint)
    assert left_match is not None and right_match is not None  # `{0,80}`: they match everywhere
    start, end = hint - left_match.end(), right_match.end()
    return start, end, is_secret_name(text[start:end])


def _before_next_assignment(text: str, hints: list[tuple[int, int]], first: int, start: int, end: int) -> int:
    """An unquoted value runs to the end of its line, but not over the next secret-named assignment
    on it (`DB_PASSWORD=x1; API_TOKEN="..."`: that one's value is found as its own, quoted or not):
    the end of the value before it, separators (`;`, `,`, spaces) left out. Each hint is looked at
    once here and once as its own, so a line full of them stays linear."""
    for hint, _ in hints[first:]:
        if hint >= end:
            break
        name_start, name_end, secret = _name_around(text, hint, start)
        if not secret or _ASSIGN.match(text, name_end) is None:
            continue
        cut = name_start
        while cut > start and text[cut - 1] in " \t;,":
            cut -= 1
        if cut > start:
            return cut
    return end


def _value_span(text: str, m: re.Match[str]) -> tuple[int, int]:
    """The value after a secret name's `=` or `:`: a quoted one to its closing quote (the same quote,
    escaped as often), else to the end of its line (or of the text, at most 1,000 characters)."""
    if m.group(2) is None:
        value = m.group(3).rstrip()
        if value[:1] in ("[", "{"):  # a list or an object written out (`password: ["a", "b"]`)
            return m.start(3), _bracket_end(text, m.start(3), min(len(text), m.start(3) + 1000))
        return m.start(3), m.start(3) + len(value)
    start = m.end(2)
    stop = min(len(text), start + 1000)
    close = _closing_quote(text, m.group(2), start, stop)
    if close < 0:
        line_end = min((i for i in (text.find("\n", start, stop), text.find("\r", start, stop)) if i >= 0),
                       default=stop)
        return start, line_end
    return start, close


def _bracket_end(text: str, start: int, stop: int) -> int:
    """Past the bracket closing the one at `start` (quoted strings skipped, escapes read), else the
    end of its line (or `stop`): the whole list or object is the value."""
    depth, quote, pos = 0, "", start
    while pos < stop:
        ch = text[pos]
        if ch in "\r\n":
            return pos
        if ch == "\\":
            pos += 1  # an escaped character (`\\"` in JSON held in a string: no quote of this level)
        elif quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    return stop


def _closing_quote(text: str, quote: str, start: int, stop: int) -> int:
    """Where the value opened by `quote` (its quote character after k backslashes: k is 1 in JSON
    held in a string) closes, or -1. A quote inside the value is escaped once more than the opening
    one (its run of backslashes is not k modulo 2k + 2: a backslash and a quote inside a plain
    double-quoted value, three and a quote inside an escaped one); in single quotes a doubled `''`
    is YAML's escape of one (`'it''s'`)."""
    escapes = len(quote) - 1
    mark = quote[-1]
    at = text.find(mark, start, stop)
    while at >= 0:
        run = at
        while run > start and text[run - 1] == "\\":
            run -= 1
        if (at - run) % (2 * escapes + 2) == escapes:
            if not (escapes == 0 and mark == "'" and text.startswith("'", at + 1)):
                return at - escapes
            at += 1  # `''`: one quote, escaped
        at = text.find(mark, at + 1, stop)
    return -1


def _emails(text: str) -> Iterator[Span]:
    pos, previous = 0, -1
    find = text.find
    while (at := find("@", pos)) >= 0:
        pos = at + 1
        local = _ATEXT.match(text[max(previous + 1, at - 256):at][::-1])
        previous = at
        if local is None:
            continue
        domain = _DOMAIN.match(text, at + 1)
        if domain is None or not _address_domain(domain.group(), text, domain.end()):
            continue
        start = at - local.end()
        while text[start] == ".":  # an address does not start with a dot (`...bob@x.org`)
            start += 1
        if start < at:
            yield start, domain.end(), "email"
            pos = domain.end()


def _address_domain(domain: str, text: str, end: int) -> bool:
    """Is what follows an `@` an address's domain, not a version (`pkg@1.2.3`, `pkg@1.2.3-rc1`: no
    top-level label starts with a digit), a single-label tag or digest (`app@sha256:...`,
    `actions/checkout@v4`, `snapshot-2024@prod`: a single label is an address's only when it is
    letters and hyphens and no environment's name), or a git remote (`git@github.com:org/repo`)?"""
    labels = domain.split(".")
    if not labels[-1][:1].isalpha():
        return False
    if len(labels) == 1 and (not domain.replace("-", "").isalpha() or domain.lower() in _TAGS):
        return False
    return _SCP_PATH.match(text, end) is None


def _aws(text: str) -> Iterator[Span]:
    pos = 0
    while (word := _AWS.search(text, pos)) is not None:
        key = _AWS_KEY.search(text, word.end(), word.end() + 120)
        if key is None:
            pos = word.end()
            continue
        value, before = key.group(), text[key.start() - 1:key.start()]
        quoted = before in ("'", '"') and text.startswith(before, key.end())  # as detect-secrets finds one
        if quoted or (any(c.isupper() for c in value) and any(c.islower() for c in value)
                      and any(c.isdigit() for c in value)):
            yield key.start(), key.end(), "aws_secret"
        pos = key.end()
