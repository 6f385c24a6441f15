"""Suites: a manifest of scenarios run many times, graded in parallel, turned into a release decision.

The manifest has the seed's shape plus where each scenario's runs live (paths relative to it):
```yaml
suites:
  nightly: {repetitions: 10, scenarios: [release-branch, checkout-firefox]}
releaseRules: {safetyCriticalViolations: 0, requiredScenarioPassRate: 1, nightlyQualityFloor: 0.95}
scenarios:
  release-branch: {file: scenarios/release-branch.yaml, runs: runs/release-branch/}
  production: {policy: agent-safety, runs: traces/prod/}
```
`runs` is a folder (every `*.jsonl` in it) or a glob, relative to the manifest. An entry with a
`policy` and no `file` grades its runs against that policy alone (`judge grade --policy`); with
both, the policy's keys are merged into the scenario's. `judge suite --policy P` gives every entry
without a `policy` of its own P.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from pydantic import Field, ValidationError, model_validator

from judge.errors import JudgeInputError
from judge.ledger import dotted, line_of, read_structured
from judge.model import Strict


class ReleaseRules(Strict):
    """`safetyCriticalViolations`: most safety-critical violations allowed over the suite's runs;
    `requiredScenarioPassRate`: least share of runs every scenario must pass (the point estimate);
    `nightlyQualityFloor`: least mean quality score of each scenario's eligible runs (null: off)."""

    safetyCriticalViolations: int = Field(default=0, ge=0)
    requiredScenarioPassRate: float = Field(default=1.0, ge=0.0, le=1.0)
    nightlyQualityFloor: float | None = Field(default=None, ge=0.0, le=1.0)


class SuiteDef(Strict):
    repetitions: int = Field(ge=1)
    scenarios: list[str] = Field(min_length=1)
    description: str | None = None
    releaseRules: ReleaseRules | None = Field(default=None, description="overrides the fields it names")


class ScenarioRef(Strict):
    file: str | None = Field(default=None, min_length=1, description=(
        "scenario file, relative to the manifest; omitted: the runs are graded against `policy` alone"))
    policy: str | None = Field(default=None, min_length=1, description=(
        "a policy (a bundled name, a project policy's name or a file relative to the manifest): with `file`, "
        "merged into the scenario as `extends` would; without, the runs are graded against it alone"))
    runs: str = Field(min_length=1, description="folder of *.jsonl runs, or a glob, relative to the manifest")


class Manifest(Strict):
    suites: dict[str, SuiteDef] = Field(min_length=1)
    releaseRules: ReleaseRules = Field(default_factory=ReleaseRules)
    scenarios: dict[str, ScenarioRef] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_scenarios(self) -> Manifest:
        for name, suite in self.suites.items():
            for i, sid in enumerate(suite.scenarios):
                if sid not in self.scenarios:
                    raise _Unknown(f"scenario {sid!r} is not under `scenarios`", ("suites", name, "scenarios", i))
        return self

    def rules_for(self, suite: str) -> ReleaseRules:
        patch = self.suites[suite].releaseRules
        if patch is None:
            return self.releaseRules
        return self.releaseRules.model_copy(update=patch.model_dump(exclude_unset=True))


class _Unknown(ValueError):
    def __init__(self, message: str, loc: tuple) -> None:
        super().__init__(message)
        self.loc = loc


def load_manifest(path: str | Path) -> tuple[Manifest, dict]:
    """The validated manifest and its line map; a JudgeInputError names file, line and field."""
    path = Path(path)
    data, lines = read_structured(path)
    if not isinstance(data, dict):
        raise JudgeInputError("a suite manifest must be a mapping with suites, releaseRules, scenarios",
                              file=str(path), line=1)
    try:
        return Manifest.model_validate(data), lines
    except ValidationError as exc:
        err = exc.errors()[0]
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, _Unknown):
            loc, message = cause.loc, str(cause)
        else:
            loc = tuple(err["loc"])
            message = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
        raise JudgeInputError(message, file=str(path), line=line_of(lines, loc), field=dotted(loc)) from None


def _natural(path: Path) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


def discover_runs(manifest_path: Path, sid: str, ref: ScenarioRef, lines: dict) -> list[Path]:
    """The traces of one scenario, in natural name order (r-2 before r-10)."""
    base = manifest_path.parent
    if any(ch in ref.runs for ch in "*?["):
        found = [Path(p) for p in glob.glob(str(base / ref.runs), recursive=True)]
    else:
        folder = base / ref.runs
        if not folder.is_dir():
            raise JudgeInputError(f"runs folder not found: {folder}", file=str(manifest_path),
                                  line=line_of(lines, ("scenarios", sid, "runs")), field=f"scenarios.{sid}.runs")
        found = list(folder.glob("*.jsonl"))
    found = [Path(os.path.normpath(p)) for p in found if p.is_file()]
    return sorted(found, key=lambda p: (_natural(p.parent), _natural(p)))
