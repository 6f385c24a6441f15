"""One linear-time pass over many raw lines that finds every line the redaction precheck could flag.

`found_lines` looks at a block of UTF-8 JSONL lines twice, both linear in the block, and returns the
index of every line holding a *candidate*: a superset of what judge.trace.precheck.line_needs_redaction
says yes to, in two lists:

- lines for the whole line test: a single RE2 automaton (google-re2: a DFA, linear in the input, no
  backtracking), `PATTERN`, finds every test's anchor but the base64 one, resumed after each line
  found;
- lines found for a base64 run alone (`base64_run_lines`): a run of 16 or more base64 characters
  that mixes capital and small letters, as the precheck's base64 test needs before it decodes one
  (judge.trace.encoded.plausible). A second RE2 automaton finds each run of 16 or more (whole: the
  class is greedy) in one pass, and only a run holding both cases is kept: paths and identifiers
  (runs of one case, most of them) are passed over here instead of by the line test. `\\` counts as
  a base64 character, so a run joined by `\\/` in the raw line is one run.

The reader asks the line test about the first list and only the base64 test about the second
(judge.trace.precheck.found_line_needs_redaction), so the lines it flags are exactly the lines the
per-line function flags (tests/test_prescan.py holds it to that, over every detected kind, fuzzed
lines and the benchmark trace).

Each branch of `PATTERN` is the byte-level superset of one test of the line function:

- the literals of `TRIGGER` (key prefixes, `eyJ`, PEM, `\\u` escapes, `+` and a digit, AWS ids);
- `@` (e-mail addresses, credentials in URLs);
- `bearer`, `basic`, `aws` as `lower()` would fold them (the letter classes below hold every
  character whose lowercase is that ASCII letter: `ſ` is an `s`, the Kelvin sign a `k`);
- a secret-name hint followed by what `_named_here` needs after it: word characters then quotes,
  spaces or escapes then `=` or `:` (an assignment), or the end of its JSON string then `:` (a key);
- an IBAN's shape; nine digits with number separators between them (every number shape has 9);
- the literals and shapes of judge.trace.providers (`PRIVATE KEY`, `hooks.slack.com`, a Mailchimp
  key's `-us`, a Discord token's dots, a Telegram token's colon) and a secret noun of
  judge.trace.prose followed by `is`/`was` (after spaces or `\\t` escapes) or by `:`/`=`.

Where the exact test bounds a distance (80 characters, 200), the branch does not: it may find more,
never less. Non-ASCII characters stand in for Python's Unicode `\\w` and `\\s` here (RE2's are ASCII),
and any of them sends the line to the whole test (the folded copy may hold other base64 runs).
A lone surrogate cannot be in UTF-8: lines given as text are checked for one apart (precheck).
"""

from __future__ import annotations

import re2

from judge.trace.prose import KEY_QUALIFIERS, NOUNS

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
    r"sk-[A-Za-z0-9_-]{16}|xox[abposre]-|xapp-|glpat-|gldt-|glrt-|glft-|glsoat-|glcbt-|glimt-|glptt-|glagent-|gloas-"
    r"|sq0csp-|sq0atp-|[sr]k_(?:live|test)_|github_pat_|gh[pousr]_|whsec_|hf_[A-Za-z0-9]{30}|npm_[A-Za-z0-9]{36}"
    r"|eyJ|-----BEGIN|pypi-AgE|\\u|\+\p{Nd}|GR1348941"
    r"|A(?:KIA|SIA|BIA|CCA|3T|C[0-9a-z]{32}|Iza|ccountKey=|KC[A-Za-z0-9]{10}|P[0-9A-F][A-Za-z0-9]{8})"
    r"|S(?:K[0-9a-z]{32}|G\.)"
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
# judge.trace.precheck._provider_in (literals and shapes; a Mailchimp key by its `-us` and digit alone:
# counting the 32 characters before it made the whole automaton ~40% slower on the benchmark trace)
# and _PROSE_SHAPE (a secret noun of judge.trace.prose, then `is`/`was` or `:`/`=`).
_PROVIDERS = (r"PRIVATE KEY|PuTTY-User-Key-File-|hooks\.slack\.com|" + folded("softlayer.com")
              + r"|-us[0-9]|\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}|[0-9]{8}:[A-Za-z0-9_-]{35}")
_NOUN = "(?:" + "|".join([*(folded(w) for w in NOUNS), folded("pin") + "(?:[ _-]?(?:" + folded("code") + "|"
                          + folded("number") + "))?",
                          *(folded(q) + "[ _-]?" + folded("key") for q in KEY_QUALIFIERS)]) + ")"
_PROSE = (_NOUN + r"(?:(?:\\t|[\t ])+" + _alternation("is", "was", "are", "were")
          + r"|(?:\\[^\n]|[\"' \t])*[:=])")
_BRANCHES = [
    _TRIGGER,
    _PROVIDERS,
    _PROSE,
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
PATTERN = "|".join(_BRANCHES)


def _compile(pattern: str) -> re2._Regexp:
    options = re2.Options()
    options.max_mem = 64 << 20  # room for the DFA of the whole alternation
    options.never_capture = True
    return re2.compile(pattern.encode("utf-8"), options)


_REGEXP = _compile(PATTERN)._regexp
_UNANCHORED = re2._Anchor.UNANCHORED
# A run of 16 or more of the base64 alphabet of judge.trace.encoded.RUN, or `\` (so that a run
# joined by `\/` in the raw line stays one run): found by RE2 in one pass over a block, each run
# as a whole (greedy), then asked whether it holds both cases.
_RUN = _compile(r"[A-Za-z0-9+/_\\-]{16,}")._regexp


def pattern_offsets(block: bytes) -> list[int]:
    """Where `PATTERN` first finds something in each line of `block` (UTF-8 lines, each ending in
    `\\n`) that holds a find, in order: one automaton pass over the block, resumed after each line
    found (byte offsets: `line_indices` says which lines)."""
    found: list[int] = []
    match = _REGEXP.Match
    find = block.find
    end = len(block)
    pos = 0
    while pos < end:
        at = match(_UNANCHORED, block, pos, end)[0][0]
        if at < 0:
            break
        found.append(at)
        pos = find(b"\n", at) + 1
        if pos == 0:
            break
    return found


def base64_run_offsets(block: bytes) -> list[int]:
    """Where the first run of 16 or more base64 characters (or `\\`) with both capital and small
    letters in it starts, in each line of `block` that holds one, in order."""
    found: list[int] = []
    match = _RUN.Match
    end = len(block)
    pos = 0
    while pos < end:
        at, stop = match(_UNANCHORED, block, pos, end)[0]
        if at < 0:
            break
        run = block[at:stop]
        if run.lower() != run and run.upper() != run:  # both cases (ASCII: every byte of a run is)
            found.append(at)
            stop = block.find(b"\n", stop) + 1  # on to the next line
            if stop == 0:
                break
        pos = stop
    return found


def line_indices(offsets: list[int], lines: list[bytes]) -> list[int]:
    """The index of the line each of `offsets` (ascending, each in a different line) lies in, for
    the lines of a block split at its newlines: a walk over the lengths of the lines, not a count of
    the block's newlines (a pass over every byte of it)."""
    found: list[int] = []
    index = 0
    end = len(lines[0]) if lines else 0  # where line `index`'s newline is
    for at in offsets:
        while at > end:
            index += 1
            end += len(lines[index]) + 1
        found.append(index)
    return found


def pattern_lines(block: bytes) -> list[int]:
    """Indices of the lines of `block` where `PATTERN` finds something, in order."""
    return line_indices(pattern_offsets(block), block.split(b"\n"))


def base64_run_lines(block: bytes) -> list[int]:
    """Indices of the lines of `block` holding a run of 16 or more base64 characters (or `\\`) with
    both capital and small letters in it, in order."""
    return line_indices(base64_run_offsets(block), block.split(b"\n"))


def found_lines(block: bytes, lines: list[bytes] | None = None) -> tuple[list[int], list[int]]:
    """(lines for the whole line test, lines found for a base64 run alone) of `block`: a line of
    the first list is not in the second. `lines`: the block split at its newlines, when the caller
    has it (a trailing empty piece may be left out)."""
    lines = block.split(b"\n") if lines is None else lines
    whole = line_indices(pattern_offsets(block), lines)
    runs = line_indices(base64_run_offsets(block), lines)
    if whole and runs:
        taken = set(whole)
        runs = [index for index in runs if index not in taken]
    return whole, runs


def candidate_lines(block: bytes) -> list[int]:
    """Every line of `block` either pass finds, in order (each once)."""
    whole, runs = found_lines(block)
    return sorted(whole + runs) if runs else whole
