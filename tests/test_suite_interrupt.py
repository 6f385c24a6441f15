"""Ctrl-C stops `judge suite` at once: the workers terminated, one line on stderr, exit code 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "examples" / "checkout-firefox" / "scenario.yaml"
EVENTS = 20_000
RUNS = 300  # ~0.1 s each: a minute of work on two cores, far more than the test waits


def _long_trace(path: Path, events: int = EVENTS) -> None:
    lines = [{"kind": "run", "run_id": "long", "scenario": "checkout-firefox"},
             {"id": "e0", "turn": 1, "kind": "user", "text": "Fix the flaky checkout test."}]
    for i in range(1, events // 2):
        turn = 1 + i * 8 // events
        lines.append({"id": f"c{i}", "turn": turn, "kind": "tool-call", "call_id": f"k{i}", "tool": "run_tests",
                      "args": {"browser": "chromium", "spec": "tests/checkout.spec.ts"}})
        lines.append({"id": f"r{i}", "turn": turn, "kind": "tool-result", "call_id": f"k{i}", "tool": "run_tests",
                      "status": "ok", "result": {"passed": True}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def _foreground_signals() -> None:
    """A terminal's foreground job: Ctrl-C not ignored, even when this test runs in a background job
    (a non-interactive shell starts `cmd &` with SIGINT ignored, and an ignored signal stays so)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads worker processes from /proc (Linux)")
# Runs over 1 MB: the parent waits on its two workers; runs under it: the parent grades beside one worker.
@pytest.mark.slow
@pytest.mark.parametrize(("events", "runs", "forked"), [(EVENTS, RUNS, 2), (4_000, 2_500, 1)])
def test_ctrl_c_stops_the_suite_and_its_workers_within_two_seconds(tmp_path, events, runs, forked):
    from judge.suite.run import PARENT_RUN_BYTES

    count = runs
    runs = tmp_path / "runs"
    runs.mkdir()
    _long_trace(tmp_path / "long.jsonl", events)
    assert ((tmp_path / "long.jsonl").stat().st_size <= PARENT_RUN_BYTES) == (forked == 1)
    for i in range(count):
        (runs / f"r{i:03d}.jsonl").symlink_to(tmp_path / "long.jsonl")
    manifest = tmp_path / "suite.yaml"
    manifest.write_text(yaml.safe_dump({
        "suites": {"s": {"repetitions": count, "scenarios": ["checkout-firefox"]}},
        "releaseRules": {"safetyCriticalViolations": 0, "requiredScenarioPassRate": 1},
        "scenarios": {"checkout-firefox": {"file": str(SCENARIO), "runs": "runs/"}}}), encoding="utf-8")
    report = tmp_path / "report.json"
    proc = subprocess.Popen([sys.executable, "-c", "from judge.cli import main; main()", "suite", str(manifest), "--judge", "none", "-j", "2",
                             "--json", str(report)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=_foreground_signals)
    try:
        deadline = time.monotonic() + 120
        while len(_children(proc.pid)) < forked and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = _children(proc.pid)
        assert len(workers) == forked, "the suite never started its workers"
        time.sleep(1.0)  # the workers are grading
        assert proc.poll() is None, "the suite finished before it could be interrupted"
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert took <= 2.0, f"took {took:.1f} s to stop"
    assert proc.returncode == 130, (proc.returncode, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted:"), err
    assert "Traceback" not in err and out == ""
    assert not any(_alive(pid) for pid in workers), "a worker outlived the suite"
    assert not report.exists()



# ---------------------------------------------------------------- the pool itself (judge.suite.pool)


def _in_a_fresh_interpreter(test: str) -> bool:
    """Run `test` of this file in a fresh interpreter when this one runs threads (earlier tests left a
    local LLM server): the patched grade_task reaches the workers only by fork, and forking a
    threaded process could deadlock. True when it ran there (and passed)."""
    import threading

    if threading.active_count() == 1:
        return False
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"{__file__}::{test}"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout, done.stdout[-1000:]
    return True


def _pool_run(monkeypatch, grade, tasks, jobs=2, *, first=None):
    """The pool over `tasks`, `first` workers started before the others (as a suite does around its
    warm-up), and its run."""
    import multiprocessing

    from judge.suite import pool, worker

    monkeypatch.setattr(worker, "init_worker", lambda spec, ledgers: None)
    monkeypatch.setattr(worker, "grade_task", grade)  # inherited by the forked workers
    workers = pool.WorkerPool(None, {}, multiprocessing.get_context("fork"), tasks)
    if first:
        workers.start(first)
    workers.start(jobs - (first or 0))
    return workers, workers.run()


@pytest.mark.slow
@pytest.mark.parametrize("first", [None, 1])
def test_results_come_back_in_task_order_whatever_the_scheduling(monkeypatch, first):
    if _in_a_fresh_interpreter(f"test_results_come_back_in_task_order_whatever_the_scheduling[{first}]"):
        return

    def grade(task):
        time.sleep(0.002 * (task % 5))  # uneven runs finish out of order
        return {"task": task, "pid": os.getpid()}

    _, done = _pool_run(monkeypatch, grade, list(range(40)), first=first)
    assert [r["task"] for r in done.results] == list(range(40))
    assert len({r["pid"] for r in done.results}) == 2 and sum(w.tasks for w in done.workers) == 40
    assert all(w.peak_rss_mb > 0 for w in done.workers)


@pytest.mark.slow
def test_a_worker_that_raises_fails_the_suite_with_its_traceback(monkeypatch):
    if _in_a_fresh_interpreter("test_a_worker_that_raises_fails_the_suite_with_its_traceback"):
        return
    from judge.suite.pool import WorkerError

    def grade(task):
        if task == 7:
            raise ValueError("boom in run 7")
        return {"task": task}

    with pytest.raises(WorkerError, match="ValueError: boom in run 7") as caught:
        _pool_run(monkeypatch, grade, list(range(20)))
    assert "Traceback" in str(caught.value)


@pytest.mark.slow
def test_a_worker_that_dies_fails_the_suite(monkeypatch):
    if _in_a_fresh_interpreter("test_a_worker_that_dies_fails_the_suite"):
        return
    from judge.suite.pool import WorkerError

    def grade(task):
        if task == 3:
            os._exit(9)
        return {"task": task}

    with pytest.raises(WorkerError, match="died"):
        _pool_run(monkeypatch, grade, list(range(20)))


def _pool_run_here(monkeypatch, grade, tasks):
    """The pool over `tasks` with this process as one of two jobs: one worker forked, this process
    grading the first task before it runs the rest beside the worker (as a suite of small runs does)."""
    import multiprocessing

    from judge.suite import pool, worker

    monkeypatch.setattr(worker, "init_worker", lambda spec, ledgers: None)
    monkeypatch.setattr(worker, "grade_task", grade)
    workers = pool.WorkerPool(None, {}, multiprocessing.get_context("fork"), tasks)
    workers.start(1)
    workers.grade_here(grade)
    progress: list[int] = []
    return workers.run(progress.append, local=grade), progress


@pytest.mark.slow
def test_the_parent_grades_beside_its_worker_and_results_keep_task_order(monkeypatch):
    if _in_a_fresh_interpreter("test_the_parent_grades_beside_its_worker_and_results_keep_task_order"):
        return

    def grade(task):
        time.sleep(0.002 * (task % 5))
        return {"task": task, "pid": os.getpid()}

    done, progress = _pool_run_here(monkeypatch, grade, list(range(40)))
    assert [r["task"] for r in done.results] == list(range(40))
    me = os.getpid()
    mine = [r["task"] for r in done.results if r["pid"] == me]
    assert mine == sorted(mine) and 1 < len(mine) < 39  # both processes graded a share
    assert [w.parent for w in done.workers] == [False, True] and done.workers[1].pid == me
    assert [w.tasks for w in done.workers] == [40 - len(mine), len(mine)]
    assert progress == sorted(progress) and progress[-1] == 40 and len(set(progress)) == len(progress)


@pytest.mark.slow
def test_a_worker_that_raises_while_the_parent_grades_fails_the_suite(monkeypatch):
    if _in_a_fresh_interpreter("test_a_worker_that_raises_while_the_parent_grades_fails_the_suite"):
        return
    from judge.suite.pool import WorkerError

    parent = os.getpid()

    def grade(task):
        if os.getpid() != parent:
            raise ValueError(f"boom in run {task}")
        time.sleep(0.01)
        return {"task": task}

    with pytest.raises(WorkerError, match="ValueError: boom in run") as caught:
        _pool_run_here(monkeypatch, grade, list(range(20)))
    assert "Traceback" in str(caught.value)
