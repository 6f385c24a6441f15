"""Verdict cache: one SQLite database in WAL mode, one row per judge call, keyed on the full request.

Two levels. A *call* entry is keyed on the sha256 of the canonical JSON of everything that
determines the answer: the prompt fingerprint, the model, the sampling parameters, the rendered
messages and the response schema. What is stored is the *validated* answer (plus usage), not the
raw completion, so a hit needs no re-validation and an unchanged rerun makes no request at all. A
*checkpoint* entry, keyed on the judge fingerprint (prompt hash, model, sampling, render version)
and the request's content (ledger rows, slice events, keys, turns; not the run id), holds the merged
verdict, so a rerun skips even rendering and token counting; when it misses (say one window of a
long slice changed) the call entries still spare every unchanged call.

Storage: `<folder>/verdicts.sqlite3`, a table of (namespace, key) -> JSON. WAL mode lets readers and
one writer at a time work concurrently, across threads and processes (each process and thread has
its own connection; a writer waits up to 30 s for the lock): a write costs under 0.1 ms, not
the milliseconds of a temporary file renamed into place. SQLite's WAL needs a local file system (not
NFS). An entry written by an older version (one JSON file per key, `<namespace>/<2 hex>/<key>.json`)
is still read; whether that folder exists is looked at once per cache (a miss then costs no file
lookup). An unreadable entry, or a folder that cannot be written, is a miss: a verdict never
fails for the cache. Requests are built from redacted, blinded events, so the cache holds nothing
the judge was not allowed to see.

Location: `$JUDGE_CACHE_DIR`, else the user cache folder (`platformdirs.user_cache_dir("judge")`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from judge.errors import ConfigError
from judge.judges.base import JudgeRequest

DB_NAME = "verdicts.sqlite3"
BUSY_TIMEOUT_S = 30.0
# Opening is serialised within a process, and a locked open is retried: switching a new database to
# WAL needs a lock that SQLite's busy timeout does not wait for, so writers that open at the same
# moment (threads of one judge, processes of a suite) would otherwise see "database is locked".
_OPEN_LOCK = threading.Lock()
_OPEN_ATTEMPTS = 20
_OPEN_BACKOFF_S = 0.05
_SCHEMA = ("CREATE TABLE IF NOT EXISTS entries (namespace TEXT NOT NULL, key TEXT NOT NULL, "
           "value TEXT NOT NULL, written REAL NOT NULL, PRIMARY KEY (namespace, key)) WITHOUT ROWID")


def default_cache_dir() -> Path:
    """$JUDGE_CACHE_DIR, else the user cache folder; one that exists but is not a folder is a ConfigError."""
    env = os.environ.get("JUDGE_CACHE_DIR")
    if env:
        root = Path(env)
    else:
        import platformdirs

        root = Path(platformdirs.user_cache_dir("judge"))
    if root.exists() and not root.is_dir():
        raise ConfigError("the cache folder is not a folder; point JUDGE_CACHE_DIR at a folder", file=str(root))
    return root


def canonical_json(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def request_key(payload: Any) -> str:
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def call_key(config: Any, prompt: Any, messages: list[dict[str, str]], model_cls: Any, params: dict[str, Any],
             **extra: Any) -> str:
    """The cache key of one structured call: everything that decides its answer (the prompt's
    fingerprint, model, endpoint, mode, sampling, the messages and the answer's schema; `extra` adds
    what a caller's answers also depend on, e.g. the sample and render version)."""
    from judge.judges.schema import json_schema

    return request_key({"prompt": prompt.fingerprint(), "model": config.model, "api_base": config.api_base,
                        "mode": config.mode, "params": params, "messages": messages,
                        "schema": json_schema(model_cls), **extra})


def _row(row: Any) -> dict[str, Any]:
    return {f.name: getattr(row, f.name) for f in dataclasses.fields(row)}  # asdict deep-copies: slow


def checkpoint_key(fingerprint: dict[str, Any], request: JudgeRequest, **extra: Any) -> str:
    """The key of a checkpoint's merged verdict: the judge's identity plus what the judge is shown."""
    return request_key({
        "level": "checkpoint", "judge": fingerprint, **extra,
        "after_turn": request.after_turn, "from_turn": request.from_turn, "keys": list(request.keys),
        "ledger": [_row(row) for row in request.ledger],
        "events": [event.model_dump(mode="json", exclude_none=True) for event in request.events],
    })


class VerdictCache:
    """The `namespace` part of the verdict database in `root` (see module docs)."""

    def __init__(self, root: str | Path | None = None, *, namespace: str = "llm") -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.namespace = namespace
        self._local = threading.local()
        self._broken = False  # the database could not be opened: every lookup is a miss
        self._legacy: bool | None = None  # whether an older version's folder of JSON files exists (looked once)

    @property
    def db_path(self) -> Path:
        return self.root / DB_NAME

    def legacy_path(self, key: str) -> Path:
        """Where an older version kept the entry: one JSON file per key."""
        return self.root / self.namespace / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        conn = self._connection()
        if conn is not None:
            try:
                row = conn.execute("SELECT value FROM entries WHERE namespace = ? AND key = ?",
                                   (self.namespace, key)).fetchone()
            except sqlite3.Error:
                row = None
            if row is not None:
                try:
                    entry = json.loads(row[0])
                except ValueError:
                    return None
                return entry if isinstance(entry, dict) else None
        return self._legacy_get(key)

    def put(self, key: str, entry: dict[str, Any]) -> bool:
        """Store an entry; False when the database cannot be written (a verdict never fails for that)."""
        conn = self._connection()
        if conn is None:
            return False
        try:
            conn.execute("INSERT OR REPLACE INTO entries (namespace, key, value, written) VALUES (?, ?, ?, ?)",
                         (self.namespace, key, canonical_json(entry), time.time()))
        except sqlite3.Error:
            return False
        return True

    def close(self) -> None:
        """Close this thread's connection (others close when their thread or process ends)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # ------------------------------------------------------------ connections

    def _connection(self) -> sqlite3.Connection | None:
        """This process's and thread's connection (a connection must not cross a fork or a thread)."""
        if self._broken:
            return None
        pid = os.getpid()
        if getattr(self._local, "pid", None) == pid and self._local.conn is not None:
            return self._local.conn
        try:
            conn = self._open_with_retries()
        except (OSError, sqlite3.Error):
            self._broken = True
            return None
        self._local.pid, self._local.conn = pid, conn
        return conn

    def _open_with_retries(self) -> sqlite3.Connection:
        for attempt in range(_OPEN_ATTEMPTS):
            try:
                with _OPEN_LOCK:
                    return self._open()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or attempt == _OPEN_ATTEMPTS - 1:
                    raise
                time.sleep(_OPEN_BACKOFF_S * (attempt + 1))
        raise AssertionError("unreachable")

    def _open(self) -> sqlite3.Connection:
        self.root.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.db_path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: no corruption on a crash; no fsync per write
            conn.execute(_SCHEMA)
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    def _legacy_get(self, key: str) -> dict[str, Any] | None:
        if self._legacy is None:
            self._legacy = (self.root / self.namespace).is_dir()
        if not self._legacy:
            return None
        try:
            entry = json.loads(self.legacy_path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) and entry.get("key") == key else None
