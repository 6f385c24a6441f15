"""The worker side of a suite: each process grades one run at a time through a GradeSession and sends
back a compact result (a dict), so memory follows the largest run, not the number of runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError
from judge.grade import GradeSession
from judge.grade.provenance import candidate, sha256_file
from judge.ledger import load_ledger
from judge.trace import TraceReader


@dataclass(frozen=True)
class Task:
    scenario: str
    scenario_path: str | None
    trace: str
    policy: str | None = None  # a policy file or name: merged into the scenario, or graded alone
    span: tuple[int, int, int] | None = None  # a trace inside a JSONL of many: (byte offset, length, first line)

    @property
    def name(self) -> str:
        """How reports name the trace: its file, or FILE@LINE for one of many in a JSONL file."""
        return self.trace if self.span is None else f"{self.trace}@{self.span[2]}"

    @property
    def ledger_key(self) -> str:
        """What the worker's ledgers are keyed by (one per scenario and policy)."""
        return ledger_key(self.scenario_path, self.policy)


def ledger_key(scenario_path: str | None, policy: str | None) -> str:
    """The key of the ledger of a scenario file, a policy, or a scenario extended by a policy."""
    return f"{scenario_path or ''}\x00{policy or ''}"


def load_task_ledger(scenario_path: str | None, policy: str | None, allow_draft: bool):
    """The expected ledger a suite grades a scenario's runs against."""
    from judge.ledger import policy_ledger

    if scenario_path is None:
        assert policy is not None  # a task names its scenario, its policy, or both (judge.suite.run)
        return policy_ledger(policy, allow_draft=allow_draft)
    return load_ledger(scenario_path, allow_draft=allow_draft, extra=[policy] if policy else ())


@dataclass(frozen=True)
class JudgeSpec:
    """How a worker builds the judge: None name means deterministic checks only."""

    name: str | None = None
    config_file: str | None = None
    on_judge_error: str | None = None
    allow_draft: bool = False  # grade scenarios still marked `draft: true`
    keep_reports: bool = False  # also send back each run's full report (`judge suite --html`)
    toolkit: Any = None  # the agent's tools (`judge suite --tools`, judge.trace.toolkit.Toolkit); None: each header's
    per_key: bool = False  # also send back each key's verdict (a corpus report's rates)


_WORKER: dict[str, Any] = {}


def init_worker(spec: JudgeSpec, ledgers: dict[str, Any] | None = None) -> None:
    """Per worker: the grade session (its judge built once), and the expected ledgers the parent
    already loaded (a forked worker inherits them for free)."""
    _WORKER.clear()
    _WORKER["session"] = GradeSession.open(spec.name or "none", config_file=spec.config_file,
                                           on_judge_error=spec.on_judge_error, toolkit=spec.toolkit)
    _WORKER["ledgers"] = dict(ledgers or {})
    _WORKER["allow_draft"] = spec.allow_draft
    _WORKER["keep_reports"] = spec.keep_reports
    _WORKER["per_key"] = spec.per_key


def _ledger(task: Task):
    ledgers = _WORKER.setdefault("ledgers", {})
    key = task.ledger_key
    if key not in ledgers:
        ledgers[key] = load_task_ledger(task.scenario_path, task.policy, _WORKER.get("allow_draft", False))
    return ledgers[key]


def _unreadable(task: Task, error: JudgeInputError) -> dict[str, Any]:
    """The result of a run whose grading failed: its run id and candidate when its header reads, and
    its sha256. The only path that reads a trace twice (the grading stopped at the bad line)."""
    try:
        header = TraceReader(_source(task), name=task.name).header
    except JudgeInputError:
        header = None
    return {"run_id": header.run_id if header else Path(task.trace).stem, "trace": task.name,
            "sha256": _sha256(task), "candidate": candidate(header), "status": "error",
            "passed": False, "eligible_for_release": False, "error": str(error)}


def _source(task: Task) -> Any:
    """What the trace reader reads: the file, or the lines of one trace inside a JSONL of many."""
    if task.span is None:
        return task.trace
    offset, length, _ = task.span
    with open(task.trace, "rb") as fh:
        fh.seek(offset)
        data = fh.read(length)
    return [line for line in data.decode("utf-8", errors="replace").splitlines() if line.strip()]


def _sha256(task: Task) -> str | None:
    if task.span is None:
        return sha256_file(task.trace)
    import hashlib

    offset, length, _ = task.span
    with open(task.trace, "rb") as fh:
        fh.seek(offset)
        return hashlib.sha256(fh.read(length)).hexdigest()


def key_verdicts(run: Any) -> dict[str, list[bool]]:
    """Per key of a graded run: [a rule found it violated, the judge decided it, the judge said violated]."""
    out: dict[str, list[bool]] = {}
    for cp in run.checkpoints:
        for f in cp.findings:
            row = out.setdefault(f.key, [False, False, False])
            if f.source == "deterministic" and f.verdict == "violated":
                row[0] = True
            elif f.source == "judge":
                row[1] = True
                row[2] = row[2] or f.verdict in ("violated", "flagged")
    return out


def grade_task(task: Task) -> dict[str, Any]:
    """Grade one run, reading its trace once (its sha256 is computed on the way); a trace that cannot
    be read becomes an `error` result with its one-line message."""
    session: GradeSession = _WORKER.get("session") or GradeSession()
    try:
        # The suite reports a stale calibration once, in its own warnings.
        run = session.grade_run(_ledger(task), _source(task), name=task.name, warn_stale=False,
                                digest=task.span is None)
    except JudgeInputError as exc:
        return _unreadable(task, exc)
    result = run_result(run, task.scenario, task.name, keep_report=bool(_WORKER.get("keep_reports")),
                        sha256=None if task.span is None else _sha256(task))
    if _WORKER.get("per_key"):  # (a corpus: its result cache keeps no run with a judge error)
        result["keys"] = key_verdicts(run)
        result["judge_errors"] = run.cost.judge_errors
    return result


def run_result(run: Any, scenario: str, trace: str, *, keep_report: bool = False,
               sha256: str | None = None) -> dict[str, Any]:
    """The compact result of one graded run (a RunReport) of `scenario`, as the suite keeps it
    (judge.suite.result.RunResult's fields); `keep_report` adds the full report (the RunReport) under `report`.
    `sha256`: the trace's, when `trace` names no file of its own (a trace inside a JSONL of many)."""
    traces = (run.provenance.get("inputs") or {}).get("traces") or [{}]
    base = {"trace": trace, "sha256": traces[0].get("sha256") or sha256 or sha256_file(trace),
            "candidate": run.provenance.get("candidate")}
    violations, seen = [], set()
    for cp in run.checkpoints:
        for f in cp.findings:
            if f.verdict == "violated" and f.sensitivity == "safety-critical" and (f.key, f.evidence_event) not in seen:
                seen.add((f.key, f.evidence_event))
                violations.append({"scenario": scenario, "run_id": run.run_id, "key": f.key,
                                   "turn": f.turn, "event": f.evidence_event, "rule": f.rule})
    status = {"pass": "passed", "inconclusive": "inconclusive"}.get(
        run.outcome, "vetoed" if run.veto is not None else "failed")
    if keep_report:  # the model itself: its slice stays compact (EventIds pickles as a few numbers)
        base["report"] = run
    return {**base, "run_id": run.run_id, "status": status, "passed": run.passed, "outcome": run.outcome,
            "outcome_reasons": run.outcome_reasons,
            "veto": run.veto.model_dump(by_alias=True) if run.veto else None,
            "eligible_for_release": run.eligible_for_release, "quality_score": run.quality_score,
            "first_divergence": run.first_divergence.model_dump(by_alias=True) if run.first_divergence else None,
            "slice": run.slice, "events": run.events, "safety_violations": violations,
            "warnings": run.warnings}


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
