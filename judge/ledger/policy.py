"""Policies: find one by name or path, load it, and merge the policies a scenario `extends`.

A policy (judge.model.policy) is a scenario without per-turn checkpoints. `judge grade --policy P`
grades any trace against it alone (`policy_ledger`: its entries hold from turn 0, a checkpoint is
implied at the end of every turn); a scenario (or a policy) that `extends: [P, ...]` gets P's
entries and rules added to its own (`expand_extends`). A key, or a rule `id`, defined in two of the
files is an error naming both: nothing is overridden silently.

Where a name is looked up (`resolve_policy`): a reference with a `/` or a `.yaml`, `.yml` or `.json`
suffix is a path (relative to the file that extends it, or to the working folder on the command
line); any other is a name, looked up in the project's `policies/` folder (beside its pyproject.toml)
and then among the bundled policies (package data: judge/ledger/policies/). A server grading a
request resolves names only (`paths=False`): a request never makes it read a file of its choosing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.config import project_root
from judge.errors import FixtureError
from judge.ledger.fixture import Loc, ScenarioFormatError, format_problems, line_of, read_structured
from judge.model import LedgerEntry, Policy, Scenario
from judge.model.limits import MAX_DEPTH, DepthError, check_depth, depth_message

SCENARIO_ONLY = ("deltas", "checkpoints")
"""Scenario sections a policy has none of: an empty one (as `judge draft --policy-doc` used to write
them) is read as absent; a non-empty one is an error saying so."""
BUNDLED_DIR = Path(__file__).resolve().parent / "policies"
"""The bundled policies (package data): one `<name>.yaml` each."""
SUFFIXES = (".yaml", ".yml", ".json")
MAX_EXTENDS_DEPTH = 16


def bundled_policies() -> dict[str, Path]:
    """Every bundled policy by name (its file's stem)."""
    return {p.stem: p for p in sorted(BUNDLED_DIR.glob("*.yaml"))}


def _named(name: str) -> Path | None:
    root = project_root()
    for folder in ([root / "policies"] if root is not None else []):
        for suffix in SUFFIXES:
            if (folder / f"{name}{suffix}").is_file():
                return folder / f"{name}{suffix}"
    return bundled_policies().get(name)


def is_path_reference(ref: str) -> bool:
    """Whether a policy reference is a path (a `/` or `\\`, or a YAML/JSON suffix), not a name."""
    return "/" in ref or "\\" in ref or ref.lower().endswith(SUFFIXES)


def resolve_policy(ref: str, base: Path | None = None, *, paths: bool = True,
                   file: str | None = None, line: int | None = None, field: str | None = None) -> Path:
    """The file a policy reference names: a path (relative to `base`, a folder) or a name (the
    project's `policies/`, then the bundled ones); a FixtureError says what was looked for."""
    where: dict[str, Any] = dict(file=file, line=line, field=field)
    if not ref or not ref.strip():
        raise FixtureError("an empty policy reference", **where)
    if paths and is_path_reference(ref):
        path = Path(ref).expanduser()
        path = path if path.is_absolute() or base is None else base / path
        if not path.is_file():
            raise FixtureError(f"policy file not found: {path}", **where)
        return path
    found = _named(ref) if not is_path_reference(ref) else None
    if found is None:
        known = ", ".join(bundled_policies()) or "none"
        hint = "" if paths else " (a server resolves names only, never paths)"
        raise FixtureError(f"no policy named {ref!r}{hint}: bundled policies are {known}; a file is named by its "
                           "path (with its .yaml or .json suffix)", **where)
    return found


def load_policy(path: str | Path) -> tuple[Policy, dict[Loc, int]]:
    """A policy file, validated; a ScenarioFormatError names the file, line and field of each problem."""
    path = Path(path)
    data, lines = read_structured(path)
    if not isinstance(data, dict):
        raise FixtureError("a policy must be a mapping with id, ledger and rules", file=str(path), line=1)
    return validate_policy(data, str(path), lines), lines


def validate_policy(data: dict[str, Any], name: str, lines: dict[Loc, int] | None = None) -> Policy:
    """The Policy model of parsed data (errors as `validate_scenario` gives them)."""
    for key, value in data.items():
        try:
            check_depth(value, MAX_DEPTH - 1)
        except DepthError:
            raise FixtureError(depth_message(), file=name, line=line_of(lines or {}, (key,)), field=str(key)) from None
    data = {k: v for k, v in data.items() if not (k in SCENARIO_ONLY and v in ([], None))}
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        problems = format_problems(exc, lines)
        problems = [(f"unknown field: a policy has no {f}: its entries hold from turn 0 over the whole run "
                     "(grade the file as a scenario, or move them out)" if f in SCENARIO_ONLY else m, line, f)
                    for m, line, f in problems]
        if any(field.startswith("ledger.") and field.endswith(".source_turn") for _, _, field in problems):
            problems = [(m + " (a policy's entries hold from turn 0: leave `source_turn` out)"
                         if f.endswith(".source_turn") else m, line, f) for m, line, f in problems]
        raise ScenarioFormatError(problems, file=name) from None


def as_scenario(policy: Policy) -> Scenario:
    """The policy as a scenario: its entries at turn 0, its rules, no deltas and no checkpoints."""
    return Scenario.model_validate({
        "id": policy.id, "title": policy.title, "description": policy.description, "draft": policy.draft,
        "extends": list(policy.extends),
        "ledger": [LedgerEntry.model_validate(e.model_dump(by_alias=True)) for e in policy.ledger],
        "rules": list(policy.rules)})


@dataclass(frozen=True)
class Inherited:
    """What a scenario took from the policies it extends: the merged scenario, where each inherited
    key and rule id came from, and how many entries and rules are the scenario's own."""

    scenario: Scenario
    origins: dict[str, str]
    own_entries: int
    own_rules: int
    drafts: tuple[str, ...] = ()  # the extended policies still marked `draft: true`


def _defined_keys(scenario: Scenario) -> list[str]:
    return [e.key for e in scenario.ledger] + [d.key for d in scenario.deltas if d.op == "add"]


def _policies(refs: list[str], base: Path | None, file: str, lines: dict, *, paths: bool,
              chain: tuple[Path, ...] = ()) -> list[tuple[Path, Policy]]:
    """The policies `refs` name, each after the policies it extends itself, each file once."""
    out: list[tuple[Path, Policy]] = []
    for i, ref in enumerate(refs):
        loc: dict[str, Any] = dict(file=file, line=line_of(lines, ("extends", i)), field=f"extends.{i}")
        path = resolve_policy(ref, base, paths=paths, **loc).resolve()
        if path in chain:
            raise FixtureError(f"policies extend each other in a circle: {' -> '.join(str(p) for p in (*chain, path))}",
                               **loc)
        if len(chain) >= MAX_EXTENDS_DEPTH:
            raise FixtureError(f"policies extend each other more than {MAX_EXTENDS_DEPTH} deep", **loc)
        policy, own_lines = load_policy(path)
        below = _policies(policy.extends, path.parent, str(path), own_lines, paths=paths, chain=(*chain, path))
        for found in [*below, (path, policy)]:
            if all(found[0] != p for p, _ in out):
                out.append(found)
    return out


def expand_extends(scenario: Scenario, file: str, lines: dict | None = None, *, base: Path | None = None,
                   paths: bool = True) -> Inherited:
    """The scenario with the entries and rules of every policy it `extends` added after its own (a
    FixtureError when a key or a rule id is defined twice, naming both files). `base`: the folder
    relative paths start from (default: the scenario file's)."""
    lines = lines or {}
    if not scenario.extends:
        return Inherited(scenario, {}, len(scenario.ledger), len(scenario.rules))
    base = base if base is not None else Path(file).parent
    owner = {key: file for key in _defined_keys(scenario)}
    rule_owner = {r.id: file for r in scenario.rules if r.id}
    entries, rules = list(scenario.ledger), list(scenario.rules)
    origins: dict[str, str] = {}
    where: dict[str, Any] = dict(file=file, line=line_of(lines, ("extends",)), field="extends")
    drafts: list[str] = []
    for path, policy in _policies(scenario.extends, base, file, lines, paths=paths):
        if policy.draft:
            drafts.append(str(path))
        for entry in policy.ledger:
            if entry.key in owner:
                raise FixtureError(f"key {entry.key!r} is defined in both {owner[entry.key]} and {path}", **where)
            owner[entry.key] = origins[entry.key] = str(path)
            entries.append(LedgerEntry.model_validate(entry.model_dump(by_alias=True)))
        for rule in policy.rules:
            if rule.id and rule.id in rule_owner:
                raise FixtureError(f"rule id {rule.id!r} is defined in both {rule_owner[rule.id]} and {path}", **where)
            if rule.id:
                rule_owner[rule.id] = str(path)
            rules.append(rule)
    merged = scenario.model_copy(update={"ledger": entries, "rules": rules})
    return Inherited(merged, origins, len(scenario.ledger), len(scenario.rules), tuple(drafts))
