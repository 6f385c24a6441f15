"""One linear-time pass over many raw lines that finds every line the redaction precheck could flag.

`candidate_lines` runs a single RE2 automaton (google-re2: a DFA, linear in the input, no
backtracking) over a block of UTF-8 JSONL lines and returns the index of every line holding a
*candidate*: a superset of what judge.trace.precheck.line_needs_redaction says yes to. The reader
then asks that exact function about the candidates only (judge.trace.precheck.found_line_needs_redaction:
a line found for a base64 run alone, `PATTERN_BUT_RUNS` finding nothing in it, gets only the base64
test), so the lines it flags are exactly the lines the per-line function flags
(tests/test_prescan.py holds it to that, over every detected kind, fuzzed lines and the benchmark
trace).

Each branch of `PATTERN` is the byte-level superset of one test of the line function:

- the literals of `TRIGGER` (key prefixes, `eyJ`, PEM, `\\u` escapes, `+` and a digit, AWS ids);
- `@` (e-mail addresses, credentials in URLs);
- `bearer`, `basic`, `aws` as `lower()` would fold them (the letter classes below hold every
  character whose lowercase is that ASCII letter: `ſ` is an `s`, the Kelvin sign a `k`);
- a secret-name hint followed by what `_named_here` needs after it: word characters then quotes,
  spaces or escapes then `=` or `:` (an assignment), or the end of its JSON string then `:` (a key);
- an IBAN's shape; nine digits with number separators between them (every number shape has 9).

Where the exact test bounds a distance (80 characters, 200), the branch does not: it may find more,
never less. Non-ASCII characters stand in for Python's Unicode `\\w` and `\\s` here (RE2's are ASCII).
A lone surrogate cannot be in UTF-8: lines given as text are checked for one apart (precheck).
"""

from __future__ import annotations

import re2

# Characters c with judge.trace.gates.lower(c) == the ASCII letter (tests/test_prescan.py recomputes
# these over every code point): the ASCII pair, and the four folds of judge.trace.gates.FOLDS.
_EXTRA = {"i": "\u0130\u0131", "s": "\u017f", "k": "\u212a"}


def folded(word: str) -> str:
    """A pattern matching `word` (lowercase ASCII letters, `_`, `-`) wherever lower() would find it."""
    out = []
    for ch in word:
        if ch.isalpha():
            out.append(f"[{ch}{ch.upper()}{_EXTRA.get(ch, '')}]")
        else:
            out.append(re2.escape(ch))
    return "".join(out)


def _alternation(*words: str) -> str:
    return "(?:" + "|".join(folded(w) for w in words) + ")"


# judge.trace.gates.TRIGGER, literal by literal (it is case-sensitive).
_TRIGGER = (
    r"sk-[A-Za-z0-9_-]{16}|xox[abposre]-|xapp-|glpat-|gldt-|glrt-|glft-|glsoat-|glcbt-|glimt-|sq0csp-|sq0atp-"
    r"|[sr]k_(?:live|test)_|github_pat_|gh[pousr]_|whsec_|hf_[A-Za-z0-9]{30}|npm_[A-Za-z0-9]{36}"
    r"|eyJ|-----BEGIN|pypi-AgE|\\u|\+\p{Nd}"
    r"|A(?:KIA|SIA|BIA|CCA|3T|C[0-9a-f]{32}|Iza|ccountKey=)|S(?:K[0-9a-f]{32}|G\.)"
)
# judge.trace.gates.hint_spans: the words, `pass` qualified, `key` qualified.
_HINT = "(?:" + "|".join([
    _alternation("pwd", "secret", "token", "auth", "credential", "cookie", "contrase", "passw", "passphrase",
                 "passcode"),
    _alternation("db", "database", "key") + "[_-]?" + folded("pass"),
    _alternation("api", "service", "account", "db", "database", "priv", "private", "client", "access",
                 "signing", "encryption", "master", "session") + "[_-]?" + folded("key"),
]) + ")"
_WORD = r"[A-Za-z0-9_.\-]|[^\x00-\x7f]"  # Python's `[\w.-]`, and more
_SPACE = r"[\t\x0b\x0c\r\x1c-\x1f ]|[^\x00-\x7f]"  # Python's `\s` but the line end, and more
# precheck._AFTER (`name = ...`, `token: ...`), then precheck._json_key (`"...token...": ...`).
_NAMED = (_HINT + r"(?:(?:" + _WORD + r")*(?:\\[^\n]|[\"' \t])*[:=]"
          + r"|(?:[^\"\\\n]|\\[^\n])*\"(?:" + _SPACE + r")*:)")
_BASE64_RUN = r"(?:[A-Za-z0-9+/_-]|\\/){16}"  # a base64 run the precheck decodes (`\/` joins one in a raw line)
_BRANCHES = [
    _TRIGGER,
    "@",
    _alternation("bearer", "basic", "aws"),
    _NAMED,
    r"[A-Z]{2}\p{Nd}\p{Nd}(?:[ /]?[A-Z0-9]){11}",  # gates.IBAN_SHAPE
    r"\p{Nd}(?:[ .()/\-]*\p{Nd}){8}",  # every alternative of numbers.NUMBER_SHAPE holds this
    r"[0-9]{7}-?[A-Za-z]",  # precheck._LETTERED_SHAPE (a Spanish DNI or NIE)
    r"e[yw][A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.",  # precheck._JWT_SHAPE
    r"[^\x00-\x7f]|%[0-9A-Fa-f]{2}",  # what the folded copy may change (judge.trace.normal)
    r"[:,\[][\t\r ]*-?(?:NaN|Infinity|[0-9]+(?:\.[0-9]+)?[eE]\+?[0-9]{3})",  # precheck.NONFINITE
]
PATTERN = "|".join([*_BRANCHES, _BASE64_RUN])
# Every branch but the base64 run's: a found line that holds none of these was found for a base64
# run alone (file paths, mostly), which only the precheck's base64 test can say yes to.
PATTERN_BUT_RUNS = "|".join(_BRANCHES)


def _compile(pattern: str) -> re2._Regexp:
    options = re2.Options()
    options.max_mem = 64 << 20  # room for the DFA of the whole alternation
    options.never_capture = True
    return re2.compile(pattern.encode("utf-8"), options)


_REGEXP = _compile(PATTERN)._regexp
_BUT_RUNS = _compile(PATTERN_BUT_RUNS)._regexp
_UNANCHORED = re2._Anchor.UNANCHORED


def candidate_lines(block: bytes) -> list[int]:
    """Indices of the lines of `block` (UTF-8 lines, each ending in `\\n`) that hold a candidate,
    in order: one automaton pass over the block, resumed after each line found."""
    found: list[int] = []
    match = _REGEXP.Match
    find, count = block.find, block.count
    end = len(block)
    pos = counted = line = 0
    while pos < end:
        at = match(_UNANCHORED, block, pos, end)[0][0]
        if at < 0:
            break
        line += count(b"\n", counted, at)
        counted = at
        found.append(line)
        pos = find(b"\n", at) + 1
        if pos == 0:
            break
    return found


def only_base64_runs(line: bytes) -> bool:
    """Does nothing but a base64 run's branch find anything in this UTF-8 line (one the pass found)?"""
    return _BUT_RUNS.Match(_UNANCHORED, line, 0, len(line))[0][0] < 0
