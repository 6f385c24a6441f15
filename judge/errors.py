"""Errors a user can cause. The CLI renders each as one line and exits 2; bugs keep their tracebacks."""

from __future__ import annotations

import re

# Characters that would break a message over several lines (str.splitlines() breaks on all of them).
_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def one_line(text: str) -> str:
    """Escape line breaks and other control characters a file's content may put into a message."""
    return _BREAKS.sub(lambda m: repr(m.group())[1:-1], text)


def with_article(word: str) -> str:
    """`an 'assistant'`, `a 'tool-call'`: the indefinite article a word (quoted or not) takes."""
    first = word.lstrip("'\"`")[:1].lower()
    return f"{'an' if first and first in 'aeiou' else 'a'} {word}"


class JudgeInputError(Exception):
    """Bad input: names the file, the line and the field where it can."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.field = field

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = str(self.file)
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        field = f"{self.field}: " if self.field else ""
        return one_line(f"{where}{field}{self.message}")


class FixtureError(JudgeInputError):
    """A scenario (ledger fixture) that breaks the transition rules or names missing keys."""


class TraceError(JudgeInputError):
    """A trace line that is not a valid event, or events out of order."""


class ConfigError(JudgeInputError):
    """A judge configuration that cannot be used."""


class UsageError(JudgeInputError):
    """Arguments that do not fit together."""
