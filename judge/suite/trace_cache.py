"""Whole-trace results of a corpus grade, kept in the run's cache (the `traces` namespace of the verdict
cache: judge.judges.cache), so a rerun over an unchanged corpus reads each trace's result back and grades
nothing: no worker is started, no model is loaded, no trace is parsed.

**Never stale.** An entry is keyed on the sha256 of everything the result depends on:

- the trace's bytes (the file, or its span inside a JSONL of many) and how the report names it (its path,
  and its first line for one of many: the result carries the name, and a run without an id is named
  after its file);
- the policy: the merged scenario the rates are of (judge.suite.corpus.policy_digest: every policy it
  extends, as loaded) and the `--tools` file's bytes;
- the code: judge's version and the sha256 of every source and data file of the `judge` package
  (`code_sha256`: any edit of judge's code or of its bundled thresholds, patterns or policies misses);
  the text model's identity (its weights' sha256 and runtime: judge.text.similarity.model_identity);
- the judge: its fingerprint (prompt hashes, model, sampling; the local judge's own code and parameter
  hashes), how far it is trusted, its calibration record's content and the grade policy
  (`on_judge_error`, `review`).

Only graded runs are kept, and only those the judge answered in full: a trace that could not be read, or
a run with a judge error (a timeout, an unreachable server), is graded again on the next run.

**What is stored** is the run's compact result (judge.suite.worker.run_result: outcome, per-key verdicts,
first divergence, slice ids, warnings), which the corpus report is built from; it is computed from the
redacted trace, as the report is, and holds no trace text of its own. A store that cannot be read or
written is a miss, never an error; SQLite writes each entry in a transaction of its own (atomic), as it
does the judge's verdicts. `judge grade --no-cache` (or the judge's `cache = false`) neither reads nor
writes it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import judge
from judge import __version__

NAMESPACE = "traces"
CODE_SUFFIXES = frozenset({".py", ".json", ".jsonl", ".yaml", ".yml", ".toml", ".txt", ".md", ".onnx", ".html",
                           ".css", ".js"})
"""The files of the package whose bytes are the code's identity (every kind the package ships)."""


def tree_sha256(root: Path) -> str:
    """sha256 over the source and data files below `root` (CODE_SUFFIXES; relative path and bytes, in path
    order, line endings normalised; bytecode caches left out)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in CODE_SUFFIXES and "__pycache__" not in p.parts):
        digest.update(f"{path.relative_to(root).as_posix()}\0".encode())
        digest.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()


@lru_cache(maxsize=1)
def code_sha256() -> str:
    """tree_sha256 of the `judge` package in use: what grades a trace, and what else ships beside it."""
    return tree_sha256(Path(str(judge.__file__)).parent)


def trace_bytes(task: Any) -> bytes:
    """The bytes of a task's trace: its file, or its span inside a JSONL of many."""
    with open(task.trace, "rb") as fh:
        if task.span is None:
            return fh.read()
        offset, length, _ = task.span
        fh.seek(offset)
        return fh.read(length)


def context_key(*, policy_sha256: str, tools: str | Path | None, session: Any) -> str:
    """The part of every entry's key that is not the trace (module docs)."""
    from judge.judges.cache import request_key
    from judge.text.serves import params
    from judge.text.similarity import model_identity

    record = session.calibration_record
    return request_key({
        "version": __version__, "code": code_sha256(), "text_model": model_identity(params().model),
        "policy": policy_sha256,
        "tools": hashlib.sha256(Path(tools).read_bytes()).hexdigest() if tools is not None else None,
        "judge": session.judge_object(), "grade_policy": session.policy.model_dump(mode="json"),
        "calibration": None if record is None else record.model_dump(mode="json"),
    })


class TraceResults:
    """The `traces` namespace of `store` (a VerdictCache or RedisVerdictCache; None: nothing kept), under
    the context key `context`."""

    def __init__(self, store: Any, context: str) -> None:
        self.store, self.context = store, context
        self.read = 0  # results read back
        self.kept = 0  # results written

    def key(self, task: Any, data: bytes) -> str:
        """An entry's key: the context, the trace's name and the sha256 of its bytes."""
        return hashlib.sha256(f"{self.context}\0{task.name}\0".encode() + hashlib.sha256(data).digest()).hexdigest()

    def lookup(self, tasks: Sequence[Any]) -> tuple[list[dict[str, Any] | None], list[str | None]]:
        """Per task: its stored result (None: a miss) and its key (None: its trace could not be read,
        which the worker then reports)."""
        results: list[dict[str, Any] | None] = []
        keys: list[str | None] = []
        if self.store is None:  # (nothing kept: no trace is read for a key)
            return [None] * len(tasks), [None] * len(tasks)
        for task in tasks:
            try:
                key: str | None = self.key(task, trace_bytes(task))
            except OSError:
                key = None
            found = self.store.get(key) if key is not None else None
            result = found.get("result") if isinstance(found, dict) else None
            results.append(result if isinstance(result, dict) else None)
            keys.append(key)
        self.read = sum(r is not None for r in results)
        return results, keys

    def keep(self, keys: Sequence[str | None], results: Sequence[dict[str, Any]]) -> None:
        """Store the results worth keeping (module docs: graded, with no judge error)."""
        if self.store is None:
            return
        for key, result in zip(keys, results, strict=True):
            if key is not None and result.get("status") != "error" and not result.get("judge_errors"):
                self.kept += bool(self.store.put(key, {"result": storable(result)}))


def storable(result: dict[str, Any]) -> dict[str, Any]:
    """A result as JSON data (its slice's compact ids as a list; a full report is never kept)."""
    out = {k: v for k, v in result.items() if k != "report"}
    if out.get("slice") is not None:
        out["slice"] = list(out["slice"])
    return out


def open_results(setting: bool | str, context: str) -> TraceResults:
    """The trace results of the cache a judge's `cache` setting names (false: none)."""
    from judge.judges.redis_cache import open_cache

    return TraceResults(open_cache(setting, NAMESPACE), context)
