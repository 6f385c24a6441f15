"""Where a suite's (or a corpus's) grading tasks run: this machine's worker processes (judge.suite.pool),
or a Ray cluster (`--engine ray[:ADDRESS]`).

On Ray the tasks are Ray tasks (not actors, not Ray Data: each run is an independent pure function of
its trace, its ledger and the judge spec). They go out in batches (guided, as the local pool's chunks:
what is left over 4 x the cluster's CPUs, at most MAX_BATCH), the expected ledgers once through the
object store; each Ray worker process builds its grade session once per suite and keeps it for the
next batches. Results come back in any order and are put back in task order, so the report is the
one a local run writes, byte for byte. What a Ray worker needs to grade as this machine does:

- the same judge version (checked: a batch reports the version it ran, a mismatch is an error);
- the same paths (traces, scenarios, `--config`): a shared file system or the same checkout;
- the settings this process has in `JUDGE_*`, `HF_*` and `LITELLM_*` variables, sent along with every
  batch and set in the worker before it builds its grade session, except any whose name says it is a
  secret (KEY, TOKEN, SECRET, PASSWORD): a judge's API key is set on each node, never shipped through
  Ray. (Not as the job's runtime environment: a job with one is given workers of its own, started
  beside the ones the node already runs for jobs without, which doubled the workers' start-up CPU;
  benchmarks/bench_corpus.py);
- one verdict cache: set the judge's `cache = "redis://HOST:PORT/DB"` (judge.judges.redis_cache)
  when the cluster has more than one machine.

`ray` is the optional extra `judge-drift[ray]`; it is imported only here, and only for `--engine ray`.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judge.errors import UsageError, require_extra

MAX_BATCH = 8
FORWARDED_ENV = re.compile(r"^(JUDGE_|HF_|LITELLM_|TOKENIZERS_PARALLELISM$)")
SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
_STATE: dict[str, Any] = {}  # in a Ray worker: the suite whose grade session it holds


@dataclass(frozen=True)
class Engine:
    """`local` (worker processes on this machine) or `ray` (a Ray cluster; `address` None: RAY_ADDRESS,
    else a new Ray instance on this machine)."""

    kind: str = "local"
    address: str | None = None

    @property
    def label(self) -> str:
        """How `--engine` spells it: `local`, `ray` or `ray:ADDRESS`."""
        return self.kind + (f":{self.address}" if self.address else "")


LOCAL = Engine()  # the default engine: a shared constant, since a frozen dataclass is never mutated


def parse_engine(text: str | None) -> Engine:
    """`local`, `ray` or `ray:ADDRESS` (ADDRESS as `ray.init` takes it: HOST:PORT, auto, ray://HOST:PORT)."""
    if text is None or text == "local":
        return LOCAL
    kind, _, address = text.partition(":")
    if kind != "ray" or (_ and not address):
        raise UsageError(f"--engine must be local, ray or ray:ADDRESS, not {text!r}", field="--engine")
    return Engine("ray", address or None)


def forwarded_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The variables a Ray job carries to its workers (module docs): judge's, the model hub's and
    litellm's settings, never a secret."""
    environ = dict(os.environ if environ is None else environ)
    return {k: v for k, v in sorted(environ.items()) if FORWARDED_ENV.match(k) and not SECRET_ENV.search(k)}


def _import_ray() -> Any:
    require_extra("ray", "--engine ray")
    import ray

    return ray


def grade_batch(suite_id: str, spec: Any, ledgers: dict[str, Any], batch: list[tuple[int, Any]],
                environ: dict[str, str] | None = None) -> dict[str, Any]:
    """A Ray task: grade `batch` ((index, Task) pairs) in this worker process, its session built once per suite
    with the driver's settings `environ` (forwarded_env) set first."""
    if _STATE.get("suite") != suite_id:
        os.environ.update(environ or {})
    from judge import __version__
    from judge.suite.worker import grade_task, init_worker, peak_rss_mb

    if _STATE.get("suite") != suite_id:
        init_worker(spec, ledgers)
        _STATE["suite"] = suite_id
    started = time.perf_counter()
    results = [(index, grade_task(task)) for index, task in batch]
    return {"results": results, "grade_s": time.perf_counter() - started, "pid": os.getpid(),
            "peak_rss_mb": peak_rss_mb(), "version": __version__}


def _batches(n: int, cpus: int) -> list[list[int]]:
    out, start = [], 0
    while start < n:
        size = max(1, min(MAX_BATCH, (n - start) // (4 * max(1, cpus))))
        out.append(list(range(start, min(n, start + size))))
        start += size
    return out


def run_on_ray(tasks: list[Any], spec: Any, ledgers: dict[str, Any], address: str | None,
               progress: Callable[[int], None] | None = None) -> tuple[list[Any], list[dict[str, Any]]]:
    """Grade every task on the Ray cluster at `address`: (the results in task order, one record per
    batch: grade_s, pid, peak_rss_mb). Ctrl-C cancels what is still queued; a failed task is a WorkerError."""
    from judge import __version__
    from judge.suite.pool import WorkerError

    ray = _import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        local = {} if address else {"include_dashboard": False}  # a new instance: no dashboard to serve
        ray.init(address=address, logging_level="ERROR", log_to_driver=False, **local)
    remote = ray.remote(grade_batch)
    results: list[Any] = [None] * len(tasks)
    batches: list[dict[str, Any]] = []
    pending: list[Any] = []
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        ledgers_ref, suite_id = ray.put(ledgers), uuid.uuid4().hex
        environ = forwarded_env()
        pending = [remote.remote(suite_id, spec, ledgers_ref, [(i, tasks[i]) for i in batch], environ)
                   for batch in _batches(len(tasks), cpus)]
        done = 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            try:
                batch = ray.get(ready[0])
            except ray.exceptions.RayError as exc:
                raise WorkerError(f"a Ray task failed: {str(exc).strip().splitlines()[0]}") from None
            if batch["version"] != __version__:
                raise WorkerError(f"a Ray worker (pid {batch['pid']}) runs judge {batch['version']}, this machine "
                                  f"{__version__}: install the same version on every node")
            for index, result in batch.pop("results"):
                results[index] = result
                done += 1
            batches.append(batch)
            if progress:
                progress(done)
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started_here:
            ray.shutdown()
    return results, batches
