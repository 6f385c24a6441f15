"""`judge config show` (each value and where it comes from, secrets masked) and `judge config check`
(every judge built as a grade builds it, no model called; exit 0 or 2)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.config import effective_settings

runner = CliRunner()
SECRET = "sk-never-shown-1234"

CONFIG = """\
[tool.judge]
default = "gpt"
stale = "warn"

[tool.judge.judges.gpt]
backend = "llm"
model = "openai/gpt-4o-mini"
api_key_env = "JUDGE_TEST_KEY"
api_base = "http://user:hunter2@localhost:8000/v1"
window_tokens = 1500
options = {api_key = "sk-inline-secret", top_p = 1}
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGE_CONFIG", raising=False)
    monkeypatch.delenv("JUDGE_LOG_DIR", raising=False)
    monkeypatch.delenv("JUDGE_TEST_KEY", raising=False)
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_show_names_where_each_value_comes_from(project, monkeypatch):
    monkeypatch.setenv("JUDGE_TEST_KEY", SECRET)
    found = {s.key: s for s in effective_settings()}
    path = str(project / "pyproject.toml")
    assert (found["config file"].value, found["config file"].source) == (path, "the nearest pyproject.toml")
    assert (found["tool.judge.default"].value, found["tool.judge.default"].source) == ("gpt", path)
    assert (found["tool.judge.review"].value, found["tool.judge.review"].source) == ("report", "built-in default")
    assert found["tool.judge.judges.gpt.window_tokens"].value == 1500
    assert found["tool.judge.judges.gpt.temperature"].source == "built-in default"
    assert found["tool.judge.judges.local.backend"].source == "built-in judge 'local'"
    assert found["tool.judge.log_dir"].value == str(project / ".judge" / "runs")
    monkeypatch.setenv("JUDGE_LOG_DIR", str(project / "elsewhere"))
    assert {s.key: s for s in effective_settings()}["tool.judge.log_dir"].source == "env JUDGE_LOG_DIR"


def test_show_masks_every_secret(project, monkeypatch):
    monkeypatch.setenv("JUDGE_TEST_KEY", SECRET)
    shown = runner.invoke(app, ["config", "show"])
    as_json = runner.invoke(app, ["config", "show", "--json"])
    assert shown.exit_code == 0 and as_json.exit_code == 0
    for out in (shown.output, as_json.output):
        assert SECRET not in out and "hunter2" not in out and "sk-inline-secret" not in out
    rows = {r["key"]: r for r in json.loads(as_json.output)}
    assert rows["tool.judge.judges.gpt.api_key"] == {"key": "tool.judge.judges.gpt.api_key", "value": "**** (set)",
                                                    "source": "env JUDGE_TEST_KEY"}
    assert rows["tool.judge.judges.gpt.api_base"]["value"] == "http://****@localhost:8000/v1"
    assert rows["tool.judge.judges.gpt.options"]["value"] == {"api_key": "****", "top_p": 1}
    assert rows["tool.judge.judges.gpt.api_key_env"]["value"] == "JUDGE_TEST_KEY"
    monkeypatch.delenv("JUDGE_TEST_KEY")
    rows = {r["key"]: r for r in json.loads(runner.invoke(app, ["config", "show", "--json"]).output)}
    assert rows["tool.judge.judges.gpt.api_key"]["value"] == "(not set)"


def test_check_builds_every_judge_and_fails_on_an_unset_key(project, monkeypatch):
    failed = runner.invoke(app, ["config", "check"])
    assert failed.exit_code == 2, failed.output
    assert "ERROR gpt (default)" in failed.output
    assert "environment variable JUDGE_TEST_KEY (api_key_env of judge 'gpt') is not set" in failed.output
    assert "ok    local" in failed.output and "1/2 judges can grade" in failed.output
    monkeypatch.setenv("JUDGE_TEST_KEY", SECRET)
    passed = runner.invoke(app, ["config", "check"])
    assert passed.exit_code == 0, passed.output
    assert "calibration: missing" in passed.output and SECRET not in passed.output


def test_check_reports_an_unknown_prompt_and_a_stale_calibration_made_an_error(project, monkeypatch):
    monkeypatch.setenv("JUDGE_TEST_KEY", SECRET)
    text = CONFIG.replace('stale = "warn"', 'stale = "error"').replace('window_tokens', 'prompt = "no-such-prompt@1"\nwindow_tokens')
    (project / "pyproject.toml").write_text(text)
    result = runner.invoke(app, ["config", "check"])
    assert result.exit_code == 2
    assert "no-such-prompt" in result.output
    text = CONFIG.replace('stale = "warn"', 'stale = "error"')
    (project / "pyproject.toml").write_text(text)
    result = runner.invoke(app, ["config", "check"])
    assert result.exit_code == 2 and "refusing to grade" in " ".join(result.output.split())


def test_a_broken_table_is_one_line_exit_2(project):
    (project / "pyproject.toml").write_text("[tool.judge\n")
    for command in (["config", "show"], ["config", "check"]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2 and "cannot read TOML" in result.output and "Traceback" not in result.output
