"""The suite's worker processes: forked once, fed one run at a time through a pipe each, stopped at once.

Why not concurrent.futures: its pool pickled chunks of runs up front, ran a feeder and a manager
thread in the parent, and on Ctrl-C waited for the queued work to finish (84-100 s, silently) before
the interpreter could exit. Here each worker is a process with one duplex pipe:

- the parent streams tasks (a scenario and a trace path, a few hundred bytes each) to each worker in
  small chunks, at most PREFETCH chunks outstanding per worker so that a worker never waits for its
  next run, and reads back compact results (judge.suite.worker) a chunk at a time as they come, in
  any order (they are put back in manifest order, so the report does not depend on the
  scheduling). Chunks shrink as the queue drains (guided scheduling: what is left over 4 x the
  workers, at most MAX_CHUNK), so the parent wakes a few dozen times, not once per run, and the
  workers still finish together;
- the parent's objects are frozen (gc.freeze) before the fork: the workers' garbage collector then
  never walks, and so never copies, the pages inherited from the parent (copy-on-write);
- workers ignore SIGINT: Ctrl-C reaches the parent, which terminates them (SIGTERM, then SIGKILL
  after STOP_GRACE_S) and re-raises KeyboardInterrupt, within a second or two;
- a worker that dies (killed, out of memory) or raises is an error of the suite, never a silent gap.

The parent can be one of the jobs (`run(local=...)`, a deterministic suite of small runs: judge.suite.run):
it grades a run itself whenever every worker has its next runs queued, so `jobs` cores take `jobs - 1`
workers. Otherwise it only waits on the pipes, a core's worth of nothing to do, and every worker forked
pays its own start, exit and copy-on-write of what it touches.
"""

from __future__ import annotations

import gc
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PREFETCH = 2
MAX_CHUNK = 8
STOP_GRACE_S = 1.0


@dataclass
class WorkerStats:
    """What one worker reports when it stops: CPU and peak memory, and the time it spent grading."""

    pid: int
    peak_rss_mb: float = 0.0
    start_cpu_s: float = 0.0  # CPU from the fork to ready (the grade session built)
    grade_cpu_s: float = 0.0  # CPU inside grade_task
    grade_s: float = 0.0  # wall time inside grade_task
    tasks: int = 0
    parent: bool = False  # the suite's own process, grading runs beside its workers (`run(local=...)`)


@dataclass
class PoolRun:
    """The results in task order and each worker's stats."""

    results: list[Any]
    workers: list[WorkerStats] = field(default_factory=list)


def _serve(conn: Any, spec: Any, ledgers: dict[str, Any], environ: dict[str, str] | None = None) -> None:
    """A worker's loop: build the grade session, then grade each task received until None. `environ`:
    the parent's environment now (a forkserver child inherits the server's, from when it started)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it terminates us
    if environ is not None:
        os.environ.clear()
        os.environ.update(environ)
    from judge.suite.worker import grade_task, init_worker, peak_rss_mb
    from judge.text import minilm

    minilm.forget_loaded()  # a model the parent loaded is not used across the fork

    stats = WorkerStats(pid=os.getpid())
    try:
        init_worker(spec, ledgers)
        stats.start_cpu_s = time.process_time()
        while True:
            chunk = conn.recv()
            if chunk is None:
                break
            results = []
            for index, task in chunk:
                started, cpu = time.perf_counter(), time.process_time()
                results.append((index, grade_task(task)))
                stats.grade_s += time.perf_counter() - started
                stats.grade_cpu_s += time.process_time() - cpu
                stats.tasks += 1
            conn.send(("results", results))
        stats.peak_rss_mb = peak_rss_mb()
        conn.send(("stats", stats))
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        pass  # the parent went away or stopped us
    except BaseException as exc:  # a bug: the parent re-raises it (exit 4), with our traceback
        import traceback

        try:
            conn.send(("error", (type(exc).__name__, str(exc), traceback.format_exc())))
        except Exception:
            pass
    finally:
        conn.close()


class WorkerError(RuntimeError):
    """A suite worker raised (a bug) or died; carries the worker's traceback when it sent one."""


class WorkerPool:
    """Worker processes started from `context` (a multiprocessing context: fork, or forkserver when
    the parent runs threads), each given the judge spec and the parent's loaded ledgers, to grade
    `tasks`. `start(n)` starts n more (several calls may start them in steps: a suite forks one
    before its parent's warm-up and the rest after it), each fed its first runs at once; `run()`
    collects the results."""

    def __init__(self, spec: Any, ledgers: dict[str, Any], context: Any, tasks: list[Any]) -> None:
        self.spec, self.ledgers, self.context, self.tasks = spec, ledgers, context, tasks
        self.processes: list[Any] = []
        self.conns: list[Any] = []
        self.pending = list(range(len(tasks)))[::-1]  # popped from the end: manifest order
        self.outstanding: dict[int, int] = {}
        self.jobs = 0  # the workers asked for so far, and the parent when it grades (chunk sizes follow them)
        self.results: list[Any] = [None] * len(tasks)
        self.done = 0
        self.here: WorkerStats | None = None  # the parent's own grading (grade_here)
        self.keep = 0  # runs a starting worker leaves queued for the parent (start's `keep`)
        self._stats: list[WorkerStats] = []

    def start(self, n: int, keep: int = 0) -> None:
        """Start `n` more workers, each sent its first runs before the next is forked; `keep` runs
        stay queued for this process (it grades one while the worker starts: grade_here)."""
        self.jobs += n
        self.keep = keep
        frozen = self.context.get_start_method() == "fork"
        if frozen:
            gc.freeze()  # inherited objects are never scanned by the workers' GC: no copy-on-write of them
        try:
            for _ in range(n):
                parent_end, child_end = self.context.Pipe(duplex=True)
                environ = None if frozen else dict(os.environ)  # a fork inherits it; a forkserver child does not
                process = self.context.Process(target=_serve, args=(child_end, self.spec, self.ledgers, environ),
                                               daemon=True)
                process.start()
                child_end.close()
                self.processes.append(process)
                self.conns.append(parent_end)
                self.outstanding[id(parent_end)] = 0
                self._feed(parent_end)  # it finds its first runs waiting once it has started
        except BaseException:
            self.stop()
            raise
        finally:
            self.keep = 0
            if frozen:
                gc.unfreeze()

    def grade_here(self, local: Callable[[Any], Any]) -> bool:
        """Grade the next pending task in this process with `local` (the parent as one of the jobs);
        False when none is pending (the workers hold every run)."""
        if not self.pending:
            return False
        if self.here is None:
            self.here = WorkerStats(pid=os.getpid(), parent=True)
            self.jobs += 1
        index = self.pending.pop()
        started, cpu = time.perf_counter(), time.process_time()
        self.results[index] = local(self.tasks[index])
        self.here.grade_s += time.perf_counter() - started
        self.here.grade_cpu_s += time.process_time() - cpu
        self.here.tasks += 1
        self.done += 1
        return True

    def run(self, progress: Callable[[int], None] | None = None,
            local: Callable[[Any], Any] | None = None) -> PoolRun:
        """Grade every task; `progress(done)` after each result. `local(task)`: this process grades
        tasks too, one at a time, whenever every worker has its next runs queued (a worker never
        waits for its runs longer than one of the parent's). Raises WorkerError when a worker
        fails; KeyboardInterrupt stops the workers before it propagates."""
        from multiprocessing.connection import wait

        live = {id(c): c for c in self.conns}
        try:
            while live or (local is not None and self.pending):
                busy = local is not None and bool(self.pending)
                for conn in wait(list(live.values()), timeout=0 if busy else None):
                    kind, payload = self._receive(conn)
                    if kind == "results":
                        for index, result in payload:
                            self.results[index] = result
                        self.outstanding[id(conn)] -= 1
                        self.done += len(payload)
                        if progress:
                            progress(self.done)
                        self._feed(conn)
                    elif kind == "stats":
                        self._stats.append(payload)
                        del live[id(conn)]
                if local is not None and self.pending:
                    self.grade_here(local)
                    if progress:
                        progress(self.done)
                    if not self.pending:  # the last run was ours: a worker with nothing queued stops now
                        for conn in live.values():
                            self._feed(conn)
        except BaseException:
            self.stop()
            raise
        self.stop(graceful=True)
        if self.here is not None:
            from judge.suite.worker import peak_rss_mb

            self.here.peak_rss_mb = peak_rss_mb()
            self._stats.append(self.here)
        return PoolRun(results=self.results, workers=self._stats)

    def _feed(self, conn: Any) -> None:
        pending, outstanding = self.pending, self.outstanding
        while len(pending) > self.keep and outstanding[id(conn)] < PREFETCH:
            size = max(1, min(MAX_CHUNK, len(pending) // (4 * self.jobs)))
            chunk = [pending.pop() for _ in range(min(size, len(pending) - self.keep))]
            self._send(conn, [(index, self.tasks[index]) for index in chunk])
            outstanding[id(conn)] += 1
        if not pending and outstanding[id(conn)] == 0:
            self._send(conn, None)  # nothing left: report your stats and stop
            outstanding[id(conn)] = -1

    def _send(self, conn: Any, message: Any) -> None:
        try:
            conn.send(message)
        except OSError:  # the worker is gone: what it said last (its error) is the reason
            self._receive(conn)
            raise WorkerError("a suite worker stopped reading its runs") from None

    def _receive(self, conn: Any) -> tuple[str, Any]:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):
            codes = [p.exitcode for p in self.processes if p.exitcode not in (None, 0)]
            raise WorkerError(f"a suite worker died (exit code {codes[0] if codes else 'unknown'}); "
                              "out of memory, or killed") from None
        if kind == "error":
            name, message, trace = payload
            raise WorkerError(f"a suite worker failed with {name}: {message}\n{trace}")
        return kind, payload

    def stop(self, graceful: bool = False) -> None:
        """End every worker: joined when they finished (`graceful`), else terminated, then killed
        after STOP_GRACE_S; never waits for work still queued."""
        for conn in self.conns:
            conn.close()
        if not graceful:
            for process in self.processes:
                if process.is_alive():
                    process.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(STOP_GRACE_S)
        self.conns, self.processes = [], []
