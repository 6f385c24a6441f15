"""The verdict cache: one SQLite database in WAL mode, safe with several writers at once, in threads
and in processes, and never in the way of a verdict."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from judge.judges.cache import DB_NAME, VerdictCache

ROOT = Path(__file__).resolve().parents[1]
ENTRY = {"findings": [{"key": "goal", "verdict": "upheld", "evidence_event": None, "confidence": 0.9,
                       "rationale": "kept"}], "attempts": 1}
WRITER = """
import pathlib, sys, time
from judge.judges.cache import VerdictCache
root, worker, n, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
flags = pathlib.Path(root) / "flags"

def barrier(name):  # every writer waits here for all the others: the overlap holds on a loaded machine
    (flags / f"{name}-{worker}").touch()
    deadline = time.time() + 90
    while len(list(flags.glob(f"{name}-*"))) < workers:
        assert time.time() < deadline, f"barrier {name}: the other writers never came"
        time.sleep(0.01)

cache = VerdictCache(root)
cache.get("warm-up")  # open the database before the common start
barrier("start")
for i in range(n):
    assert cache.put(f"w{worker}-{i}", {"worker": worker, "i": i, "text": "x" * (i % 50)})
    if i % 7 == 0:  # read back, also what the other writers wrote so far
        assert cache.get(f"w{worker}-{i}")["i"] == i
    if i == n // 2:  # halfway, so that every writer has written before any finishes
        barrier("half")
print("ok")
"""


def test_put_get_and_namespaces(tmp_path):
    cache = VerdictCache(tmp_path)
    assert cache.get("k") is None
    assert cache.put("k", ENTRY)
    assert cache.get("k") == ENTRY
    assert VerdictCache(tmp_path, namespace="summary-audit").get("k") is None  # namespaces are separate
    assert VerdictCache(tmp_path).get("k") == ENTRY  # a new instance (a new process) reads it
    cache.put("k", {"replaced": True})
    assert cache.get("k") == {"replaced": True}
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_unreadable_entry_is_a_miss(tmp_path):
    cache = VerdictCache(tmp_path)
    cache.put("k", ENTRY)
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        db.execute("UPDATE entries SET value = '{not json' WHERE key = 'k'")
    assert VerdictCache(tmp_path).get("k") is None


def test_entries_written_by_the_older_json_file_cache_are_still_read(tmp_path):
    key = "ab" + "0" * 62
    legacy = tmp_path / "llm" / key[:2] / f"{key}.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(json.dumps({**ENTRY, "key": key}))
    assert VerdictCache(tmp_path).get(key)["findings"] == ENTRY["findings"]
    legacy.write_text(json.dumps({**ENTRY, "key": "another"}))  # a renamed file is not this entry
    assert VerdictCache(tmp_path).get(key) is None


def test_a_miss_looks_for_no_older_json_file_when_the_cache_has_none(tmp_path, monkeypatch):
    cache = VerdictCache(tmp_path)
    cache.put("k", ENTRY)
    looked: list[str] = []
    monkeypatch.setattr(VerdictCache, "legacy_path", lambda self, key: looked.append(key) or tmp_path / "none")
    assert cache.get("missing") is None and cache.get("k")["findings"] == ENTRY["findings"]
    assert looked == []  # no `llm/` folder of JSON files: nothing an older version wrote to look in
    (tmp_path / "llm").mkdir()
    assert VerdictCache(tmp_path).get("missing") is None and looked == ["missing"]


def test_a_folder_that_cannot_hold_the_database_is_a_miss_not_an_error(tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be")
    cache = VerdictCache(blocked)
    assert cache.put("k", ENTRY) is False and cache.get("k") is None


@pytest.mark.slow
def test_several_processes_write_at_once(tmp_path):
    """Four processes write 400 entries each into one database from the same moment on (and read some
    back); every entry is there afterwards, whole. Two barriers (start, halfway) make the writes overlap
    however slowly the processes start on a loaded machine."""
    n, workers = 400, 4
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    (tmp_path / "flags").mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(w), str(n), str(workers)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(workers)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * workers, outputs
    cache = VerdictCache(tmp_path)
    for w in range(workers):
        for i in range(n):
            assert cache.get(f"w{w}-{i}") == {"worker": w, "i": i, "text": "x" * (i % 50)}
    with sqlite3.connect(tmp_path / DB_NAME) as db:
        assert db.execute("SELECT count(*) FROM entries").fetchone()[0] == n * workers
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        spans = db.execute("SELECT min(written), max(written) FROM entries GROUP BY substr(key, 1, 2)").fetchall()
    assert max(s for s, _ in spans) < min(e for _, e in spans)  # the writers really wrote at the same time


def test_threads_share_one_cache_object(tmp_path):
    cache = VerdictCache(tmp_path)
    errors: list[BaseException] = []

    def write(t: int) -> None:
        try:
            for i in range(100):
                assert cache.put(f"t{t}-{i}", {"i": i})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert all(cache.get(f"t{t}-{i}") == {"i": i} for t in range(4) for i in range(100))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")
def test_a_forked_child_opens_its_own_connection(tmp_path):
    cache = VerdictCache(tmp_path)
    cache.put("parent", {"v": 1})
    pid = os.fork()
    if pid == 0:  # the child: the parent's connection must not be used across the fork
        ok = cache.get("parent") == {"v": 1} and cache.put("child", {"v": 2})
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert cache.get("child") == {"v": 2}


def test_a_write_costs_microseconds_not_a_file_rename(tmp_path):
    """A loose bound (this machine is shared): the temp-file-and-rename cache cost 0.6-0.9 ms a write."""
    cache = VerdictCache(tmp_path)
    cache.put("warm", ENTRY)
    started = time.perf_counter()
    for i in range(300):
        cache.put(f"k{i}", ENTRY)
    assert (time.perf_counter() - started) / 300 < 0.002


def test_threads_opening_a_new_cache_at_the_same_moment_all_write(tmp_path):
    # Switching a new database to WAL takes a lock the busy timeout does not wait for: before opens
    # were serialised and retried, about 1 in 15 of these rounds lost a writer ("database is locked").
    for round_ in range(40):
        cache = VerdictCache(tmp_path / str(round_))
        start = threading.Barrier(8)
        results: list[bool] = []

        def write(t: int) -> None:
            start.wait()  # noqa: B023 (the threads are joined within this iteration)
            results.extend(cache.put(f"t{t}-{i}", {"i": i}) for i in range(5))  # noqa: B023 (the same)

        threads = [threading.Thread(target=write, args=(t,)) for t in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [True] * 40, f"round {round_}: {results.count(False)} puts refused"
