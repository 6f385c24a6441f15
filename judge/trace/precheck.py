"""The line precheck: may anything in this raw JSONL line need redacting?

**A line it clears needs no redaction**: it may say yes when nothing needs redacting (the slow path
then parses, redacts and finds nothing), never no when something does; tests/test_redact.py holds it
to that with a property test over every detected kind. It runs the gates of judge.trace.gates and
the cheap part of each detector of judge.trace.detect on the raw line, escapes included (`\\u`
escapes, which could hide any character, always count).

`lines_needing_redaction` answers for many lines at once, exactly as the line test would (tested):
one linear-time automaton pass over the lines joined (judge.trace.prescan) finds the few that may
need it, and the line test decides those.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from judge.trace.detect import _AWS_KEY
from judge.trace.encoded import MAX_NESTING, decoded_text, runs
from judge.trace.gates import DIGIT_RUN, IBAN_SHAPE, TRIGGER, Classified, hint_spans, lower
from judge.trace.names import is_secret_name
from judge.trace.normal import folded_text
from judge.trace.numbers import NUMBER_SHAPE
from judge.trace.prescan import found_lines
from judge.trace.prose import NOUN, noun_starts

# An e-mail's `x@`, url credentials' `pass@`: any `@` after a character an address can end with
# (not after white space, a quote, or an escape such as `\n` that only looks like a letter).
_AT = re.compile(r"@(?<![\s\"@]@)(?<!(?<!\\)\\[nrtbf]@)").search  # `@` first: a fast literal scan
SURROGATE = re.compile(f"[{chr(0xD800)}-{chr(0xDFFF)}]").search  # (mypyc refuses surrogates in literals)
# A JSON value that is not a finite number: `NaN`, `Infinity`, or an exponent of 3 digits or more.
# A JWT's shape (judge.trace.encoded.JWT, without its checks); a Spanish DNI or NIE's 7 digits and letter.
_JWT_SHAPE = re.compile(r"e[yw][A-Za-z0-9_-]{2,}+\.[A-Za-z0-9_-]{2,}+\.").search
_LETTERED_SHAPE = re.compile(r"[0-9]{7}-?[A-Za-z]").search
_ESCAPE = re.compile(r"\\(.)")
NONFINITE = re.compile(r"[:,\[][ \t\r]*+-?(?:NaN|Infinity|[0-9]++(?:\.[0-9]++)?[eE]\+?[0-9]{3})").search
_IDENT_LEFT = re.compile(r"[\w.-]{0,80}")
# The rest of a name, then what may stand between it and its `=` or `:` in the raw line (quotes,
# escapes, spaces).
_AFTER = re.compile(r"([\w.-]{0,80}+)(?:\\.|[\"' \t]){0,40}+(?::=|=>|[:=])").match
_COLON = re.compile(r"\s*:").match
# The shapes of judge.trace.providers (Mailchimp, Discord, Telegram), each from its literal; a secret
# noun of judge.trace.prose before `is`/`was` or `:`/`=` (the raw line's quotes, escapes between).
_MAILCHIMP_SHAPE = re.compile(r"-us[0-9](?<=[0-9a-z]{32}-us[0-9])").search
_DISCORD_SHAPE = re.compile(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}").search
_TELEGRAM_SHAPE = re.compile(r":(?<=[0-9]{8}:)[A-Za-z0-9_-]{35}").search
_PROSE_AT = re.compile(NOUN + r"(?:(?:\\t|[ \t])++(?:is|was|are|were)|(?:\\.|[\"' \t])*+[:=])").match


def _secret_name_in(line: str, lowered: str) -> bool:
    """Is a secret-named name in the raw line, with an `=` or `:` after it (an assignment in text,
    or a JSON key)? Names are judged as written (`xToken` is x, token), found in `lowered`."""
    return any(_named_here(line, lowered, start, end) for start, end in hint_spans(lowered))


def _named_here(line: str, lowered: str, start: int, end: int) -> bool:
    after = _AFTER(lowered, end)
    if after is not None:
        left_match = _IDENT_LEFT.match(lowered[max(0, start - 80):start][::-1])
        assert left_match is not None  # `{0,80}`: it matches everywhere
        left = left_match.end()
        name = line[start - left:after.end(1)]
        if is_secret_name(name, False):
            return True
        # `\ntoken=` in the raw line is a newline and `token=` in the text
        if left and line[start - left - 1:start - left] == "\\" and is_secret_name(name[1:], False):
            return True
    return _json_key(line, lowered, start, end)


def _escaped(text: str, at: int) -> bool:
    """Is the character at `at` escaped (an odd number of backslashes before it)?"""
    run = at
    while run > 0 and text[run - 1] == "\\":
        run -= 1
    return (at - run) % 2 == 1


def _json_key(line: str, lowered: str, start: int, end: int) -> bool:
    """A JSON key around the hint (`"x token{": ...`): any characters may sit in a key."""
    close = lowered.find('"', end, end + 200)
    while close >= 0 and _escaped(lowered, close):
        close = lowered.find('"', close + 1, end + 200)
    if close < 0 or _COLON(lowered, close + 1) is None:
        return False
    opening = lowered.rfind('"', max(0, start - 200), start)
    while opening >= 0 and _escaped(lowered, opening):
        opening = lowered.rfind('"', max(0, start - 200), opening)
    if opening < 0:
        return True  # a key too long to look at whole: the slow path decides
    key = line[opening + 1:close]
    if "\\" in key:
        try:
            key = json.loads(f'"{key}"')
        except ValueError:
            return True
    return is_secret_name(key, False)


def _number_in(classified: Classified, line: str, ascii_: bool) -> bool:
    if classified.digits_only().find(DIGIT_RUN) < 0:
        return False  # not 9 digits in a row, separators left out: no number
    for start, end in classified.digit_runs():
        if not ascii_:  # byte offsets are not character offsets
            return NUMBER_SHAPE(line) is not None
        if NUMBER_SHAPE(line, start, end) is not None:
            return True
    return False


def line_needs_redaction(line: str, depth: int = 0) -> bool:
    """May anything in this raw JSONL line (or plain string) need redacting? A superset test. It
    also says yes to what only the slow path's parser refuses: `NaN`, `Infinity` and numbers too
    large for a float (`1e999`) as JSON values (the fast decoders would take them).

    As the detectors do, it looks at the folded copy too (judge.trace.normal: a full-width `＠`,
    a key split by a zero-width space, `%40`) and at what plausible base64 runs decode to."""
    if _needs(line):
        return True
    view = line
    if not line.isascii() or "%" in line:
        folded = folded_text(line)
        if folded != line:
            if any(folded.count(ch) != line.count(ch) for ch in "\"\\'"):
                return True  # a folded quote or backslash: the raw line's structure is not the text's
            if _needs(folded):
                return True
            view = folded
    return _encoded(view, depth)


def found_line_needs_redaction(line: str, runs_only: bool) -> bool:
    """`line_needs_redaction(line)` for a line the prescan found (judge.trace.prescan.found_lines):
    `runs_only` when it was found for a base64 run alone. Such a line is ASCII (a non-ASCII byte is
    a branch of the automaton's), and with no `%` in it its folded copy is itself: no test but the
    base64 one can say yes, so only that one runs (a few microseconds, not the whole test's twenty)."""
    if runs_only and "%" not in line:
        return _encoded(line, 0)
    return line_needs_redaction(line)


def _encoded(text: str, depth: int) -> bool:
    """Does a plausible base64 run decode to text this test says yes to? JSON escapes are read as
    the parsed value has them (`\\/` is `/`; any other escape ends a run)."""
    if depth >= MAX_NESTING or len(text) < 16:
        return False
    views = [text]
    if "\\" in text:  # a raw line (escapes) or a plain string (a backslash): both readings
        views.append(_ESCAPE.sub(lambda m: "/" if m.group(1) == "/" else " ", text))
    for view in views:
        for start, end in runs(view):
            decoded = decoded_text(view[start:end])
            if decoded is not None and line_needs_redaction(decoded, depth + 1):
                return True
    return False


def _needs(line: str) -> bool:
    """The tests of every detector's anchor, on one text as it is."""
    if TRIGGER(line) is not None or NONFINITE(line) is not None:
        return True
    if "." in line and ("ey" in line or "ew" in line) and _JWT_SHAPE(line) is not None:
        return True
    if _LETTERED_SHAPE(line) is not None:
        return True
    if "@" in line and _AT(line) is not None:
        return True
    ascii_ = line.isascii()
    if not ascii_ and SURROGATE(line) is not None:
        return True
    lowered = lower(line)
    if "bearer" in lowered or "basic" in lowered or _secret_name_in(line, lowered):
        return True
    if "aws" in lowered and (_AWS_KEY.search(line) is not None or "\\/" in line):
        return True
    classified = Classified(line)
    if classified.iban() and IBAN_SHAPE(line) is not None:
        return True
    return _number_in(classified, line, ascii_) or _provider_in(line, lowered) or _prose_in(lowered)


def _prose_in(lowered: str) -> bool:
    """A secret noun before `is`/`was` or `:`/`=`, matched only where judge.trace.prose finds a noun
    may start: one regex tried at every letter made the precheck ~7% more instructions on the
    benchmark trace (it runs on every string of a flagged line)."""
    return any(_PROSE_AT(lowered, start) is not None for start in noun_starts(lowered))


def _provider_in(line: str, lowered: str) -> bool:
    """The anchors of judge.trace.providers and of PEM-less private keys, in the raw line."""
    if "PRIVATE KEY" in line or "PuTTY-User-Key-File-" in line or "hooks.slack.com" in line:
        return True
    if "softlayer.com" in lowered:
        return True
    if "-us" in line and _MAILCHIMP_SHAPE(line) is not None:
        return True
    if ":" in line and _TELEGRAM_SHAPE(line) is not None:
        return True
    return "." in line and _DISCORD_SHAPE(line) is not None


CHUNK = 256  # lines per call of lines_needing_redaction in the trace reader (lines given as text)


def lines_needing_redaction(lines: Sequence[str]) -> bytearray:
    """1 for each line `line_needs_redaction` says yes to, 0 for the others: exactly its answers
    (tested), with one automaton pass over all the lines (judge.trace.prescan) and the line test
    run only on the lines that pass finds something in."""
    flags = bytearray(len(lines))
    parts = []
    for index, line in enumerate(lines):
        body = line[:-1] if line.endswith("\n") else line
        if "\n" in body or (not body.isascii() and SURROGATE(body) is not None):
            flags[index] = line_needs_redaction(line)  # no single UTF-8 line: asked alone
            body = ""
        parts.append(body)
    parts.append("")
    whole, runs = found_lines("\n".join(parts).encode("utf-8"))
    for index in whole:
        if not flags[index]:
            flags[index] = line_needs_redaction(lines[index])
    for index in runs:
        if not flags[index]:
            flags[index] = found_line_needs_redaction(lines[index], True)
    return flags
