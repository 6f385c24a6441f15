"""Scenario file -> expected ledger, and the lint of a file: what every stage above reads a scenario with."""

from __future__ import annotations

from pathlib import Path

from judge.ledger.fixture import load_scenario
from judge.ledger.lint import LintIssue, build_ledger, lint
from judge.ledger.reducer import ExpectedLedger


def load_ledger(path: str | Path) -> ExpectedLedger:
    """Scenario file -> expected ledger; a FixtureError names the first problem (file, line, field)."""
    scenario, lines = load_scenario(path)
    return build_ledger(scenario, lines, file=str(path))


def lint_file(path: str | Path) -> list[LintIssue]:
    """Every fixture error and warning of a scenario file (a FixtureError when it cannot be read)."""
    scenario, lines = load_scenario(path)
    return lint(scenario, lines)[1]
