"""The line precheck: may anything in this raw JSONL line need redacting?

**A line it clears needs no redaction**: it may say yes when nothing needs redacting (the slow path
then parses, redacts and finds nothing), never no when something does; tests/test_redact.py holds it
to that with a property test over every detected kind. It runs the gates of judge.trace.gates and
the cheap part of each detector of judge.trace.detect on the raw line, escapes included (`\\u`
escapes, which could hide any character, always count).

`lines_needing_redaction` answers for many lines at once: each gate scans the lines joined (one C
scan instead of one per line), and only where a gate finds something is that line looked at again.
It says yes for a line whenever `line_needs_redaction` would (tested), so its clearance holds too.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from typing import Sequence

from judge.trace.detect import _AWS_KEY
from judge.trace.gates import DIGIT_RUN, IBAN_SHAPE, TRIGGER, Classified, hint_spans, lower
from judge.trace.names import is_secret_name
from judge.trace.numbers import NUMBER_SHAPE

# An e-mail's `x@`, url credentials' `pass@`: any `@` after a character an address can end with
# (not after white space, a quote, or an escape such as `\n` that only looks like a letter).
_AT = re.compile(r"@(?<![\s\"@]@)(?<!(?<!\\)\\[nrtbf]@)").search  # `@` first: a fast literal scan
SURROGATE = re.compile("[\ud800-\udfff]").search
_IDENT_LEFT = re.compile(r"[\w.-]{0,80}")
# The rest of a name, then what may stand between it and its `=` or `:` in the raw line (quotes,
# escapes, spaces).
_AFTER = re.compile(r"([\w.-]{0,80}+)(?:\\.|[\"' \t]){0,40}+(?::=|=>|[:=])").match
_COLON = re.compile(r"\s*:").match


def _secret_name_in(line: str, lowered: str) -> bool:
    """Is a secret-named name in the raw line, with an `=` or `:` after it (an assignment in text,
    or a JSON key)? Names are judged as written (`xToken` is x, token), found in `lowered`."""
    return any(_named_here(line, lowered, start, end) for start, end in hint_spans(lowered))


def _named_here(line: str, lowered: str, start: int, end: int) -> bool:
    after = _AFTER(lowered, end)
    if after is not None:
        left = _IDENT_LEFT.match(lowered[max(0, start - 80):start][::-1]).end()
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


def line_needs_redaction(line: str) -> bool:
    """May anything in this raw JSONL line (or plain string) need redacting? A superset test."""
    if TRIGGER(line) is not None:
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
    return _number_in(classified, line, ascii_)




CHUNK = 256  # lines per call of lines_needing_redaction in the trace reader


def lines_needing_redaction(lines: Sequence[str]) -> bytearray:
    """1 for each line that may need redacting, 0 for one that needs none (see the docstring)."""
    flags = bytearray(len(lines))
    if not lines:
        return flags
    # One line of the joined text per line given (the file reader's lines end in `\n` already: no
    # copy). A line that is no single JSON object line (a newline inside, no `{` first: a gate could
    # read across the join) is checked alone.
    parts, starts, at = [], [], 0
    for index, line in enumerate(lines):
        if not line.endswith("\n"):
            line += "\n"
        if not line.startswith("{") or line.count("\n") > 1:
            flags[index] = line_needs_redaction(line)
            line = "{}\n"
        parts.append(line)
        starts.append(at)
        at += len(line)
    joined = "".join(parts)

    def mark(pos: int) -> None:
        flags[bisect_right(starts, pos) - 1] = 1

    for m in _TRIGGER_ALL(joined):
        mark(m.start())
    if "@" in joined:
        for m in _AT_ALL(joined):
            mark(m.start())
    ascii_ = joined.isascii()
    if not ascii_:
        for m in _SURROGATE_ALL(joined):
            mark(m.start())
    lowered = lower(joined)
    for word in ("bearer", "basic", "aws"):
        pos = lowered.find(word)
        while pos >= 0:
            mark(pos)
            pos = lowered.find(word, pos + 1)
    for start, end in hint_spans(lowered):
        if not flags[bisect_right(starts, start) - 1] and _named_here(joined, lowered, start, end):
            mark(start)
    _mark_numbers(lines, joined, starts, flags)
    return flags


def _mark_numbers(lines: Sequence[str], joined: str, starts: list[int], flags: bytearray) -> None:
    classified = Classified(joined)
    digits = classified.digits_only()  # separators deleted, a line still ends in `\n`
    pos = digits.find(DIGIT_RUN)
    index, counted = 0, 0
    while pos >= 0:
        index += digits.count(b"\n", counted, pos)
        counted = pos
        if not flags[index]:
            flags[index] = _number_in(Classified(lines[index]), lines[index], lines[index].isascii())
        end = digits.find(b"\n", pos)
        if end < 0:
            break
        pos = digits.find(DIGIT_RUN, end)
    if classified.iban():
        capitals = classified.capitals
        pos = capitals.find(b"AA00")
        while pos >= 0:
            index = capitals.count(b"\n", 0, pos)
            if not flags[index]:
                flags[index] = line_needs_redaction(lines[index])
            pos = capitals.find(b"AA00", pos + 1)


_TRIGGER_ALL = TRIGGER.__self__.finditer
_AT_ALL = re.compile(_AT.__self__.pattern).finditer
_SURROGATE_ALL = re.compile(SURROGATE.__self__.pattern).finditer
