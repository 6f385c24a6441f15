"""Scenario file -> expected ledger, and the lint of a file: what every stage above reads a scenario with."""

from __future__ import annotations

from pathlib import Path

from judge.errors import FixtureError
from judge.ledger.fixture import line_of, load_scenario
from judge.ledger.lint import LintIssue, build_ledger, lint
from judge.ledger.reducer import ExpectedLedger
from judge.model import Scenario

DRAFT_MESSAGE = ("this scenario is an unreviewed draft (`judge draft`): review every entry, delta and rule, "
                 "then delete the line `draft: true` (or grade it as it is with --allow-draft)")


def refuse_draft(scenario: Scenario, *, file: str, lines: dict | None = None) -> None:
    """A FixtureError naming the `draft` line when the scenario is a draft no one has reviewed."""
    if scenario.draft:
        raise FixtureError(DRAFT_MESSAGE, file=file, line=line_of(lines or {}, ("draft",)), field="draft")


def load_ledger(path: str | Path, *, allow_draft: bool = False) -> ExpectedLedger:
    """Scenario file -> expected ledger; a FixtureError names the first problem (file, line, field).
    A draft (`draft: true`) is refused unless `allow_draft`."""
    scenario, lines = load_scenario(path)
    ledger = build_ledger(scenario, lines, file=str(path))
    if not allow_draft:
        refuse_draft(scenario, file=str(path), lines=lines)
    return ledger


def lint_file(path: str | Path) -> list[LintIssue]:
    """Every fixture error and warning of a scenario file (a FixtureError when it cannot be read)."""
    scenario, lines = load_scenario(path)
    return lint(scenario, lines)[1]
