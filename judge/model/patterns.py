r"""Patterns a user or a request supplies (a `no-leak` rule's `patterns`, the globs of every rule), compiled
with RE2 so that matching takes time linear in the text, whatever the pattern.

Python's `re` backtracks: `(a+)+$` against 26 `a`s and a `b` takes tens of seconds, and a scenario
comes from a file or from the body of an HTTP request. RE2 (google-re2) compiles to an automaton
instead and refuses what an automaton cannot do (back-references, look-around); a pattern it refuses
is a `PatternError`, which the scenario's validation reports as one line naming the rule and pattern.

RE2's syntax is Python's for everything else, with two differences worth knowing: `\\w`, `\\d`, `\\s`
and `\\b` are ASCII-only, and `(?i)` is the way to ignore case.

Globs (`*`, `?`, `[abc]`, `[!abc]`, `[a-z]`, as `fnmatch.fnmatchcase` reads them; `*` and `?` match
`/` too) are translated to RE2 here, never to a backtracking regex.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import re2

MAX_PATTERN_CHARS = 1000  # a pattern, or a glob, longer than this is refused
# A glob's answers for the first MEMO_TEXTS texts of at most MEMO_CHARS characters it is asked about are
# kept: a run asks the same few (glob, path) pairs over and over (100k events: 49,672 questions, 168
# distinct), and each RE2 call through google-re2's wrapper encodes the text and decodes offsets. At
# most ~20 KB a glob, first come first kept (a trace cannot push out what it did not put in).
MEMO_TEXTS, MEMO_CHARS = 64, 256
_MAX_MEM = 8 << 20  # bytes of automaton one pattern may take (RE2 refuses a pattern that needs more)


class PatternError(ValueError):
    """A pattern RE2 cannot compile (or one too long): `str()` says why, in one line."""


def _options(case_sensitive: bool = True) -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern to stderr
    options.max_mem = _MAX_MEM
    options.case_sensitive = case_sensitive
    return options


def _reason(exc: Exception) -> str:
    text = exc.args[0] if exc.args else str(exc)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text)


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """An RE2 regex for a user's pattern (search it with `.search(text)`); PatternError when RE2
    cannot compile it (a back-reference, a look-around, a repetition over 1000, too large)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"longer than {MAX_PATTERN_CHARS} characters")
    try:
        return re2.compile(pattern, _options())
    except re2.error as exc:
        reason = _reason(exc)
        hint = ("; RE2 matches in linear time, so it has no back-references or look-arounds"
                if "escape" in reason or "perl operator" in reason else "")
        raise PatternError(f"RE2 cannot compile it ({reason}){hint}") from None


def check_pattern(pattern: str) -> None:
    """Raise PatternError when `pattern` would not compile."""
    compile_pattern(pattern)


def check_patterns(patterns: list[str]) -> None:
    """Raise ValueError naming the first of `patterns` that would not compile (for a model validator)."""
    for pattern in patterns:
        try:
            compile_pattern(pattern)
        except PatternError as exc:
            raise ValueError(f"pattern '{pattern}': {exc}") from None


def search(pattern: str, text: str) -> bool:
    """Does the (user's) pattern occur in `text`? Linear in the text."""
    return compile_pattern(pattern).search(text) is not None


def _class_char(ch: str) -> str:
    return f"\\x{{{ord(ch):x}}}"


def _bracket(pat: str, i: int) -> tuple[str, int] | None:
    """The RE2 class of the bracket expression whose `[` is at pat[i - 1], and the index after its
    `]`; None when it has no `]` (the `[` is then a literal), as fnmatch reads it."""
    n = len(pat)
    j = i
    if j < n and pat[j] == "!":
        j += 1
    if j < n and pat[j] == "]":
        j += 1
    while j < n and pat[j] != "]":
        j += 1
    if j >= n:
        return None
    stuff = pat[i:j]
    negated = stuff.startswith("!")
    if negated:
        stuff = stuff[1:]
    items, k = [], 0
    while k < len(stuff):
        if k + 2 < len(stuff) and stuff[k + 1] == "-":
            lo, hi = stuff[k], stuff[k + 2]
            if lo <= hi:  # an empty range (`z-a`) matches nothing, as in fnmatch
                items.append(f"{_class_char(lo)}-{_class_char(hi)}")
            k += 3
        else:
            items.append(_class_char(stuff[k]))
            k += 1
    if not items:
        return ("." if negated else r"[^\x00-\x{10ffff}]"), j + 1
    return f"[{'^' if negated else ''}{''.join(items)}]", j + 1


def glob_regex(glob: str) -> str:
    """The RE2 source (to be matched whole) of a glob, as fnmatch.fnmatchcase reads it."""
    out, i, n = ["(?s)"], 0, len(glob)
    while i < n:
        c = glob[i]
        i += 1
        if c == "*":
            if out[-1] != ".*":
                out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[" and (bracket := _bracket(glob, i)) is not None:
            part, i = bracket
            out.append(part)
        else:
            out.append(_class_char(c) if not c.isalnum() else c)
    return "".join(out)


def check_glob(glob: str) -> None:
    """Raise PatternError for a glob too long to match in reasonable time (the time of an automaton
    grows with the pattern as well as with the text)."""
    if len(glob) > MAX_PATTERN_CHARS:
        raise PatternError(f"a glob longer than {MAX_PATTERN_CHARS} characters")


class GlobMatcher:
    """Whether a string matches one glob whole (fnmatchcase), in linear time; answers for short
    strings are kept (`kept`: at most MEMO_TEXTS of them, each at most MEMO_CHARS long), since rules
    ask about the same tool names and paths over and over."""

    __slots__ = ("_fullmatch", "kept")

    def __init__(self, fullmatch: Callable[[str], Any]) -> None:
        self._fullmatch = fullmatch
        self.kept: dict[str, bool] = {}

    def __call__(self, text: str) -> bool:
        """Whether `text` matches the glob whole."""
        hit = self.kept.get(text)
        if hit is None:
            hit = self._fullmatch(text) is not None
            if len(self.kept) < MEMO_TEXTS and len(text) <= MEMO_CHARS:
                self.kept[text] = hit
        return hit


@lru_cache(maxsize=4096)
def glob_matcher(glob: str) -> GlobMatcher:
    """A GlobMatcher of the glob; PatternError for a glob too long (`check_glob`)."""
    check_glob(glob)
    try:
        compiled = re2.compile(glob_regex(glob), _options())
    except re2.error as exc:
        raise PatternError(f"RE2 cannot compile it ({_reason(exc)})") from None
    return GlobMatcher(compiled.fullmatch)


def glob_match(text: str, glob: str) -> bool:
    """`fnmatch.fnmatchcase(text, glob)`, in linear time."""
    return glob_matcher(glob)(text)
