"""Grade a corpus of production traces against one policy (`judge grade --policy P CORPUS/`): per key the
violation rate with its interval, corrected for the judge's measured errors, and a sample of failing runs.

A corpus is folders (every `*.jsonl` below them, in path order) and JSONL files; a file may hold one trace
or many, one after the other, each starting at its run header (`{"kind": "run", ...}`). Files are scanned
a line at a time for the headers (only a line that mentions "run" is decoded), so a trace inside a JSONL of
many is a task of a few numbers (its file, byte offset, length and first line) that the worker reads
itself: nothing of a trace is held by this process. The runs are graded as a suite's are
(judge.suite.run.run_tasks: this machine's worker processes, or Ray), each sending back a compact result
and its per-key verdicts; the report is the same for the same corpus whatever the engine. Each trace's
result is kept in the run's cache (judge.suite.trace_cache): only the traces it holds no result for are
graded, so a rerun of an unchanged corpus starts no worker, and its report is the same byte for byte.

Rates: a key's runs are the graded ones; a run violates it when a rule found it violated (certain) or,
on the runs the judge decided, when the judge said so. With a calibration record for the judge, the
judged share is Rogan-Gladen corrected with the record's TPR and TNR (calibration.prevalence.corpus_rate).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from judge import __version__
from judge.errors import JudgeInputError, require_extra
from judge.grade import GradeSession
from judge.ledger import policy_ledger
from judge.model.corpus import CorpusReport, FailingRun, KeyRate, RateInterval
from judge.model.fingerprint import ReportJudge
from judge.model.limits import MAX_LINE_BYTES
from judge.suite.engine import LOCAL, Engine
from judge.suite.run import SuiteRun, _policy_ref, default_jobs, run_tasks
from judge.suite.trace_cache import context_key, open_results
from judge.suite.worker import JudgeSpec, Task, ledger_key

MAX_ERROR_SAMPLES = 10


class _Kind(msgspec.Struct):
    kind: str = ""


_KIND = msgspec.json.Decoder(_Kind)


def trace_spans(path: Path, *, stop_after: int | None = None) -> list[tuple[int, int, int]]:
    """The traces in a JSONL file: (byte offset, length, first line) of each, split at run headers.
    A file whose first record is not a run header is one trace (its reader names the problem).
    `stop_after`: stop reading once that many headers were found (the last span is then cut short)."""
    starts: list[tuple[int, int]] = []
    offset = 0
    with path.open("rb") as fh:
        for number, line in enumerate(fh, 1):
            if stop_after is not None and len(starts) >= stop_after:
                break
            if len(line) > MAX_LINE_BYTES:
                raise JudgeInputError(f"a line longer than {MAX_LINE_BYTES} bytes", file=str(path), line=number)
            if b'"run"' in line:
                try:
                    if _KIND.decode(line).kind == "run":
                        starts.append((offset, number))
                except msgspec.DecodeError:
                    pass
            offset += len(line)
    if not starts or starts[0][0] != 0:
        starts.insert(0, (0, 1))
    ends = [s for s, _ in starts[1:]] + [offset]
    return [(start, end - start, line) for (start, line), end in zip(starts, ends, strict=True)]


def corpus_traces(paths: list[Path]) -> list[tuple[str, tuple[int, int, int] | None]]:
    """Every trace of the corpus in order: (file, None) for a file of one trace, (file, span) for one of many."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*.jsonl") if p.is_file())
        elif path.is_file():
            files.append(path)
        else:
            raise JudgeInputError("no such file or folder", file=str(path))
    out: list[tuple[str, tuple[int, int, int] | None]] = []
    for file in files:
        spans = trace_spans(file)
        out += [(str(file), None)] if len(spans) == 1 else [(str(file), span) for span in spans]
    return out


def is_corpus(paths: list[Path]) -> bool:
    """Whether `judge grade --policy` was given a corpus: a folder, or a JSONL file of several traces."""
    return any(p.is_dir() or (p.is_file() and len(trace_spans(p, stop_after=2)) > 1) for p in paths)


def _key_rates(ledger: Any, graded: list[dict[str, Any]], record: Any, seed: int) -> list[KeyRate]:
    from calibration.corpus import corpus_rate  # numpy only when a judge's rates are corrected

    tpr, tnr = (record.tpr, record.tnr) if record is not None and record.positive == "violated" else (None, None)
    rates = []
    for key, history in ledger.keys.items():
        rows = [r["keys"].get(key, [False, False, False]) for r in graded]
        det = sum(row[0] for row in rows)
        judged = [row for row in rows if not row[0] and row[1]]
        said = sum(row[2] for row in judged)
        n = len(rows)
        counts = dict(runs=n, violated=det + said, deterministic=det, judged=len(judged), judged_violated=said)
        if n == 0:
            rates.append(KeyRate(key=key, class_=history.class_, sensitivity=history.sensitivity, **counts,
                                 observed_rate=0.0, rate=0.0, interval=RateInterval(lower=None, upper=None),
                                 corrected=False, method="no graded run"))
            continue
        found = corpus_rate(n, det, len(judged), said, tpr=tpr, tnr=tnr, seed=seed)
        rates.append(KeyRate(key=key, class_=history.class_, sensitivity=history.sensitivity, **counts,
                             observed_rate=found.observed_rate, rate=found.rate,
                             interval=RateInterval(**found.interval.model_dump()), corrected=found.corrected,
                             method=found.method))
    return rates


def policy_digest(ledger: Any) -> str:
    """sha256 of the merged policy (the expected ledger's scenario as canonical JSON): what the rates mean."""
    return hashlib.sha256(ledger.scenario.model_dump_json(by_alias=True).encode()).hexdigest()


def _report_judge(session: GradeSession) -> ReportJudge | None:
    found = session.judge_object()
    return ReportJudge.model_validate(found) if found is not None else None


def _failing_sample(graded: list[dict[str, Any]], size: int, seed: int) -> list[FailingRun]:
    failing = [r for r in graded if r.get("outcome") == "fail"]
    chosen = sorted(random.Random(seed).sample(range(len(failing)), min(size, len(failing))))
    return [FailingRun(run_id=r["run_id"], trace=r["trace"], outcome=r["outcome"],
                       violated=sorted(k for k, row in r["keys"].items() if row[0] or row[2]),
                       first_divergence=r.get("first_divergence"), slice=r.get("slice") or [])
            for r in (failing[i] for i in chosen)]


def _counting_hits(progress: Callable[[int, int], None] | None, hits: int) -> Callable[[int, int], None] | None:
    """The progress of the graded traces, the `hits` read from the cache counted as done."""
    if progress is None:
        return None
    report = progress
    return lambda done, total: report(hits + done, hits + total)


def grade_corpus(paths: Sequence[str | Path], policy: str, *, judge_name: str | None = None,
                 config_file: str | Path | None = None, jobs: int | None = None, engine: Engine = LOCAL,
                 tools: str | Path | None = None, on_judge_error: str | None = None, allow_draft: bool = False,
                 sample_size: int = 20, seed: int = 0, cache: bool = True,
                 progress: Callable[[int, int], None] | None = None) -> CorpusReport:
    """Grade every trace of the corpus `paths` against `policy` (module docs). `judge_name` None:
    deterministic checks only. Bad paths, policies, tools files and judge names raise JudgeInputError
    (or ConfigError); an unreadable trace is counted in `errors`, not graded. `cache`: read and keep each
    trace's result in the run's cache (judge.suite.trace_cache; the judge's `cache = false` keeps none):
    only the traces it holds no result for are graded."""
    from judge.trace.toolkit import read_toolkit

    if sample_size < 0:
        raise JudgeInputError("must be 0 or more", field="--sample")
    # before any trace is graded: the report's rates have intervals (scipy) and bootstraps (numpy)
    require_extra("calibration", "a corpus report (its violation rates)")
    pol = _policy_ref(policy, Path.cwd(), field="--policy")
    assert pol is not None  # a policy was given
    ledger = policy_ledger(pol, allow_draft=allow_draft)
    traces = corpus_traces([Path(p) for p in paths])
    if not traces:
        raise JudgeInputError("no traces: the folders hold no *.jsonl file", file=str(paths[0]) if paths else None)
    toolkit = read_toolkit(tools) if tools is not None else None
    session = GradeSession.open(judge_name or "none", config_file=config_file, on_judge_error=on_judge_error)
    spec = JudgeSpec(name=session.judge_name if judge_name else None,
                     config_file=str(config_file) if config_file else None, on_judge_error=on_judge_error,
                     allow_draft=allow_draft, toolkit=toolkit, per_key=True)
    tasks = [Task(ledger.scenario.id, None, file, pol, span) for file, span in traces]
    digest = policy_digest(ledger)
    kept = open_results(session.similarity_cache if cache else False,
                        context_key(policy_sha256=digest, tools=tools, session=session))
    results, keys = kept.lookup(tasks)
    todo = [i for i, r in enumerate(results) if r is None]
    jobs = max(1, min(jobs or default_jobs(), len(todo) or 1))
    out = SuiteRun(report=None, workers=jobs)  # type: ignore[arg-type]
    if todo:
        graded_now = run_tasks([tasks[i] for i in todo], spec, {ledger_key(None, pol): ledger}, jobs,
                               _counting_hits(progress, len(tasks) - len(todo)), out, engine)
        kept.keep([keys[i] for i in todo], graded_now)
        for i, result in zip(todo, graded_now, strict=True):
            results[i] = result
    elif progress:
        progress(len(tasks), len(tasks))
    graded = [r for r in results if r is not None and r["status"] != "error"]
    errors = [r for r in results if r is not None and r["status"] == "error"]
    outcomes = {o: sum(r.get("outcome") == o for r in graded) for o in ("pass", "fail", "inconclusive")}
    record = session.calibration_record if judge_name else None
    stale = session.stale_warning() if judge_name else None
    warnings = [stale] if stale else []
    return CorpusReport(
        policy=str(ledger.policy), policy_sha256=digest, judge_version=__version__,
        corpus=[str(p) for p in paths], judge=_report_judge(session),
        calibration_record=str(session.calibration_path) if record is not None else None,
        runs=len(results), graded=len(graded), errors=len(errors), outcomes=outcomes,
        keys=_key_rates(ledger, graded, record, seed), failing_sample=_failing_sample(graded, sample_size, seed),
        sample_size=sample_size, seed=seed,
        error_samples=[f"{r['trace']}: {r.get('error')}" for r in errors[:MAX_ERROR_SAMPLES]], warnings=warnings)


__all__ = ["corpus_traces", "grade_corpus", "is_corpus", "trace_spans"]
