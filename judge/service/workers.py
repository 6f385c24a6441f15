"""Grading in worker processes, each request under a deadline.

`POST /v1/grade` takes a scenario and traces from the request body: the work one request asks for is
the client's to choose. So the server never grades in its own process. A small pool of worker
processes (`judge serve --workers`, started as the server starts, else on the first request) grades
one request each at a time; the server's event loop only waits on a pipe, so `/healthz` and every
other client are answered while a worker is busy, whatever the request holds. A request whose
grading exceeds the deadline (`judge serve --deadline`) gets 503 (`X-Judge-Exit-Code: 2`, like every
refusal of a request the server will not serve) and its worker is killed and replaced; so is a
worker that dies (out of memory, say): that request gets 500. A request that finds every worker busy
waits for one, up to the deadline too.

Each worker keeps its own judges (built on their first use, as the server's JudgePool would): an
embedding model loads once per worker, not once per request. Workers start from the forkserver
(forking a threaded server can deadlock) with the server's environment as it was when they started.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError

log = logging.getLogger("judge.service")
DEFAULT_WORKERS = 2
DEFAULT_DEADLINE_S = 120.0


class DeadlineExceeded(Exception):
    """Grading a request took longer than the deadline (or no worker came free within it)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class WorkerFailed(RuntimeError):
    """The worker died while grading (killed by the system, out of memory) or hit a bug."""


def _serve(conn: Any, env: dict[str, str], config_file: str | None) -> None:
    """A worker's loop: grade each request it is sent, answer (status, value), until the pipe closes."""
    os.environ.clear()
    os.environ.update(env)
    from calibration.errors import CalibrationInputError
    from judge.service.grade import GradeRequest, JudgePool, grade_request

    pool = JudgePool(config_file)
    while True:
        try:
            payload = conn.recv()
        except (EOFError, OSError):
            return
        try:
            graded = grade_request(GradeRequest.model_validate(payload), pool)
            answer: tuple[str, Any] = ("ok", (graded.to_json(), graded.exit_code))
        except (JudgeInputError, CalibrationInputError) as exc:
            answer = ("input", str(exc))
        except MemoryError:
            answer = ("failed", "out of memory while grading")
        except Exception as exc:  # a bug: its traceback goes to the server's log, one line to the client
            log.exception("internal error in a grading worker")
            answer = ("failed", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(answer)
        except (OSError, ValueError):
            return


class _Worker:
    def __init__(self, ctx: Any, config_file: str | None) -> None:
        parent, child = ctx.Pipe()
        self.conn = parent
        self.process = ctx.Process(target=_serve, args=(child, dict(os.environ), config_file), daemon=True,
                                   name="judge-grade-worker")
        self.process.start()
        child.close()

    def kill(self) -> None:
        try:
            self.conn.close()
        except OSError:
            pass
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)


def _context() -> Any:
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["judge.service.grade", "judge.grade"])
    return ctx


class GradeWorkers:
    """Up to `size` worker processes; `grade(payload)` blocks (run it in a thread) until a worker
    answers, the deadline passes (DeadlineExceeded) or the worker fails (WorkerFailed)."""

    def __init__(self, config_file: str | Path | None = None, *, size: int = DEFAULT_WORKERS,
                 deadline_s: float = DEFAULT_DEADLINE_S) -> None:
        self.config_file = str(config_file) if config_file is not None else None
        self.size = max(1, size)
        self.deadline_s = deadline_s
        self.started = 0  # workers started so far (replacements included)
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()
        self._slots = threading.BoundedSemaphore(self.size)
        self._lock = threading.Lock()
        self._ctx: Any = None
        self._finalizer = weakref.finalize(self, _kill_all, self._all)

    def _take(self) -> _Worker:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.process.is_alive():
                    return worker
                self._drop(worker)
            if self._ctx is None:
                self._ctx = _context()
            worker = _Worker(self._ctx, self.config_file)
            self._all.add(worker)
            self.started += 1
            return worker

    def warm(self) -> None:
        """Start the workers in the background (the server starts up): the first requests then find
        them ready instead of waiting for a process to start and import the grader."""
        def start() -> None:
            with self._lock:
                if self._ctx is None:
                    self._ctx = _context()
                while len(self._all) < self.size:
                    worker = _Worker(self._ctx, self.config_file)
                    self._all.add(worker)
                    self._idle.append(worker)
                    self.started += 1

        threading.Thread(target=start, name="judge-warm-workers", daemon=True).start()

    def _drop(self, worker: _Worker) -> None:
        worker.kill()
        self._all.discard(worker)

    def grade(self, payload: dict[str, Any]) -> tuple[str, int]:
        """(the report's JSON, the exit code `judge grade` would return) of one request."""
        if not self._slots.acquire(timeout=self.deadline_s):
            raise DeadlineExceeded(f"all {self.size} grading workers stayed busy for the deadline of "
                                   f"{self.deadline_s:g} s (judge serve --workers, --deadline); try again later")
        try:
            worker = self._take()
            try:
                worker.conn.send(payload)
                if not worker.conn.poll(self.deadline_s):
                    raise DeadlineExceeded(f"grading took longer than the deadline of {self.deadline_s:g} s "
                                           "(judge serve --deadline); send fewer or smaller traces, or raise it")
                status, value = worker.conn.recv()
            except (EOFError, OSError) as exc:
                self._drop(worker)
                code = worker.process.exitcode
                raise WorkerFailed(f"the grading worker died (exit code {code})") from exc
            except BaseException:
                self._drop(worker)
                raise
            with self._lock:
                self._idle.append(worker)
        finally:
            self._slots.release()
        if status == "ok":
            return value
        if status == "input":
            raise JudgeInputError(value)
        raise WorkerFailed(value)

    def close(self) -> None:
        """Stop every worker (the server shuts down)."""
        with self._lock:
            _kill_all(self._all)
            self._idle.clear()


def _kill_all(workers: set[_Worker]) -> None:
    for worker in list(workers):
        worker.kill()
    workers.clear()
