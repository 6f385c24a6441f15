"""The run log: every `judge grade` keeps its JSON report in a folder (`.judge/runs/` beside the
project by default; judge.config.run_log_dir), under a name that sorts by time and is unique
(`20261201-091354-3fa0.json`: the UTC second, then a random suffix; the file is created
exclusively, never over another; runs of the same second are ordered by their files' mtime). This module writes a
report there, lists the log, finds
a logged run by path, id, id prefix, `latest` or `previous`, and compares two reports: for each
scenario both graded, which keys newly fail, which were fixed, and how quality and outcome moved.
It returns models; judge.render.history turns them into text.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from judge.errors import JudgeInputError, UsageError
from judge.model import GradeReport, RunReport, Strict
from judge.model.atomic import write_atomic

SUFFIX = ".json"
OUTCOME_RANK = {"pass": 0, "inconclusive": 1, "fail": 2}
ALIASES = ("latest", "previous")


# ---------------------------------------------------------------- writing and listing


STAMP = "%Y%m%d-%H%M%S"


def run_id_for(now: datetime) -> str:
    """`20261201-091354-3fa0`: the UTC second (sorts by time), then a random suffix."""
    return f"{now.astimezone(UTC):{STAMP}}-{secrets.token_hex(2)}"


def _order(path: Path) -> tuple[str, int, str]:
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        mtime = 0
    return path.name[:15], mtime, path.name


def write_run(report: GradeReport, directory: str | Path, *, now: datetime | None = None) -> Path:
    """Write `report` into the run log `directory` (created if missing) under a new, unique name.
    A folder it creates gets a `.gitignore` holding `*`. Raises OSError when the folder cannot
    be written."""
    directory = Path(directory)
    if not directory.is_dir():
        directory.mkdir(parents=True, exist_ok=True)
        # as pytest does with its cache: a folder git ignores by itself (delete the file to commit it)
        write_atomic(directory / ".gitignore", "# the run log of `judge grade`: local history, not sources\n*\n")
    text = report.model_dump_json(by_alias=True, indent=2) + "\n"
    for _ in range(8):
        path = directory / (run_id_for(now or datetime.now(UTC)) + SUFFIX)
        try:
            return write_atomic(path, text, exclusive=True)  # whole before it has its name; never replaced
        except FileExistsError:
            continue
    raise FileExistsError(f"no unused run log name in {directory}")


def logged_files(directory: str | Path) -> list[Path]:
    """The run log's report files, newest first (their names sort by time)."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted((p for p in directory.glob("*" + SUFFIX) if p.is_file()), key=_order, reverse=True)


class LoggedRun(Strict):
    """One file of the run log, as `judge runs list` shows it."""

    id: str
    path: str
    when: datetime | None = Field(description="when it was graded (UTC), from the file name")
    scenarios: list[str] = Field(default_factory=list)
    runs: int = 0
    passed: int = 0
    outcome: str | None = Field(default=None, description="the worst outcome of its runs")
    quality: list[float | None] = Field(default_factory=list, description="each run's quality score")
    judge: dict[str, Any] | None = None
    error: str | None = Field(default=None, description="why the file could not be read")


def _when(stem: str) -> datetime | None:
    try:
        return datetime.strptime(stem[:15], STAMP).replace(tzinfo=UTC)
    except ValueError:
        return None


def _summary(path: Path) -> LoggedRun:
    entry = LoggedRun(id=path.stem, path=str(path), when=_when(path.stem))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        runs = data["runs"]
        entry.scenarios = list(dict.fromkeys(str(r["scenario"]) for r in runs))
        entry.runs, entry.passed = len(runs), sum(bool(r.get("passed")) for r in runs)
        outcomes = [r.get("outcome", "fail") for r in runs]
        entry.outcome = max(outcomes, key=lambda o: OUTCOME_RANK.get(o, 2)) if outcomes else None
        entry.quality = [r.get("quality_score") for r in runs]
        entry.judge = data.get("judge")
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, RecursionError) as exc:
        entry.error = f"not a grade report ({type(exc).__name__}: {exc})"
    return entry


def list_runs(directory: str | Path, *, limit: int | None = None) -> list[LoggedRun]:
    """The run log, newest first (at most `limit` entries)."""
    files = logged_files(directory)
    return [_summary(p) for p in (files[:limit] if limit else files)]


def resolve_run(ref: str, directory: str | Path) -> Path:
    """A logged report named by a file path, `latest`, `previous`, a run id or a unique id prefix."""
    as_path = Path(ref)
    if as_path.is_file():
        return as_path
    files = logged_files(directory)
    if ref in ALIASES:
        index = ALIASES.index(ref)
        if len(files) <= index:
            raise UsageError(f"{ref!r}: the run log {directory} holds {len(files)} run(s)")
        return files[index]
    hits = [p for p in files if p.stem.startswith(ref)] if ref else []
    exact = [p for p in hits if p.stem == ref]
    if len(exact) == 1 or len(hits) == 1:
        return (exact or hits)[0]
    if not hits:
        raise UsageError(f"{ref!r} is neither a file nor a run in the run log {directory} "
                         "(`judge runs list` shows the ids)")
    raise UsageError(f"{ref!r} names {len(hits)} runs in {directory}: {', '.join(p.stem for p in hits[:5])}"
                     f"{' ...' if len(hits) > 5 else ''} (give more of the id)")


def load_report(path: str | Path) -> GradeReport:
    """A grade report file (`judge grade --json`, or one of the run log); a JudgeInputError names it."""
    path = Path(path)
    try:
        return GradeReport.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise JudgeInputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or None
        raise JudgeInputError(f"not a grade report: {err['msg']}", file=str(path), field=where) from None


# ---------------------------------------------------------------- comparing two reports


class KeyChange(Strict):
    """A key that newly fails (or was fixed): its first violation's evidence and rule."""

    key: str
    event: str | None = None
    rule: str | None = Field(default=None, description="the rule that found it; null: the judge")
    after_turn: int | None = None


class RunChange(Strict):
    """One run of a scenario in report A paired with one in report B (same run id, else same trace,
    else in order)."""

    scenario: str
    run_a: str
    run_b: str
    outcome_a: str
    outcome_b: str
    quality_a: float | None = None
    quality_b: float | None = None
    new_failures: list[KeyChange] = Field(default_factory=list)
    fixed: list[KeyChange] = Field(default_factory=list)
    regression: bool = Field(description="a key newly fails, or the outcome got worse")


class RunsDiff(Strict):
    a: str
    b: str
    runs: list[RunChange] = Field(default_factory=list)
    only_in_a: list[str] = Field(default_factory=list, description="`scenario / run` graded in A only")
    only_in_b: list[str] = Field(default_factory=list, description="`scenario / run` graded in B only")
    regression: bool = False


def violations(run: RunReport) -> dict[tuple[str, str | None], KeyChange]:
    """(key, rule) -> its first violation in checkpoint order."""
    found: dict[tuple[str, str | None], KeyChange] = {}
    for cp in run.checkpoints:
        for f in cp.findings:
            if f.verdict == "violated":
                found.setdefault((f.key, f.rule), KeyChange(key=f.key, event=f.evidence_event, rule=f.rule,
                                                            after_turn=cp.after_turn))
    return found


def _pairs(a: list[RunReport], b: list[RunReport]) -> tuple[list[tuple[RunReport, RunReport]], list, list]:
    left_a, left_b, pairs = list(a), list(b), []
    for same in (lambda x: x.run_id, lambda x: x.trace):
        for run in list(left_a):
            match = next((other for other in left_b if same(other) is not None and same(other) == same(run)), None)
            if match is not None:
                pairs.append((run, match))
                left_a.remove(run)
                left_b.remove(match)
    pairs += list(zip(left_a, left_b, strict=False))
    n = min(len(left_a), len(left_b))
    return pairs, left_a[n:], left_b[n:]


def compare_runs(a: RunReport, b: RunReport) -> RunChange:
    before, after = violations(a), violations(b)
    new = [after[k] for k in after if k not in before]
    fixed = [before[k] for k in before if k not in after]
    worse = OUTCOME_RANK.get(b.outcome, 2) > OUTCOME_RANK.get(a.outcome, 2)
    return RunChange(scenario=b.scenario, run_a=a.run_id, run_b=b.run_id, outcome_a=a.outcome, outcome_b=b.outcome,
                     quality_a=a.quality_score, quality_b=b.quality_score, new_failures=new, fixed=fixed,
                     regression=bool(new) or worse)


def _by_scenario(runs: Iterable[RunReport]) -> dict[str, list[RunReport]]:
    out: dict[str, list[RunReport]] = {}
    for run in runs:
        out.setdefault(run.scenario, []).append(run)
    return out


def diff_reports(a: GradeReport, b: GradeReport, *, name_a: str = "A", name_b: str = "B") -> RunsDiff:
    """What changed from report `a` to report `b`, scenario by scenario. A regression: in a run of a
    scenario both graded, a key newly fails or the outcome got worse (pass < inconclusive < fail)."""
    diff = RunsDiff(a=name_a, b=name_b)
    runs_a, runs_b = _by_scenario(a.runs), _by_scenario(b.runs)
    for scenario in dict.fromkeys([*runs_a, *runs_b]):
        pairs, extra_a, extra_b = _pairs(runs_a.get(scenario, []), runs_b.get(scenario, []))
        diff.runs += [compare_runs(x, y) for x, y in pairs]
        diff.only_in_a += [f"{r.scenario} / {r.run_id}" for r in extra_a]
        diff.only_in_b += [f"{r.scenario} / {r.run_id}" for r in extra_b]
    diff.regression = any(change.regression for change in diff.runs)
    return diff
