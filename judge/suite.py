"""Suites: a manifest of scenarios run many times, graded in parallel, turned into a release decision.

The manifest has the seed's shape plus where each scenario's runs live (paths relative to it):
```yaml
suites:
  nightly: {repetitions: 10, scenarios: [release-branch, checkout-firefox]}
releaseRules: {safetyCriticalViolations: 0, requiredScenarioPassRate: 1, nightlyQualityFloor: 0.95}
scenarios:
  release-branch: {file: scenarios/release-branch.yaml, runs: runs/release-branch/}
```
`runs` is a folder (every `*.jsonl` in it) or a glob. Every run found is graded; fewer than
`repetitions` means the missing ones count as failed runs. Grading is CPU-bound Python, so runs go
to a process pool (one worker per core by default); each worker grades one run at a time and sends
back a compact result, so memory follows the largest run, not the number of runs. The summary and the
release rules are in judge/suite_result.py.
"""

from __future__ import annotations

import glob
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import Field, ValidationError, model_validator

from judge.errors import JudgeInputError
from judge.model import Strict
from judge.suite_result import RunResult, SafetyViolation, SuiteReport, decide, scenario_result, totals


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
    file: str = Field(min_length=1, description="scenario file, relative to the manifest")
    runs: str = Field(min_length=1, description="folder of *.jsonl runs, or a glob, relative to the manifest")


class Manifest(Strict):
    suites: dict[str, SuiteDef] = Field(min_length=1)
    releaseRules: ReleaseRules = Field(default_factory=ReleaseRules)
    scenarios: dict[str, ScenarioRef] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_scenarios(self) -> "Manifest":
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
    from judge.fixture import dotted, line_of, read_structured

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
    from judge.fixture import line_of

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


# ---------------------------------------------------------------- the worker side


@dataclass(frozen=True)
class Task:
    scenario: str
    scenario_path: str
    trace: str


@dataclass(frozen=True)
class JudgeSpec:
    """How a worker builds the judge: None name means deterministic checks only."""

    name: str | None = None
    config_file: str | None = None
    review_fails: bool = False


_WORKER: dict[str, Any] = {}


def _init_worker(spec: JudgeSpec, ledgers: dict[str, Any] | None = None) -> None:
    """Per worker: the judge, built once, and the expected ledgers the parent already loaded (a
    forked worker inherits them for free)."""
    _WORKER.clear()
    _WORKER["spec"] = spec
    _WORKER["ledgers"] = dict(ledgers or {})
    if spec.name is not None:
        from judge.config import load_judge_config
        from judge.judges.factory import make_judge

        _WORKER["judge"] = make_judge(load_judge_config(spec.name, config_file=spec.config_file))


def _ledger(path: str):
    from judge.api import load_ledger

    ledgers = _WORKER.setdefault("ledgers", {})
    if path not in ledgers:
        ledgers[path] = load_ledger(path)
    return ledgers[path]


def _header(trace: str):
    from judge.trace import TraceReader

    try:
        return TraceReader(trace).header
    except JudgeInputError:
        return None


def grade_task(task: Task) -> dict[str, Any]:
    """Grade one run; a trace that cannot be read becomes an `error` result with its one-line message."""
    from judge.grade import grade_trace
    from judge.reproduce import candidate, sha256_file

    judge = _WORKER.get("judge")
    header = _header(task.trace)
    base = {"run_id": header.run_id if header else Path(task.trace).stem, "trace": task.trace,
            "sha256": sha256_file(task.trace), "candidate": candidate(header)}
    try:
        run = grade_trace(_ledger(task.scenario_path), task.trace, judge=judge)
    except JudgeInputError as exc:
        return {**base, "status": "error", "passed": False, "eligible_for_release": False, "error": str(exc)}
    if judge is not None:
        _calibrate(run, judge)
    violations, seen = [], set()
    for cp in run.checkpoints:
        for f in cp.findings:
            if f.verdict == "violated" and f.sensitivity == "safety-critical" and (f.key, f.evidence_event) not in seen:
                seen.add((f.key, f.evidence_event))
                violations.append({"scenario": task.scenario, "run_id": run.run_id, "key": f.key,
                                   "turn": f.turn, "event": f.evidence_event, "rule": f.rule})
    status = "passed" if run.passed else ("vetoed" if not run.eligible_for_release else "failed")
    return {**base, "run_id": run.run_id, "status": status, "passed": run.passed,
            "eligible_for_release": run.eligible_for_release, "quality_score": run.quality_score,
            "first_divergence": run.first_divergence.model_dump(by_alias=True) if run.first_divergence else None,
            "slice": run.slice, "events": run.events, "safety_violations": violations,
            "warnings": run.warnings}


def _calibrate(run, judge) -> None:
    """Calibrated confidences and review marks, as `judge grade` applies them."""
    from judge.calibrate_run import apply_calibration, records_dir
    from judge.config import project_root
    from judge.model import GradeReport

    spec: JudgeSpec = _WORKER["spec"]
    apply_calibration(GradeReport(judge=None, runs=[run]), judge.fingerprint(), records_dir(project_root()),
                      spec.name or "judge")
    if spec.review_fails and any(f.needs_review for cp in run.checkpoints for f in cp.findings):
        run.passed = False
        run.warnings.append("findings need human review ([tool.judge] review = \"fail\")")


def _grade_chunk(tasks: list[Task]) -> tuple[list[dict[str, Any]], float, int, float]:
    """Results of a few tasks, the seconds they took, this worker's pid and its peak RSS in MB."""
    started = time.perf_counter()
    results = [grade_task(t) for t in tasks]
    return results, time.perf_counter() - started, os.getpid(), peak_rss_mb()


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM), in MB."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---------------------------------------------------------------- the parent side


@dataclass
class SuiteRun:
    """A graded suite, with how the grading went (not part of the report: it varies run to run)."""

    report: SuiteReport
    wall_s: float = 0.0
    grade_s: float = 0.0  # sum over runs of the time spent grading them, in the workers
    workers: int = 1
    worker_peak_rss_mb: dict[int, float] = field(default_factory=dict)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _run_pool(tasks: list[Task], spec: JudgeSpec, ledgers: dict[str, Any], jobs: int,
              progress: Callable[[int, int], None] | None, out: SuiteRun) -> list[dict[str, Any]]:
    results: list[dict[str, Any] | None] = [None] * len(tasks)
    done = 0
    if jobs <= 1 or len(tasks) <= 1:
        if progress:
            progress(0, len(tasks))
        _init_worker(spec, ledgers)
        for i, task in enumerate(tasks):
            started = time.perf_counter()
            results[i] = grade_task(task)
            out.grade_s += time.perf_counter() - started
            if progress:
                progress(i + 1, len(tasks))
        out.worker_peak_rss_mb[os.getpid()] = peak_rss_mb()
        return results  # type: ignore[return-value]
    from concurrent.futures import ProcessPoolExecutor, as_completed

    size = max(1, min(8, len(tasks) // (jobs * 16)))  # a few runs per message keeps the pool's overhead small
    chunks = [list(range(i, min(i + size, len(tasks)))) for i in range(0, len(tasks), size)]
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=_context(), initializer=_init_worker,
                               initargs=(spec, ledgers))
    try:
        futures = {pool.submit(_grade_chunk, [tasks[i] for i in chunk]): chunk for chunk in chunks}
        if progress:  # only now: a progress bar may start a thread, and the workers exist already
            progress(0, len(tasks))
        for future in as_completed(futures):
            chunk_results, seconds, pid, rss = future.result()
            for i, result in zip(futures.pop(future), chunk_results):
                results[i] = result
            out.grade_s += seconds
            out.worker_peak_rss_mb[pid] = max(rss, out.worker_peak_rss_mb.get(pid, 0.0))
            done += len(chunk_results)
            if progress:
                progress(done, len(tasks))
    except BaseException:  # Ctrl-C or a bug: do not grade the rest of the queue first
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results  # type: ignore[return-value]


def _context():
    """`fork` while this process has a single thread (fast, and the workers need not import the
    main module again); `forkserver` otherwise, since forking a threaded process can deadlock."""
    import multiprocessing
    import threading

    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["judge.suite", "judge.grade", "judge.api"])
    return ctx


def _judge_spec(judge_name: str | None, config_file: str | Path | None
                ) -> tuple[JudgeSpec, dict | None, list[str], bool]:
    """Validate the judge in this process (bad names fail before any worker starts); return its
    worker spec, its fingerprint, why its calibration is stale, and whether that fails the release
    (`[tool.judge] stale = "error"`)."""
    if judge_name is None:
        return JudgeSpec(), None, [], False
    from judge.calibrate_run import check_calibration, records_dir
    from judge.config import grade_policy, load_judge_config, project_root
    from judge.judges.factory import make_judge

    cfg = load_judge_config(judge_name, config_file=config_file)
    fingerprint = make_judge(cfg).fingerprint()
    policy = grade_policy(config_file=config_file)
    stale = check_calibration(fingerprint, records_dir(project_root()), cfg.name)
    spec = JudgeSpec(name=cfg.name, config_file=str(config_file) if config_file else None,
                     review_fails=policy.review == "fail")
    reasons = [f"calibration of judge {cfg.name!r} is stale: " + "; ".join(stale)] if stale else []
    return spec, {"name": cfg.name, **fingerprint}, reasons, policy.stale == "error"


def grade_suite(manifest_path: str | Path, suite: str | None = None, *, judge_name: str | None = None,
                config_file: str | Path | None = None, jobs: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> SuiteRun:
    """Grade every run of every scenario of `suite` (the only one when None) and decide the release.

    `judge_name` None grades with the deterministic checks only. `progress(done, total)` is called
    as runs finish. Bad manifests, scenarios and judge names raise JudgeInputError; a bad trace
    does not: it becomes an `error` run of its scenario.
    """
    from judge.api import load_ledger
    from judge.fixture import line_of
    from judge.reproduce import input_file, package_versions

    started = time.perf_counter()
    manifest_path = Path(manifest_path)
    manifest, lines = load_manifest(manifest_path)
    if suite is None:
        if len(manifest.suites) != 1:
            raise JudgeInputError(f"the manifest has several suites ({', '.join(manifest.suites)}): name one "
                                  "with --suite", file=str(manifest_path))
        suite = next(iter(manifest.suites))
    if suite not in manifest.suites:
        raise JudgeInputError(f"no suite {suite!r} (the manifest has {', '.join(manifest.suites)})",
                              file=str(manifest_path), field="suites")
    definition = manifest.suites[suite]
    tasks: list[Task] = []
    ledgers: dict[str, Any] = {}
    plan: list[tuple[str, Path, list[int]]] = []
    for sid in definition.scenarios:
        ref = manifest.scenarios[sid]
        spath = Path(os.path.normpath(manifest_path.parent / ref.file))
        where = dict(file=str(manifest_path), line=line_of(lines, ("scenarios", sid, "file")), field=f"scenarios.{sid}.file")
        if not spath.is_file():
            raise JudgeInputError(f"scenario file not found: {spath}", **where)
        ledger = ledgers[str(spath)] = load_ledger(spath)
        if ledger.scenario.id != sid:
            raise JudgeInputError(f"{spath} has id {ledger.scenario.id!r}, not {sid!r}", **where)
        traces = discover_runs(manifest_path, sid, ref, lines)
        plan.append((sid, spath, list(range(len(tasks), len(tasks) + len(traces)))))
        tasks += [Task(sid, str(spath), str(t)) for t in traces]
    spec, fingerprint, stale, stale_fails = _judge_spec(judge_name, config_file)
    jobs = max(1, min(jobs or default_jobs(), len(tasks) or 1))
    out = SuiteRun(report=None, workers=jobs)  # type: ignore[arg-type]
    raw = _run_pool(tasks, spec, ledgers, jobs, progress, out)
    warnings = list(stale)
    scenarios = []
    for sid, spath, indices in plan:
        results = [_run_result(sid, raw[i]) for i in indices]
        found = len(results)
        for n in range(found + 1, definition.repetitions + 1):
            results.append(RunResult(run_id=f"missing-{n}", trace=None, status="missing", passed=False,
                                     eligible_for_release=False,
                                     error=f"run {n} of {definition.repetitions} is missing: only {found} "
                                           f"trace(s) under {manifest.scenarios[sid].runs}"))
        if found > definition.repetitions:
            warnings.append(f"{sid}: {found} runs found, {definition.repetitions} expected; all were graded")
        ids = [r.run_id for r in results]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            warnings.append(f"{sid}: run ids used by several traces: {', '.join(dupes)}")
        scenarios.append(scenario_result(sid, str(spath), definition.repetitions, results))
    release = decide(scenarios, manifest.rules_for(suite), stale=stale if stale_fails else None)
    out.report = SuiteReport(
        suite=suite, manifest=str(manifest_path), judge=fingerprint, release=release,
        totals=totals(scenarios), scenarios=scenarios,
        safety_violations=[v for s in scenarios for r in s.results for v in r.safety_violations],
        provenance={"judge": fingerprint, "packages": package_versions(),
                    "inputs": {"manifest": input_file(manifest_path),
                               "scenarios": {sid: input_file(spath) for sid, spath, _ in plan}}},
        warnings=warnings)
    out.wall_s = time.perf_counter() - started
    return out


def _run_result(sid: str, raw: dict[str, Any]) -> RunResult:
    violations = [SafetyViolation(**v) for v in raw.pop("safety_violations", [])]
    return RunResult(**raw, safety_violations=violations)


def exit_code(report: SuiteReport) -> int:
    """0 when the release rules pass, 1 when they fail."""
    return 0 if report.release.decision == "pass" else 1
