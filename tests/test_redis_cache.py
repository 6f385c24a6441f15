"""The shared verdict cache in Redis (`cache = "redis://HOST:PORT/DB"`): the same entries as the SQLite
file, read by every machine; a server that is down is a miss, never a failed verdict; a bad URL is a
one-line configuration error. A real `redis-server` on 127.0.0.1, started and stopped here."""

from __future__ import annotations

import json
import time

import pytest
from llm_server import llm_judge_config, llm_server  # noqa: F401
from redis_server import free_port, redis_server  # noqa: F401
from typer.testing import CliRunner

from judge.cli import app
from judge.errors import ConfigError

ENTRY = {"verdict": {"findings": [{"key": "goal", "verdict": "upheld", "confidence": 0.9}]}, "usage": {"n": 1}}
runner = CliRunner()


def test_entries_round_trip_per_namespace_and_are_seen_by_another_client(redis_server):  # noqa: F811
    from judge.judges.redis_cache import RedisVerdictCache

    cache = RedisVerdictCache(redis_server.url(1))
    assert cache.get("k1") is None
    assert cache.put("k1", ENTRY) is True
    assert RedisVerdictCache(redis_server.url(1)).get("k1") == ENTRY  # another process, another machine
    assert RedisVerdictCache(redis_server.url(1), namespace="summary-audit").get("k1") is None
    assert RedisVerdictCache(redis_server.url(2)).get("k1") is None  # another database
    stored = redis_server.client(1).get("judge:llm:k1")
    assert json.loads(stored) == ENTRY  # canonical JSON, as in the SQLite file
    redis_server.client(1).set("judge:llm:bad", b"{not json")
    assert cache.get("bad") is None  # an unreadable entry is a miss


def test_a_server_that_is_down_is_a_miss_once_not_a_wait_per_call():
    pytest.importorskip("redis", reason="the redis client is not installed (pip install 'judge-drift[redis]')")
    from judge.judges.redis_cache import RedisVerdictCache

    cache = RedisVerdictCache(f"redis://127.0.0.1:{free_port()}/0")
    started = time.monotonic()
    assert cache.get("k") is None and cache.put("k", ENTRY) is False
    for _ in range(50):
        assert cache.get("k") is None
    assert time.monotonic() - started < 10  # one refused connection, then no more attempts


@pytest.mark.parametrize("url, needle", [("redis://:6379/0", "needs a host"), ("redis://h:6379/x", "needs a host"),
                                         ("memcached://h:1/0", "true, false or a Redis URL"),
                                         ("redis://h:port/0", "a number for its port")])
def test_a_bad_cache_url_is_a_configuration_error(url, needle):
    from judge.config import JudgeConfig
    from judge.judges.redis_cache import RedisVerdictCache

    with pytest.raises(ValueError, match=needle):
        JudgeConfig(backend="llm", model="openai/m", cache=url)
    with pytest.raises(ConfigError, match=needle):
        RedisVerdictCache(url)


def test_judge_calls_of_two_machines_share_one_redis_cache(shared_dir, llm_server, redis_server, tmp_path,  # noqa: F811
                                                          monkeypatch):
    """Two graders with separate cache folders (two machines) and one Redis: the second asks nothing."""
    monkeypatch.setenv("JUDGE_REDIS_KEY", "sk-test-not-a-secret")
    config = llm_judge_config(tmp_path / "judge.toml", model="openai/judge-redis", api_base=llm_server.api_base,
                              key_env="JUDGE_REDIS_KEY", timeout_s=5, backoff_s=0.01, cache=redis_server.url(3))
    contract = shared_dir / "contract"
    reports = []
    for machine in ("a", "b"):
        monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / f"cache-{machine}"))
        llm_server.reset()
        out = tmp_path / f"{machine}.json"
        result = runner.invoke(app, ["grade", str(contract / "checkout-firefox.yaml"),
                                     str(contract / "checkout-firefox.clean.jsonl"), "--config", str(config),
                                     "--json", str(out), "-q", "--no-log"])
        assert result.exit_code == 0, result.output
        reports.append((json.loads(out.read_text())["runs"][0], len(llm_server.bodies)))
    (first, asked_a), (second, asked_b) = reports
    assert asked_a > 0 and first["cost"]["judge_calls"] == asked_a
    assert asked_b == 0 and second["cost"]["cache_hits"] > 0
    assert first["checkpoints"] == second["checkpoints"]
    assert not (tmp_path / "cache-a" / "verdicts.sqlite3").exists()  # the SQLite file was never used
    assert redis_server.client(3).keys("judge:*")


def test_an_unreachable_redis_is_a_warning_on_every_grade_that_skipped_it(llm_server, tmp_path,  # noqa: F811
                                                                          monkeypatch):
    """No server on the cache's port: every verdict is asked of the judge, and every run graded while the
    cache was skipped says so, in the report and on the terminal."""
    pytest.importorskip("redis", reason="the redis client is not installed (pip install 'judge-drift[redis]')")
    monkeypatch.setenv("JUDGE_REDIS_KEY", "sk-test-not-a-secret")
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    port = free_port()
    config = llm_judge_config(tmp_path / "judge.toml", model="openai/judge-redis-down", api_base=llm_server.api_base,
                              key_env="JUDGE_REDIS_KEY", timeout_s=5, backoff_s=0.01,
                              cache=f"redis://:hunter2@127.0.0.1:{port}/0")
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["grade", "docs/tour/scenario.yaml", "docs/tour/clean.jsonl", "docs/tour/drift.jsonl",
                                 "--config", str(config), "--json", str(out), "--no-log"], env={"COLUMNS": "300"})
    assert result.exit_code in (0, 1), result.output
    runs = json.loads(out.read_text())["runs"]
    assert len(runs) == 2 and all(run["cost"]["judge_calls"] > 0 for run in runs)
    for run in runs:
        [warning] = [w for w in run["warnings"] if "Redis" in w]
        assert f"redis://127.0.0.1:{port}/0" in warning and "could not be reached" in warning
        assert "hunter2" not in warning  # the URL's password is never shown
    assert result.output.count(f"warning: the Redis verdict cache redis://127.0.0.1:{port}/0") == 2
