"""Errors a user can cause. The CLI renders each as one line and exits 2; bugs keep their tracebacks."""

from __future__ import annotations


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
        return f"{where}{field}{self.message}"


class FixtureError(JudgeInputError):
    """A scenario (ledger fixture) that breaks the transition rules or names missing keys."""


class TraceError(JudgeInputError):
    """A trace line that is not a valid event, or events out of order."""


class ConfigError(JudgeInputError):
    """A judge configuration that cannot be used."""


class UsageError(JudgeInputError):
    """Arguments that do not fit together."""
