"""The local judge's decision thresholds as data (judge.judges.local.params): the shipped versions are
locked and load, the configuration selects one, the fingerprint names it (so a calibration record
of another version is stale), an edited or unlocked version is refused, and the fit's score is
scikit-learn's kappa and balanced accuracy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from judge.config import JudgeConfig
from judge.errors import ConfigError
from judge.grade.align.local import RANGES, grid, score
from judge.grade.cases import LabelledCase
from judge.judges.local import params as local_params
from judge.judges.local.judge import EmbeddingJudge

REPO = Path(__file__).resolve().parents[1]


def test_every_shipped_version_is_locked_and_loads():
    lock = json.loads((REPO / "params" / "params.lock").read_text())["params"]
    files = sorted((REPO / "params").glob("*/v*.json"))
    assert {f"{p.parent.name}@{p.stem[1:]}" for p in files} == set(lock) >= {"local@1", "local@2"}
    for path in files:
        assert lock[f"{path.parent.name}@{path.stem[1:]}"] == local_params.content_hash(path)
    hand, fitted = local_params.load_params("local@1"), local_params.load_params("local@2")
    assert hand.params.fit is None and hand.thresholds.related == 0.30
    assert fitted.params.fit is not None and fitted.params.fit.from_version == "local@1"
    assert fitted.params.fit.dev_cases == 92 and local_params.DEFAULT_PARAMS == "local@2"
    assert set(fitted.params.fit.grid) == set(RANGES) == set(local_params.Thresholds.model_fields)


def test_the_configuration_selects_a_version_and_the_fingerprint_names_it():
    default = EmbeddingJudge(JudgeConfig(backend="embedding", model="all-MiniLM-L6-v2"))
    hand = EmbeddingJudge(JudgeConfig(backend="embedding", model="all-MiniLM-L6-v2", params="local@1"))
    assert default.fingerprint()["params"]["version"] == 2 and hand.fingerprint()["params"]["version"] == 1
    assert default.fingerprint() != hand.fingerprint()  # a record of one is stale for the other
    assert default.fitted_on == "dev" and hand.fitted_on == "all"
    assert "written by hand while reading all 186 cases" in default.fitted_note  # what the fit did not touch
    assert "related 0.3 -> 0.23" in default.fitted_note and "held out for the fitted thresholds (related) only" \
        in default.fitted_note
    with pytest.raises(ConfigError, match="unknown parameters version 'local@99'"):
        EmbeddingJudge(JudgeConfig(backend="embedding", params="local@99"))
    with pytest.raises(ValidationError, match="params must name a version"):
        JudgeConfig(backend="embedding", params="latest")


def test_an_edited_or_unlocked_version_is_refused(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.judge]\n")
    folder = tmp_path / "params" / "local"
    folder.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    shutil.copy(REPO / "params" / "local" / "v1.json", folder / "v7.json")
    text = (folder / "v7.json").read_text().replace('"version": 1', '"version": 7')
    (folder / "v7.json").write_text(text)
    with pytest.raises(ConfigError, match="is not locked"):
        local_params.load_params("local@7")
    lock = {"lock_version": 1, "params": {"local@7": local_params.content_hash(folder / "v7.json")}}
    (tmp_path / "params" / "params.lock").write_text(json.dumps(lock))
    assert local_params.load_params("local@7").thresholds.related == 0.30
    (folder / "v7.json").write_text(text.replace('"related": 0.3', '"related": 0.31'))
    with pytest.raises(ConfigError, match="changed after it was locked"):
        local_params.load_params("local@7")
    assert local_params.next_version() == 8
    written = local_params.LocalParams(id="local", version=8, notes="test", thresholds=local_params.load_params(
        "local@1").thresholds)
    local_params.write_params(written)
    with pytest.raises(ConfigError, match="never overwritten"):
        local_params.write_params(written)
    with pytest.raises(Exception, match="Extra inputs are not permitted"):
        local_params.Thresholds.model_validate({**written.thresholds.model_dump(), "extra": 0.1})


def _cases(labels: list[str]) -> list[LabelledCase]:
    return [LabelledCase(case=f"s/r/1/k{i}", scenario="s", trace=Path("t"), after_turn=1, key=f"k{i}", label=label,
                         split="dev") for i, label in enumerate(labels)]


def test_the_fit_scores_with_scikit_learn():
    from sklearn.metrics import balanced_accuracy_score, cohen_kappa_score

    truth = ["violated", "upheld", "upheld", "not-exercised", "violated", "upheld"]
    said = ["violated", "upheld", "violated", "upheld", "upheld", "upheld"]
    cases = _cases(truth)
    got = score(cases, {c.case: s for c, s in zip(cases, said, strict=True)})
    assert got.cohen_kappa == pytest.approx(cohen_kappa_score(truth, said))
    positive = [t == "violated" for t in truth], [s == "violated" for s in said]
    assert got.balanced_accuracy == pytest.approx(balanced_accuracy_score(*positive))
    assert (got.tpr, got.tnr) == (0.5, 0.75) and got.n == 6
    values = grid(local_params.load_params("local@1").thresholds.model_dump())
    assert values["related"][0] == 0.10 and values["related"][-1] == 0.60 and 0.23 in values["related"]
    assert len(values["related"]) == 51


@pytest.mark.parametrize("backend, extra", [("llm", {"model": "openai/x"}), ("replay", {"path": "v.jsonl"})])
def test_params_on_a_judge_that_reads_none_is_refused_not_ignored(backend, extra):
    with pytest.raises(ValueError, match="belongs to the embedding judge"):
        JudgeConfig(backend=backend, params="local@2", **extra)
    assert JudgeConfig(backend=backend, **extra).params is None  # without it: accepted


def test_params_on_an_llm_judge_in_a_config_file_is_exit_2_naming_the_judge(tmp_path, shared_dir):
    import subprocess
    import sys

    contract = shared_dir / "contract"
    config = tmp_path / "judge.toml"
    config.write_text('[tool.judge.judges.big]\nbackend = "llm"\nmodel = "openai/x"\nparams = "local@2"\n')
    out = subprocess.run([str(Path(sys.executable).with_name("judge")), "grade", str(contract / "checkout-firefox.yaml"),
                          str(contract / "checkout-firefox.drift.jsonl"), "--judge", "big", "--config", str(config)],
                         capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert "tool.judge.judges.big" in out.stderr and "belongs to the embedding judge" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
