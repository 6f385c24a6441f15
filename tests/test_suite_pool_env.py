"""A suite's workers see the environment their parent has when the suite starts, also when they come
from a forkserver that was started earlier with another environment (a threaded parent, here the
scripted LLM server's thread, gets forkserver workers). Found by the Ray test: a judge's API key set
after the forkserver had started was missing in the local workers (exit 4)."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

import pytest
from llm_server import llm_judge_config, llm_server  # noqa: F401
from typer.testing import CliRunner

from judge.cli import app

SUITE = Path(__file__).resolve().parents[1] / "examples" / "suite" / "suite.yaml"
KEY_ENV = "JUDGE_POOL_ENV_TEST_KEY"


def _nothing() -> None:
    pass


@pytest.mark.slow
def test_forkserver_workers_get_the_parents_environment_now(llm_server, tmp_path, monkeypatch):  # noqa: F811
    assert threading.active_count() > 1  # the server's thread: the suite's workers come from the forkserver
    monkeypatch.delenv(KEY_ENV, raising=False)
    warm = multiprocessing.get_context("forkserver").Process(target=_nothing)
    warm.start()  # the forkserver runs now, without the key in its environment
    warm.join()
    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-secret")
    config = llm_judge_config(tmp_path / "judge.toml", model="openai/judge-env", api_base=llm_server.api_base,
                              key_env=KEY_ENV, timeout_s=60, backoff_s=0.01, cache=False)
    result = CliRunner().invoke(app, ["suite", str(SUITE), "-q", "--config", str(config), "-j", "2",
                                      "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 1, result.output  # the example suite fails; never 4 (a worker without the key)
    assert (tmp_path / "r.json").is_file()
