"""`--engine ray[:ADDRESS]`: a suite graded on a local Ray cluster writes the report a local run writes,
byte for byte, and its workers share one verdict cache in Redis. A real Ray head and a real
redis-server on 127.0.0.1, started and stopped by this module."""

from __future__ import annotations

import pytest
from llm_server import llm_judge_config, llm_server  # noqa: F401
from ray_cluster import ray_env, start_head, stop_head
from redis_server import redis_server  # noqa: F401
from typer.testing import CliRunner

from judge.cli import app

pytestmark = pytest.mark.slow
REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
SUITE = REPO / "examples" / "suite" / "suite.yaml"
KEY_ENV = "JUDGE_RAY_TEST_KEY"
runner = CliRunner()


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ray-head")
    # The key is set on the node, as on a real cluster: judge never ships a secret through Ray.
    head = start_head(folder, ray_env({KEY_ENV: "sk-test-not-a-secret", "JUDGE_CACHE_DIR": str(folder / "cache")}))
    yield head
    stop_head(head)


@pytest.fixture
def driver(monkeypatch):
    for name, value in ray_env().items():
        if name.startswith("RAY_"):
            monkeypatch.setenv(name, value)


def _suite(*args):
    return runner.invoke(app, ["suite", str(SUITE), "-q", *map(str, args)])


def test_a_suite_on_ray_writes_the_local_report_byte_for_byte(ray_head, driver, tmp_path):
    local = _suite("--judge", "none", "-j", "2", "--json", tmp_path / "local.json")
    on_ray = _suite("--judge", "none", "--engine", f"ray:{ray_head.address}", "--json", tmp_path / "ray.json")
    assert local.exit_code == on_ray.exit_code == 1, (local.output, on_ray.output)  # the example suite fails
    assert (tmp_path / "ray.json").read_bytes() == (tmp_path / "local.json").read_bytes()


def test_ray_workers_share_one_redis_cache_and_match_the_local_report(ray_head, driver, llm_server,  # noqa: F811
                                                                       redis_server, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-secret")
    config = llm_judge_config(tmp_path / "judge.toml", model="openai/judge-ray", api_base=llm_server.api_base,
                              key_env=KEY_ENV, timeout_s=120, backoff_s=0.01, cache=redis_server.url(5))  # slow under load
    asked = []
    for name, engine in (("cold", f"ray:{ray_head.address}"), ("warm", f"ray:{ray_head.address}"), ("local", "local")):
        monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / f"cache-{name}"))  # a machine of its own
        llm_server.reset()
        result = _suite("--config", config, "--engine", engine, "-j", "2", "--json", tmp_path / f"{name}.json")
        assert result.exit_code == 1, result.output
        asked.append(len(llm_server.bodies))
    assert asked[0] > 0 and asked[1:] == [0, 0]  # the cold run's answers served every later worker
    assert redis_server.client(5).keys("judge:llm:*")
    assert (tmp_path / "warm.json").read_bytes() == (tmp_path / "cold.json").read_bytes()
    assert (tmp_path / "local.json").read_bytes() == (tmp_path / "cold.json").read_bytes()
    assert not any((tmp_path / f"cache-{n}" / "verdicts.sqlite3").exists() for n in ("cold", "warm", "local"))


def test_a_bad_engine_is_a_usage_error(tmp_path):
    for bad in ("spark", "ray:", "local:x"):
        result = _suite("--judge", "none", "--engine", bad, "--json", tmp_path / "r.json")
        assert result.exit_code == 2 and "--engine" in result.output, result.output
    assert not (tmp_path / "r.json").exists()


def test_the_ray_job_carries_judge_settings_but_never_a_secret():
    from judge.suite.engine import forwarded_env, parse_engine

    env = forwarded_env({"JUDGE_CACHE_DIR": "/c", "HF_HUB_OFFLINE": "1", "LITELLM_MODE": "PRODUCTION",
                         "JUDGE_E2E_KEY": "sk-x", "HF_TOKEN": "hf_x", "OPENAI_API_KEY": "sk-y", "PATH": "/bin"})
    assert env == {"HF_HUB_OFFLINE": "1", "JUDGE_CACHE_DIR": "/c", "LITELLM_MODE": "PRODUCTION"}
    assert parse_engine("ray:10.0.0.1:6379").address == "10.0.0.1:6379" and parse_engine("ray").address is None


def test_a_corpus_graded_on_ray_writes_the_local_report_byte_for_byte(ray_head, driver, tmp_path):
    from test_corpus import POLICY, corpus

    (tmp_path / "house.yaml").write_text(POLICY)
    corpus(tmp_path / "folder", 24, 3, 5)
    many = corpus(tmp_path / "one" / "many", 24, 6, 2, one_file=True)
    for engine, out in (("local", "local.json"), (f"ray:{ray_head.address}", "ray.json")):
        result = runner.invoke(app, ["grade", "--policy", str(tmp_path / "house.yaml"), str(tmp_path / "folder"),
                                     str(many), "--judge", "none", "--engine", engine, "-j", "2", "--json",
                                     str(tmp_path / out), "--no-log", "-q", "--no-cache"])  # (Ray grades them all)
        assert result.exit_code == 0, result.output
    assert (tmp_path / "ray.json").read_bytes() == (tmp_path / "local.json").read_bytes()
    assert '"runs": 48' in (tmp_path / "ray.json").read_text()


def test_ray_workers_keep_the_similarity_in_the_drivers_cache_folder(ray_head, driver, tmp_path, monkeypatch):
    """agent-safety's `authorised` (plan: true) on Ray: the workers write the text vectors into the cache
    folder the driver names (sent with each batch), a rerun adds none, and both reports are the local one."""
    import json
    import sqlite3

    from test_similarity import _trace

    from judge.text.minilm import extract_bundled

    folder = tmp_path / "corpus"
    folder.mkdir()
    for i in range(6):
        lines = _trace()
        lines[0]["run_id"] = f"r{i}"
        (folder / f"r{i}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(extract_bundled().parent)  # (the model extracted once, not per test)
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(cache))
    rows = []
    for name, engine in (("ray", f"ray:{ray_head.address}"), ("again", f"ray:{ray_head.address}"),
                         ("local", "local")):
        result = runner.invoke(app, ["grade", "--policy", "agent-safety", str(folder), "--judge", "none",
                                     "--engine", engine, "-j", "2", "--json", str(tmp_path / f"{name}.json"),
                                     "--no-log", "-q", "--no-cache"])  # (each run grades: no trace's result kept)
        assert result.exit_code == 0, result.output
        with sqlite3.connect(cache / "verdicts.sqlite3") as db:
            rows.append(db.execute("SELECT COUNT(*) FROM entries WHERE namespace = 'similarity'").fetchone()[0])
    assert rows[0] >= 4 and rows == [rows[0]] * 3  # written by the Ray workers; nothing new afterwards
    assert (tmp_path / "ray.json").read_bytes() == (tmp_path / "again.json").read_bytes() == \
        (tmp_path / "local.json").read_bytes()
