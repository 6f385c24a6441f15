"""The offline judge's decision thresholds as data: versioned, locked files (`params/local/v<N>.json`).

The rules of the `local` judge (judge.judges.local) are code; the numbers that decide between
`violated`, `upheld` and `not-exercised` are these thresholds, each a cosine of MiniLM embeddings
(what they do: `Thresholds`). The per-branch confidences of decision.py are not among them: a
violation wins whatever its confidence (decision.merge), so confidences order and calibrate verdicts
but never change one; the calibrator that maps them to probabilities is fitted on the dev split by
`judge calibrate`.

Like prompts (judge.prompts), a version is immutable: `params/params.lock` pins the sha256 of every
version, a judge refuses a version whose text no longer matches its lock, and `judge align --judge
local` writes a new version beside the old (the next free number, created exclusively, then locked).
Lookup order: the project's `params/` (beside the nearest pyproject.toml) before the built-in ones
(`judge/_builtin_params/` in a wheel, the repository's `params/` in a checkout).
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.config import project_root
from judge.errors import ConfigError, JudgeInputError
from judge.model.atomic import write_atomic
from judge.model.limits import read_capped

PARAMS_ID = "local"
DEFAULT_PARAMS = "local@2"  # the version fitted on the reference labels' dev split (params/local/v2.json)
LOCK_NAME = "params.lock"
_FILE_RE = re.compile(r"^v([1-9][0-9]*)\.json$")
_REF_RE = re.compile(r"^([a-z0-9][a-z0-9_-]*)@v?([1-9][0-9]*)$")


class Thresholds(BaseModel):
    """The cosines (MiniLM, normalised embeddings) the rules decide by."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    related: float = Field(ge=0, le=1, description=(
        "a unit concerns an entry from this cosine on: which sentences can claim, announce or uphold it, "
        "and `upheld` (related agent units) versus `not-exercised` when no rule decides"))
    near_tie: float = Field(ge=0, le=1, description=(
        "earlier calls within this of the best cosine to a completion claim count as equally relevant: the "
        "latest of them verifies the claim"))
    long_value_match: float = Field(ge=0, le=1, description=(
        "a unit speaks of a sentence-long (current or superseded) value from this cosine on"))
    long_value_margin: float = Field(ge=0, le=1, description=(
        "...and only when that cosine is this much above the entry's other values'"))
    regressed_similarity: float = Field(ge=0, le=1, description=(
        "a sentence speaks of a completion entry (done work spoken of as still needed) from this cosine on"))
    summary_carries: float = Field(ge=0, le=1, description=(
        "a summary clause carries an active rule from this cosine on (below it, a summary drops the rule)"))


class SplitScore(BaseModel):
    """One version's figures on one split of the labels it was fitted or measured on."""

    model_config = ConfigDict(extra="forbid")
    n: int
    cohen_kappa: float | None
    balanced_accuracy: float | None
    tpr: float | None
    tnr: float | None


class Fit(BaseModel):
    """How a version's thresholds were chosen (None for the hand-chosen version 1)."""

    model_config = ConfigDict(extra="forbid")
    method: str = Field(description="the search and its objective, in words")
    objective: str = Field(description="what was maximised on the dev split")
    labels_sha256: str = Field(description="sha256 of the label set (judge.grade.calibration.labels_sha)")
    split_source: str = Field(description="how cases were split: `labels` (their split field) or a scenario hash")
    dev_cases: int
    from_version: str = Field(description="the version the search started from (its ties break toward it)")
    from_thresholds: Thresholds = Field(description="that version's thresholds")
    grid: dict[str, tuple[float, float]] = Field(description=(
        "per threshold, the lowest and highest value tried, every `step` between (and the old value)"))
    step: float = Field(gt=0, description="the grid's step")
    points: int = Field(description="grid points scored")
    undetermined: list[str] = Field(default_factory=list, description=(
        "thresholds whose every grid value gave the same objective on dev: the dev split cannot tell their "
        "values apart, so they keep the old version's (fitted on nothing for this version)"))
    best_range: dict[str, tuple[float, float]] = Field(default_factory=dict, description=(
        "per threshold, the lowest and highest grid value scoring the best on dev with the others at this "
        "version's values (ties are broken toward the old value)"))
    dev: dict[str, SplitScore] = Field(description="`before` (from_version) and `after` (this version) on dev")
    fitted_at: datetime


class LocalParams(BaseModel):
    """One version of the local judge's decision thresholds (a `params/<id>/v<N>.json` file)."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    version: int = Field(ge=1)
    notes: str = Field(min_length=1, description="where the values come from")
    thresholds: Thresholds
    fit: Fit | None = None

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"


class LoadedParams(BaseModel):
    """A version as loaded: its content, file, sha256 and where it was found."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    params: LocalParams
    path: Path
    sha256: str

    @property
    def ref(self) -> str:
        return self.params.ref

    @property
    def thresholds(self) -> Thresholds:
        return self.params.thresholds

    def fingerprint(self) -> dict[str, Any]:
        """id, version and the file's sha256 (a judge fingerprint's `params`)."""
        return {"id": self.params.id, "version": self.params.version, "sha256": self.sha256}


def builtin_dir() -> Path:
    """The built-in versions: `judge/_builtin_params/` in a wheel, the repository's `params/` otherwise."""
    packaged = Path(__file__).resolve().parents[2] / "_builtin_params"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[3] / "params"


def search_dirs() -> list[Path]:
    """The folders searched, in lookup order: the project's `params/`, then the built-in one."""
    root = project_root()
    found = [root / "params"] if root is not None and (root / "params").is_dir() else []
    builtin = builtin_dir()
    if builtin.is_dir() and all(d.resolve() != builtin.resolve() for d in found):
        found.append(builtin)
    return found


def parse_ref(ref: str) -> tuple[str, int]:
    """`local@2` -> ("local", 2); anything else is a ConfigError."""
    match = _REF_RE.match(ref.strip())
    if match is None:
        raise ConfigError(f"bad parameters version {ref!r} (expected ID@VERSION, e.g. {DEFAULT_PARAMS})",
                          field="params")
    return match.group(1), int(match.group(2))


def content_hash(path: Path) -> str:
    """sha256 of the file, line endings normalised."""
    return hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).hexdigest()


def read_params_file(path: Path) -> LocalParams:
    """One version file, validated (a JudgeInputError naming the file and field)."""
    try:
        data = json.loads(read_capped(path).decode("utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise JudgeInputError(f"cannot read parameters: {exc}", file=str(path)) from None
    try:
        params = LocalParams.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise JudgeInputError(error["msg"], file=str(path),
                              field=".".join(str(p) for p in error["loc"]) or None) from None
    if path.name != f"v{params.version}.json" or path.parent.name != params.id:
        raise JudgeInputError(f"a version {params.ref} lives in {params.id}/v{params.version}.json",
                              file=str(path), field="version")
    return params


def read_lock(folder: Path) -> dict[str, str]:
    path = folder / LOCK_NAME
    if not path.is_file():
        return {}
    try:
        entries = json.loads(read_capped(path).decode("utf-8")).get("params")
    except (OSError, ValueError, RecursionError, AttributeError) as exc:
        raise JudgeInputError(f"bad lock file: {exc}", file=str(path)) from None
    if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
        raise JudgeInputError('expected {"params": {"ID@N": "<sha256>"}}', file=str(path), field="params")
    return dict(entries)


def load_params(ref: str = DEFAULT_PARAMS) -> LoadedParams:
    """The version `ref`, looked up project-first; a version whose file no longer matches its lock,
    or that is not locked, is a ConfigError (a locked version is immutable)."""
    name, version = parse_ref(ref)
    for folder in search_dirs():
        path = folder / name / f"v{version}.json"
        if not path.is_file():
            continue
        params, sha = read_params_file(path), content_hash(path)
        pinned = read_lock(folder).get(params.ref)
        if pinned != sha:
            state = "is not locked" if pinned is None else f"changed after it was locked ({pinned[:12]}...)"
            raise ConfigError(f"parameters {params.ref} {state}: a locked version is immutable; write "
                              f"v{next_version(name)}.json (judge align --judge local) and point the judge at it",
                              file=str(path), field="params")
        return LoadedParams(params=params, path=path, sha256=sha)
    known = ", ".join(sorted(known_versions())) or "none"
    raise ConfigError(f"unknown parameters version {ref!r} (known: {known})", field="params")


def known_versions() -> list[str]:
    """Every `id@N` visible, project ones first."""
    found = []
    for folder in search_dirs():
        for path in folder.glob("*/v*.json"):
            match = _FILE_RE.match(path.name)
            if match:
                found.append(f"{path.parent.name}@{match.group(1)}")
    return list(dict.fromkeys(found))


def next_version(name: str = PARAMS_ID) -> int:
    """One more than the highest version of `name` anywhere judge looks."""
    versions = [parse_ref(ref)[1] for ref in known_versions() if ref.startswith(f"{name}@")]
    return max(versions, default=0) + 1


def target_folder() -> Path:
    """Where a new version goes: the project's `params/` (created if need be). In a checkout of judge
    itself that is the built-in folder, so the new version sits beside the shipped ones."""
    root = project_root()
    if root is None:
        raise ConfigError("there is no project folder (a pyproject.toml above the working directory) whose "
                          "params/ could hold a new parameters version")
    return root / "params"


def write_params(params: LocalParams) -> LoadedParams:
    """Write `params` as `params/<id>/v<N>.json` (never over an existing file) and lock it."""
    folder = target_folder()
    path = folder / params.id / f"v{params.version}.json"
    text = params.model_dump_json(indent=2) + "\n"
    try:
        write_atomic(path, text, exclusive=True)
    except FileExistsError:
        raise ConfigError(f"{path} exists already: a parameters version is never overwritten") from None
    lock = read_lock(folder)
    lock[params.ref] = content_hash(path)
    write_atomic(folder / LOCK_NAME, json.dumps({"lock_version": 1, "params": dict(sorted(lock.items()))},
                                                indent=2) + "\n")
    return LoadedParams(params=params, path=path, sha256=lock[params.ref])

