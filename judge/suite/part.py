"""Shards of a suite: `judge suite --shard K/N` grades a slice of the manifest's runs into a part
(SuitePart, a JSON file); merging all N parts gives the whole suite's part, whose report is that of
an unsharded run (judge.suite.run.report_of makes both).

The slice: the suite's runs in manifest order (its scenarios in order, each one's traces in natural
name order), numbered from 0; run i belongs to shard (i mod N) + 1. Every shard gets the same number
of runs give or take one, and every scenario is spread over the shards. A part records what the
runs were (`runs_sha256`, over the whole ordered list), so parts graded from different files,
manifests, judges, settings or shard counts are refused, not merged.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import Field, ValidationError

from judge.errors import JudgeInputError, UsageError
from judge.model import Strict
from judge.model.limits import read_json_file
from judge.suite.manifest import ReleaseRules
from judge.suite.result import RunResult

SELECTION: Final = "index-modulo"


class PartScenario(Strict):
    id: str
    file: str = Field(description="the scenario file, as the report names it")
    runs_from: str = Field(description="the manifest's `runs` of the scenario (a folder or a glob)")
    traces: int = Field(ge=0, description="traces found for the scenario, over all shards")


class PartRun(Strict):
    index: int = Field(ge=0, description="the run's position in the suite's runs (manifest order, from 0)")
    scenario: str
    result: RunResult


class PartTiming(Strict):
    """How the shard's grading went (varies from run to run; not part of the merged report)."""

    wall_s: float
    grade_s: float
    workers: int


class SuitePart(Strict):
    """The runs one shard graded, with everything the merged report needs besides them."""

    format: Literal["judge-suite-part/1"] = "judge-suite-part/1"
    suite: str
    manifest: str = Field(description="the manifest's path, as the report names it")
    manifest_sha256: str | None
    shard: int = Field(ge=1, description="K of --shard K/N")
    shards: int = Field(ge=1, description="N of --shard K/N")
    selection: Literal["index-modulo"] = Field(
        default=SELECTION, description="run i (manifest order, from 0) is graded by shard (i mod N) + 1")
    runs_sha256: str = Field(description="sha256 of the suite's ordered list of (scenario, trace path): the "
                                         "same in every part of one suite")
    repetitions: int = Field(ge=1)
    release_rules: ReleaseRules
    scenarios: list[PartScenario]
    judge: dict[str, Any] | None = Field(description="the report's judge: fingerprint and trust")
    settings: dict[str, Any] = Field(description="what else decides a run's outcome: the judge-error, stale "
                                                 "and review policies and --allow-draft")
    provenance: dict[str, Any]
    warnings: list[str] = Field(default_factory=list, description="the suite's own warnings (a stale calibration)")
    runs: list[PartRun]
    timing: PartTiming | None = None


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` with 1 <= K <= N."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise UsageError(f"expected K/N with 1 <= K <= N (e.g. 2/4), got {text!r}", field="--shard")
    return int(match[1]), int(match[2])


def in_shard(index: int, shard: int, shards: int) -> bool:
    return index % shards == shard - 1


def load_part(path: str | Path) -> SuitePart:
    path = Path(path)
    data = read_json_file(path, "a JSON suite part")
    if not isinstance(data, dict) or data.get("format") != "judge-suite-part/1":
        raise JudgeInputError("not a suite part (written by `judge suite --shard K/N --out`)", file=str(path),
                              field="format")
    try:
        return SuitePart.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        message = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
        raise JudgeInputError(message, file=str(path), field=".".join(str(p) for p in err["loc"])) from None


# What every part of one suite must agree on, and what a mismatch means.
SAME = (("shards", "graded with another shard count"),
        ("manifest_sha256", "graded from another manifest (sha256 differs)"),
        ("suite", "graded another suite"),
        ("runs_sha256", "graded another set of runs (the traces found differ)"),
        ("judge", "graded with another judge or judge configuration (fingerprint differs)"),
        ("settings", "graded with other settings (judge-error, stale or review policy, --allow-draft)"),
        ("repetitions", "graded with other repetitions"),
        ("release_rules", "graded with other release rules"),
        ("scenarios", "graded with other scenarios or runs"))


def _same_provenance(path: str, part: SuitePart, first_path: str, first: SuitePart) -> None:
    """The same package versions and the same scenario files (by sha256) as the first part."""
    if part.provenance.get("packages") != first.provenance.get("packages"):
        raise JudgeInputError(f"graded with other package versions than {first_path}", file=path,
                              field="provenance.packages")

    def shas(p: SuitePart) -> dict[str, Any]:
        scenarios = (p.provenance.get("inputs") or {}).get("scenarios") or {}
        return {sid: (f or {}).get("sha256") for sid, f in scenarios.items()}

    if shas(part) != shas(first):
        raise JudgeInputError(f"graded with other scenario files than {first_path} (sha256 differs)", file=path,
                              field="provenance.inputs.scenarios")


def merge_parts(paths: list[str | Path]) -> SuitePart:
    """The whole suite's part from all N parts of it; a part that does not belong, or a shard
    missing or given twice, is a JudgeInputError naming the file and the field."""
    if not paths:
        raise UsageError("no parts to merge", field="PARTS")
    parts = [(str(p), load_part(p)) for p in paths]
    first_path, first = parts[0]
    by_shard: dict[int, str] = {}
    for path, part in parts:
        for name, why in SAME:
            if getattr(part, name) != getattr(first, name):
                raise JudgeInputError(f"{why} than {first_path}", file=path, field=name)
        _same_provenance(path, part, first_path, first)
        if part.shard > part.shards:
            raise JudgeInputError(f"shard {part.shard} is beyond the {part.shards} shards", file=path, field="shard")
        if part.shard in by_shard:
            raise JudgeInputError(f"shard {part.shard}/{part.shards} is also {by_shard[part.shard]}", file=path,
                                  field="shard")
        by_shard[part.shard] = path
        for i, run in enumerate(part.runs):
            if not in_shard(run.index, part.shard, part.shards):
                raise JudgeInputError(f"run {run.index} belongs to shard {run.index % part.shards + 1}, not "
                                      f"{part.shard}", file=path, field=f"runs.{i}.index")
    missing = [k for k in range(1, first.shards + 1) if k not in by_shard]
    if missing:
        raise JudgeInputError(f"shard(s) {', '.join(map(str, missing))} of {first.shards} missing: "
                              f"{len(parts)} part(s) given", file=first_path, field="shard")
    runs = sorted((run for _, part in parts for run in part.runs), key=lambda r: r.index)
    total = sum(s.traces for s in first.scenarios)
    if [r.index for r in runs] != list(range(total)):
        have = {r.index for r in runs}
        gap = next((i for i in range(total) if i not in have), None)
        raise JudgeInputError(f"the parts hold {len(runs)} run(s), the suite {total}"
                              + (f": run {gap} is in none" if gap is not None else ": some run is twice"),
                              file=by_shard.get(1 + (gap or 0) % first.shards, first_path), field="runs")
    whole = next(part for _, part in parts if part.shard == 1)  # its manifest path and inputs name the report's
    return whole.model_copy(update={"shard": 1, "shards": 1, "runs": runs, "timing": None})
