"""Scenario file -> expected ledger, and the lint of a file: what every stage above reads a scenario with."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from judge.errors import FixtureError, JudgeInputError
from judge.ledger.fixture import ScenarioFormatError, line_of, load_scenario, read_structured
from judge.ledger.lint import LintIssue, build_ledger, lint
from judge.ledger.policy import Inherited, as_scenario, expand_extends, load_policy, resolve_policy, validate_policy
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


def load_ledger(path: str | Path, *, allow_draft: bool = False, policy_paths: bool = True,
                extra: Iterable[str] = ()) -> ExpectedLedger:
    """Scenario file -> expected ledger, with the policies it `extends` merged in; a FixtureError
    names the first problem (file, line, field). A draft (`draft: true`) is refused unless
    `allow_draft`. `policy_paths`: whether `extends` may name files (False: bundled names only).
    `extra`: more policies to merge in (names or absolute paths; one the scenario extends already
    is merged once)."""
    scenario, lines = load_scenario(path)
    if extra:
        scenario = scenario.model_copy(update={"extends": [*scenario.extends, *extra]})
    inherited = expand_extends(scenario, str(path), lines, paths=policy_paths)
    ledger = build_ledger(inherited.scenario, lines, file=str(path))
    ledger.origins = inherited.origins
    if not allow_draft:
        refuse_draft(scenario, file=str(path), lines=lines)
        refuse_draft_policies(inherited)
    return ledger


def refuse_draft_policies(inherited: Inherited) -> None:
    """A FixtureError when a policy the scenario extends is an unreviewed draft."""
    if inherited.drafts:
        raise FixtureError(f"extends the unreviewed draft policy {inherited.drafts[0]}: " + DRAFT_MESSAGE,
                           file=inherited.drafts[0], field="draft")


def policy_ledger(ref: str | Path, *, allow_draft: bool = False, paths: bool = True) -> ExpectedLedger:
    """A policy (a bundled name, a project policy's name or a file) -> the expected ledger every
    trace is graded against with `--policy`: its entries (and those of the policies it extends)
    from turn 0, its rules over the whole run, a checkpoint implied at the end of every turn."""
    path = resolve_policy(str(ref), paths=paths)
    policy, lines = load_policy(path)
    inherited = expand_extends(as_scenario(policy), str(path), lines, paths=paths)
    ledger = build_ledger(inherited.scenario, lines, file=str(path))
    ledger.policy, ledger.origins = str(path), inherited.origins
    if not allow_draft:
        refuse_draft(inherited.scenario, file=str(path), lines=lines)
        refuse_draft_policies(inherited)
    return ledger


def policy_from_data(data: dict, name: str, *, allow_draft: bool = False) -> ExpectedLedger:
    """A policy given as parsed data (the service's request): `extends` may name bundled policies only."""
    policy = validate_policy(data, name)
    inherited = expand_extends(as_scenario(policy), name, paths=False)
    ledger = build_ledger(inherited.scenario, None, file=name)
    ledger.policy, ledger.origins = name, inherited.origins
    if not allow_draft:
        refuse_draft(inherited.scenario, file=name)
        refuse_draft_policies(inherited)
    return ledger


def _inherited_issue(issue: LintIssue, inherited: Inherited) -> bool:
    """An issue about an entry or a rule the scenario took from a policy (that policy's own lint
    reports it; the scenario cannot fix it)."""
    parts = (issue.field or "").split(".")
    if len(parts) < 2 or not parts[1].isdigit():
        return False
    own = {"ledger": inherited.own_entries, "rules": inherited.own_rules}.get(parts[0])
    return own is not None and int(parts[1]) >= own


def lint_path(path: str | Path, *, policy: bool = False) -> tuple[ExpectedLedger | None, dict, list[LintIssue]]:
    """(the expected ledger or None, the line map, every error and warning) of a scenario file (or,
    with `policy`, of a policy file or name): every format error pydantic finds (not only the first),
    the fixture lint, whether its `pair` names a scenario that exists, and the policies it extends
    (a missing one or a key defined twice is an error). A FixtureError when the file cannot be read
    or parsed at all."""
    try:
        if policy:
            path = resolve_policy(str(path))
            found, lines = load_policy(path)
            scenario = as_scenario(found)
        else:
            scenario, lines = load_scenario(path)
    except ScenarioFormatError as exc:
        return None, {}, [LintIssue("error", message, field, line) for message, line, field in exc.problems]
    try:
        inherited = expand_extends(scenario, str(path), lines)
    except FixtureError as exc:
        if exc.file and exc.file != str(path):  # a problem inside a policy it extends: name that file
            return None, lines, [LintIssue("error", str(exc), "extends", line_of(lines, ("extends",)))]
        return None, lines, [LintIssue("error", exc.message, exc.field, exc.line)]
    ledger, issues = lint(inherited.scenario, lines)
    ledger.origins = inherited.origins
    if policy:
        ledger.policy = str(path)
    issues = [i for i in issues if not _inherited_issue(i, inherited)]
    return ledger, lines, issues + ([] if policy else pair_issues(scenario, Path(path), lines))


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
