"""Scenario file -> expected ledger, and the lint of a file: what every stage above reads a scenario with."""

from __future__ import annotations

from pathlib import Path

from judge.errors import FixtureError, JudgeInputError
from judge.ledger.fixture import ScenarioFormatError, line_of, load_scenario, read_structured
from judge.ledger.lint import LintIssue, build_ledger, lint
from judge.ledger.reducer import ExpectedLedger
from judge.model import Scenario

DRAFT_MESSAGE = ("this scenario is an unreviewed draft (`judge draft`): review every entry, delta and rule, "
                 "then delete the line `draft: true` (or grade it as it is with --allow-draft)")


def hidden_values(scenario: Scenario) -> tuple[str, ...]:
    """The values the scenario's `no-leak` rules declare as someone else's: redacted (kind
    `no_leak`) wherever its traces are shown or sent (judge.trace.hidden)."""
    return tuple(v for rule in scenario.rules if getattr(rule, "check", None) == "no-leak"
                 for v in getattr(rule, "values", ()) if isinstance(v, str) and v.strip())


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


def lint_path(path: str | Path) -> tuple[ExpectedLedger | None, dict, list[LintIssue]]:
    """(the expected ledger or None, the line map, every error and warning) of a scenario file: every
    format error pydantic finds (not only the first), the fixture lint, and whether its `pair` names
    a scenario that exists. A FixtureError when the file cannot be read or parsed at all."""
    try:
        scenario, lines = load_scenario(path)
    except ScenarioFormatError as exc:
        return None, {}, [LintIssue("error", message, field, line) for message, line, field in exc.problems]
    ledger, issues = lint(scenario, lines)
    return ledger, lines, issues + pair_issues(scenario, Path(path), lines)


def lint_file(path: str | Path) -> list[LintIssue]:
    """Every fixture error and warning of a scenario file (a FixtureError when it cannot be read)."""
    return lint_path(path)[2]


MAX_SCAN_BYTES = 1 << 20


def _scenario_ids(folders: list[Path], wanted: str, skip: Path) -> Path | None:
    """The first scenario file (YAML or JSON, under 1 MB) in these folders with the id `wanted`."""
    for folder in folders:
        for path in sorted(p for pattern in ("*.yaml", "*.yml", "*.json") for p in folder.glob(pattern)):
            try:
                if path.resolve() == skip or path.stat().st_size > MAX_SCAN_BYTES or wanted not in path.read_text(
                        encoding="utf-8", errors="replace"):
                    continue
                data, _ = read_structured(path)
            except (OSError, JudgeInputError):
                continue
            if isinstance(data, dict) and data.get("id") == wanted and "ledger" in data:
                return path
    return None


def _beside(path: Path) -> list[Path]:
    here = path.resolve().parent
    return [here, *sorted(p for p in here.parent.iterdir() if p.is_dir() and p != here)]


def pair_path(scenario: Scenario, path: str | Path) -> Path | None:
    """The file of the scenario `pair` names: in the file's folder or the folders beside it."""
    if not scenario.pair or scenario.pair == scenario.id:
        return None
    return _scenario_ids(_beside(Path(path)), scenario.pair, Path(path).resolve())


def pair_issues(scenario: Scenario, path: Path, lines: dict) -> list[LintIssue]:
    """A warning when `pair` names no scenario in the file's folder or the folders beside it."""
    if not scenario.pair:
        return []
    line = line_of(lines, ("pair",))
    if scenario.pair == scenario.id:
        return [LintIssue("warning", "pair names this scenario itself", "pair", line)]
    here = path.resolve().parent
    if _scenario_ids(_beside(path), scenario.pair, path.resolve()) is not None:
        return []
    return [LintIssue("warning", f"pair {scenario.pair!r} names no scenario beside this file (looked for its id "
                      f"in {here} and the folders beside it)", "pair", line)]
