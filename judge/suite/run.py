"""Suites: a manifest of scenarios run many times, graded in parallel, turned into a release decision.

The manifest (judge.suite.manifest) names each scenario's file and runs. Every run found is graded; fewer than
`repetitions` means the missing ones count as failed runs. Grading is CPU-bound Python, so runs go
to worker processes (one per core by default, forked once: judge.suite.pool), streamed to them one
at a time; each sends back a compact result, so memory follows the largest run, not the number of runs. The summary
and the
release rules are in judge.suite.result; the manifest in judge.suite.manifest; the workers
in judge.suite.worker; shards and their parts in judge.suite.part. Every grading makes a part
(an unsharded one is shard 1/1) and every report is made from a whole suite's part (`report_of`), so
a suite merged from its shards reports exactly what the unsharded run does.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from judge.errors import JudgeInputError
from judge.grade import GradeSession
from judge.grade.provenance import input_file, package_versions, sha256_file, sha256_text
from judge.ledger import line_of, resolve_policy
from judge.model import RunReport
from judge.suite.engine import LOCAL, Engine
from judge.suite.manifest import discover_runs, load_manifest
from judge.suite.part import PartRun, PartScenario, PartTiming, SuitePart, in_shard, merge_parts
from judge.suite.result import RunResult, SafetyViolation, SuiteReport, decide, scenario_result, totals
from judge.suite.worker import (
    JudgeSpec,
    Task,
    grade_task,
    init_worker,
    ledger_key,
    load_task_ledger,
    peak_rss_mb,
)
from judge.trace.toolkit import read_toolkit


class _Where(TypedDict):
    """Where in the manifest a JudgeInputError points."""

    file: str
    line: int | None
    field: str


@dataclass
class SuiteRun:
    """A graded suite, with how the grading went (not part of the report: it varies run to run)."""

    report: SuiteReport
    wall_s: float = 0.0
    grade_s: float = 0.0  # sum over runs of the time spent grading them, in the workers
    workers: int = 1
    worker_peak_rss_mb: dict[int, float] = field(default_factory=dict)
    run_reports: dict[str, RunReport] = field(default_factory=dict)  # trace -> full report (keep_reports)
    worker_stats: list[Any] = field(default_factory=list)  # judge.suite.pool.WorkerStats of each worker


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _run_ray(tasks: list[Task], spec: JudgeSpec, ledgers: dict[str, Any], engine: Engine,
             progress: Callable[[int, int], None] | None, out: SuiteRun) -> list[dict[str, Any]]:
    from judge.suite.engine import run_on_ray

    if progress:
        progress(0, len(tasks))
    results, batches = run_on_ray(tasks, spec, ledgers, engine.address,
                                  (lambda n: progress(n, len(tasks))) if progress else None)
    for batch in batches:
        out.grade_s += batch["grade_s"]
        out.worker_peak_rss_mb[batch["pid"]] = max(batch["peak_rss_mb"], out.worker_peak_rss_mb.get(batch["pid"], 0.0))
    out.workers = len(out.worker_peak_rss_mb)
    return results


def run_tasks(tasks: list[Task], spec: JudgeSpec, ledgers: dict[str, Any], jobs: int,
              progress: Callable[[int, int], None] | None, out: SuiteRun, engine: Engine = LOCAL
              ) -> list[dict[str, Any]]:
    """Grade `tasks` on `engine` (this machine's `jobs` worker processes, or Ray): results in task order."""
    if engine.kind == "ray":
        return _run_ray(tasks, spec, ledgers, engine, progress, out)
    results: list[dict[str, Any] | None] = [None] * len(tasks)
    if jobs <= 1 or len(tasks) <= 1:
        if progress:
            progress(0, len(tasks))
        init_worker(spec, ledgers)
        for i, task in enumerate(tasks):
            started = time.perf_counter()
            results[i] = grade_task(task)
            out.grade_s += time.perf_counter() - started
            if progress:
                progress(i + 1, len(tasks))
        out.worker_peak_rss_mb[os.getpid()] = peak_rss_mb()
        return results  # type: ignore[return-value]  # the loop filled every slot
    from judge.suite.pool import WorkerPool

    context = _context()
    here = _grades_here(tasks, spec, context)
    pool = WorkerPool(spec, ledgers, context, tasks)
    try:
        if here:  # one worker grades while this process warms up on the first run; the others inherit it
            pool.start(1, keep=1)  # (two runs: the worker would otherwise take both)
            init_worker(spec, ledgers)
            pool.grade_here(grade_task)
        pool.start(min(jobs, len(tasks)) - (2 if here else 0))  # (no worker forked for nothing to do)
        if progress:  # only now: a progress bar may start a thread, and the workers exist already
            progress(0, len(tasks))
            if pool.done:
                progress(pool.done, len(tasks))
        done = pool.run((lambda n: progress(n, len(tasks))) if progress else None,
                        local=grade_task if here else None)
    except BaseException:  # Ctrl-C or a bug: the workers are stopped, not left to finish the queue
        pool.stop()
        raise
    for worker in done.workers:
        out.grade_s += worker.grade_s
        out.worker_peak_rss_mb[worker.pid] = worker.peak_rss_mb
    out.worker_stats = done.workers
    return done.results


# The parent is one of the jobs when every run is at most this big (a run it grades is at most this
# long a wait for a worker whose queue ran dry meanwhile).
PARENT_RUN_BYTES = 1 << 20


def _grades_here(tasks: list[Task], spec: JudgeSpec, context: Any) -> bool:
    """Whether this process grades runs itself, as one of the `jobs` (one worker fewer is forked).

    Its first grade builds what later grades reuse (the automata's DFA states, compiled patterns,
    the rules' claim targets, modules imported on first use: 10-20 ms), so workers forked after it
    inherit them; the one worker forked before it grades meanwhile, so that no core waits. Waiting
    on the pipes instead, the parent would leave a core's worth of work to one more worker, which
    pays its own fork, start, exit and copy-on-write of the pages it touches. Only for deterministic
    suites (a judge's session is each process's own: a model or an HTTP client is not shared
    across a fork), with `fork` workers, and runs small enough that grading one never holds a
    worker back: the parent feeds the workers between its own runs."""
    if spec.name is not None or context.get_start_method() != "fork":
        return False
    try:
        sizes = [t.span[1] if t.span is not None else os.stat(t.trace).st_size for t in tasks]
    except OSError:
        return False  # (a worker names the unreadable trace)
    return max(sizes) <= PARENT_RUN_BYTES


def _context():
    """`fork` while this process has a single thread (fast, and the workers need not import the
    main module again); `forkserver` otherwise, since forking a threaded process can deadlock."""
    import multiprocessing
    import threading

    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["judge.suite.worker", "judge.grade"])
    return ctx


def _judge_spec(judge_name: str | None, config_file: str | Path | None, on_judge_error: str | None
                ) -> tuple[JudgeSpec, dict | None, dict | None, list[str], dict[str, Any]]:
    """Validate the judge in this process (bad names, and a stale calibration with
    `[tool.judge] stale = "error"`, fail before any worker starts); return its worker spec, the
    report's judge object (fingerprint and trust), the fingerprint, why its calibration is stale
    and the policy the workers grade with."""
    session = GradeSession.open(judge_name or "none", config_file=config_file, on_judge_error=on_judge_error)
    if judge_name is None:
        return JudgeSpec(on_judge_error=on_judge_error), None, None, [], session.policy.model_dump()
    spec = JudgeSpec(name=session.judge_name, config_file=str(config_file) if config_file else None,
                     on_judge_error=on_judge_error)
    reasons = [stale] if (stale := session.stale_warning()) is not None else []  # (None: not stale)
    return spec, session.judge_object(), session.fingerprint, reasons, session.policy.model_dump()


@dataclass
class _Plan:
    """The suite's runs in manifest order, and what the report needs of the manifest."""

    suite: str
    rules: Any
    repetitions: int
    scenarios: list[PartScenario]
    tasks: list[Task]
    ledgers: dict[str, Any]
    paths: dict[str, Path]


def _policy_ref(ref: str | None, base: Path, **where: Any) -> str | None:
    """A policy reference with its path made absolute (relative to `base`); a name as it is."""
    if ref is None:
        return None
    return str(resolve_policy(ref, base, **where).resolve())


def _plan(manifest_path: Path, suite: str | None, allow_draft: bool, policy: str | None = None) -> _Plan:
    manifest, lines = load_manifest(manifest_path)
    given = _policy_ref(policy, Path.cwd(), field="--policy")
    if suite is None:
        if len(manifest.suites) != 1:
            raise JudgeInputError(f"the manifest has several suites ({', '.join(manifest.suites)}): name one "
                                  "with --suite", file=str(manifest_path))
        suite = next(iter(manifest.suites))
    if suite not in manifest.suites:
        raise JudgeInputError(f"no suite {suite!r} (the manifest has {', '.join(manifest.suites)})",
                              file=str(manifest_path), field="suites")
    definition = manifest.suites[suite]
    plan = _Plan(suite, manifest.rules_for(suite), definition.repetitions, [], [], {}, {})
    for sid in definition.scenarios:
        ref = manifest.scenarios[sid]
        pwhere = _Where(file=str(manifest_path), line=line_of(lines, ("scenarios", sid, "policy")),
                        field=f"scenarios.{sid}.policy")
        pol = _policy_ref(ref.policy, manifest_path.parent, **pwhere) if ref.policy else given
        where = _Where(file=str(manifest_path), line=line_of(lines, ("scenarios", sid, "file")),
                       field=f"scenarios.{sid}.file")
        if ref.file is None and pol is None:
            raise JudgeInputError("needs a scenario `file` or a `policy` (or judge suite --policy)", **where)
        spath = Path(os.path.normpath(manifest_path.parent / ref.file)) if ref.file is not None else None
        if spath is not None and not spath.is_file():
            raise JudgeInputError(f"scenario file not found: {spath}", **where)
        key = ledger_key(str(spath) if spath else None, pol)
        ledger = plan.ledgers[key] = load_task_ledger(str(spath) if spath else None, pol, allow_draft)
        if spath is not None and ledger.scenario.id != sid:
            raise JudgeInputError(f"{spath} has id {ledger.scenario.id!r}, not {sid!r}", **where)
        traces = discover_runs(manifest_path, sid, ref, lines)
        graded_against = spath if spath is not None else Path(ledger.policy or str(pol))
        plan.scenarios.append(PartScenario(id=sid, file=str(graded_against), runs_from=ref.runs, traces=len(traces)))
        plan.paths[sid] = graded_against
        plan.tasks += [Task(sid, str(spath) if spath else None, str(t), pol) for t in traces]
    return plan


def grade_part(manifest_path: str | Path, suite: str | None = None, *, shard: tuple[int, int] = (1, 1),
               judge_name: str | None = None, config_file: str | Path | None = None, jobs: int | None = None,
               progress: Callable[[int, int], None] | None = None, on_judge_error: str | None = None,
               allow_draft: bool = False, keep_reports: bool = False,
               tools: str | Path | None = None, policy: str | None = None,
               engine: Engine = LOCAL) -> tuple[SuitePart, SuiteRun]:
    """Grade shard K of N of a suite (judge.suite.part: run i is shard (i mod N) + 1): its part, and
    how the grading went (the SuiteRun's report is left None). Arguments as `grade_suite`."""
    started = time.perf_counter()
    manifest_path = Path(manifest_path)
    plan = _plan(manifest_path, suite, allow_draft, policy)
    toolkit = read_toolkit(tools) if tools is not None else None  # a bad file fails before any worker starts
    spec, judge_object, fingerprint, stale, settings = _judge_spec(judge_name, config_file, on_judge_error)
    spec = dataclasses.replace(spec, allow_draft=allow_draft, keep_reports=keep_reports, toolkit=toolkit)
    k, n = shard
    mine = [i for i in range(len(plan.tasks)) if in_shard(i, k, n)]
    jobs = max(1, min(jobs or default_jobs(), len(mine) or 1))
    # A part has no report of its own: grade_suite sets it, a shard leaves it None (typing it Optional
    # would make every reader of a whole suite's SuiteRun check for a None it never has).
    out = SuiteRun(report=None, workers=jobs)  # type: ignore[arg-type]
    packages = package_versions()  # before the fork: every run's provenance reads it, the workers inherit it
    raw = run_tasks([plan.tasks[i] for i in mine], spec, plan.ledgers, jobs, progress, out, engine)
    for r in raw:
        full = r.pop("report", None)
        if full is not None:
            out.run_reports[r["trace"]] = full  # (the model itself: judge.suite.worker.run_result)
    runs = [PartRun(index=i, scenario=plan.tasks[i].scenario, result=_run_result(r))
            for i, r in zip(mine, raw, strict=False)]
    listing = json.dumps([[t.scenario, t.trace] for t in plan.tasks])
    part = SuitePart(
        suite=plan.suite, manifest=str(manifest_path), manifest_sha256=sha256_file(manifest_path), shard=k, shards=n,
        runs_sha256=sha256_text(listing), repetitions=plan.repetitions, release_rules=plan.rules,
        scenarios=plan.scenarios, judge=judge_object, settings={**settings, "allow_draft": allow_draft},
        provenance={"judge": fingerprint, "packages": packages,
                    "inputs": {"manifest": input_file(manifest_path),
                               "scenarios": {sid: input_file(path) for sid, path in plan.paths.items()},
                               **({"tools": input_file(Path(tools))} if tools is not None else {})}},
        warnings=list(stale), runs=runs)
    out.wall_s = time.perf_counter() - started
    part.timing = PartTiming(wall_s=round(out.wall_s, 3), grade_s=round(out.grade_s, 3), workers=out.workers)
    return part, out


def report_of(part: SuitePart) -> SuiteReport:
    """The suite report of a whole suite's part (graded unsharded, or merged from its shards):
    pass rates, signatures and the release decision; runs fewer than `repetitions` count as missing."""
    if part.shards != 1:
        raise JudgeInputError(f"shard {part.shard}/{part.shards} of a suite: merge all its parts first",
                              field="shard")
    warnings = list(part.warnings)
    scenarios = []
    results = iter(part.runs)
    for ref in part.scenarios:
        runs = [next(results).result for _ in range(ref.traces)]
        found = len(runs)
        for n in range(found + 1, part.repetitions + 1):
            runs.append(RunResult(run_id=f"missing-{n}", trace=None, status="missing", passed=False,
                                  eligible_for_release=False,
                                  error=f"run {n} of {part.repetitions} is missing: only {found} "
                                        f"trace(s) under {ref.runs_from}"))
        if found > part.repetitions:
            warnings.append(f"{ref.id}: {found} runs found, {part.repetitions} expected; all were graded")
        ids = [r.run_id for r in runs]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            warnings.append(f"{ref.id}: run ids used by several traces: {', '.join(dupes)}")
        scenarios.append(scenario_result(ref.id, ref.file, part.repetitions, runs))
    return SuiteReport(
        suite=part.suite, manifest=part.manifest, judge=part.judge, release=decide(scenarios, part.release_rules),
        totals=totals(scenarios), scenarios=scenarios,
        safety_violations=[v for s in scenarios for r in s.results for v in r.safety_violations],
        provenance=part.provenance, warnings=warnings)


def grade_suite(manifest_path: str | Path, suite: str | None = None, *, judge_name: str | None = None,
                config_file: str | Path | None = None, jobs: int | None = None,
                progress: Callable[[int, int], None] | None = None, on_judge_error: str | None = None,
                allow_draft: bool = False, keep_reports: bool = False, tools: str | Path | None = None,
                policy: str | None = None, engine: Engine = LOCAL) -> SuiteRun:
    """Grade every run of every scenario of `suite` (the only one when None) and decide the release.

    `judge_name` None grades with the deterministic checks only; an unreviewed draft scenario is
    refused unless `allow_draft`. `progress(done, total)` is called
    as runs finish. `keep_reports`: keep each run's full grade report in `SuiteRun.run_reports`
    (a page of the suite shows each checkpoint's findings). `tools`: a `--tools FILE`, the agent's
    toolkit for every run (default: each run header's `tools`). `policy`: a policy every scenario
    without a `policy` of its own is graded with (merged into its scenario, or alone for an entry
    with no `file`). `engine`: where the runs are graded (judge.suite.engine: this machine's worker
    processes, or a Ray cluster; the report is the same). Bad manifests, scenarios, policies, tools files
    and judge names raise JudgeInputError; a bad trace
    does not: it becomes an `error` run of its scenario.
    """
    part, out = grade_part(manifest_path, suite, judge_name=judge_name, config_file=config_file, jobs=jobs,
                           progress=progress, on_judge_error=on_judge_error, allow_draft=allow_draft,
                           keep_reports=keep_reports, tools=tools, policy=policy, engine=engine)
    out.report = report_of(part)
    return out


def merge_suite(parts: list[str | Path]) -> SuiteReport:
    """The report of a suite graded in shards, from all its parts: that of an unsharded run."""
    return report_of(merge_parts(parts))


def _run_result(raw: dict[str, Any]) -> RunResult:
    violations = [SafetyViolation(**v) for v in raw.pop("safety_violations", [])]
    return RunResult(**raw, safety_violations=violations)


def exit_code(report: SuiteReport) -> int:
    """0 when the release rules pass, 1 when they fail, 3 when no rule failed but a run was inconclusive."""
    return {"pass": 0, "fail": 1}.get(report.release.decision, 3)
