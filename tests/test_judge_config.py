"""Judge configuration: where it is read from, validation, and the factory."""

from __future__ import annotations

import pytest

from judge.config import JudgeConfig, load_judge_config
from judge.errors import ConfigError
from judge.judges.factory import make_judge
from judge.judges.replay import ReplayJudge

TOML = """
[tool.judge]
default = "gpt"
[tool.judge.judges.gpt]
backend = "llm"
model = "openai/gpt-4o-mini"
samples = 3
api_key_env = "SOME_KEY"
[tool.judge.judges.again]
backend = "replay"
path = "verdicts.jsonl"
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGE_CONFIG", raising=False)
    (tmp_path / "pyproject.toml").write_text(TOML)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    return tmp_path


def test_pyproject_found_walking_up(project):
    config = load_judge_config()
    assert (config.name, config.backend, config.model, config.samples) == ("gpt", "llm", "openai/gpt-4o-mini", 3)
    assert (config.prompt, config.temperature, config.max_concurrency, config.timeout_s, config.max_retries) == \
        ("goal-fidelity@3", 0.0, 8, 60.0, 2)
    replay = load_judge_config("again")
    assert replay.path == str(project / "verdicts.jsonl")  # relative to the config file
    assert load_judge_config("local").backend == "embedding"  # the built-in offline judge


def test_config_file_beats_env_beats_pyproject(project, tmp_path_factory, monkeypatch):
    other = tmp_path_factory.mktemp("other") / "judges.toml"
    other.write_text('[tool.judge.judges.env]\nbackend = "llm"\nmodel = "ollama/llama3"\n')
    monkeypatch.setenv("JUDGE_CONFIG", str(other))
    assert load_judge_config("env").model == "ollama/llama3"
    explicit = tmp_path_factory.mktemp("explicit") / "c.toml"
    explicit.write_text('[tool.judge]\ndefault = "x"\n[tool.judge.judges.x]\nbackend = "llm"\nmodel = "m"\n')
    assert load_judge_config(config_file=explicit).name == "x"


def test_unknown_judge_lists_configured_names(project):
    with pytest.raises(ConfigError, match=r"unknown judge 'nope'; configured: again, gpt, local"):
        load_judge_config("nope")


@pytest.mark.parametrize("table, field", [
    ('backend = "llm"', "tool.judge.judges.bad"),
    ('backend = "llm"\nmodel = "m"\nsamples = 0', "tool.judge.judges.bad.samples"),
    ('backend = "llm"\nmodel = "m"\ntemprature = 0', "tool.judge.judges.bad.temprature"),
    ('backend = "llm"\nmodel = "m"\nmode = "xml"', "tool.judge.judges.bad"),
    ('backend = "replay"', "tool.judge.judges.bad"),
])
def test_bad_tables_name_file_and_field(tmp_path, table, field):
    path = tmp_path / "c.toml"
    path.write_text(f"[tool.judge.judges.bad]\n{table}\n")
    with pytest.raises(ConfigError) as info:
        load_judge_config("bad", config_file=path)
    assert info.value.file == str(path) and info.value.field == field


def test_missing_or_broken_files(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_judge_config(config_file=tmp_path / "absent.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[tool.judge\n")
    with pytest.raises(ConfigError, match="cannot read TOML"):
        load_judge_config(config_file=broken)


def test_factory_builds_replay_and_llm(tmp_path, monkeypatch):
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("")
    assert isinstance(make_judge(JudgeConfig(backend="replay", path=str(verdicts))), ReplayJudge)
    monkeypatch.setenv("K", "x")
    judge = make_judge(JudgeConfig(backend="llm", model="openai/m", api_key_env="K"))
    assert judge.fingerprint()["backend"] == "llm"
