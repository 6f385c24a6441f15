"""`judge init`: the scaffold lints and grades out of the box through the real console script, its
pytest example passes, and it never overwrites a file."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from judge.cli.init import CLEAN, DRIFT, FILES, SCENARIO

REPO = Path(__file__).resolve().parents[1]
JUDGE_BIN = Path(sys.executable).parent / "judge"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGE_") or k == "JUDGE_CACHE_DIR"}
    env.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True", **extra)
    return env


def judge(*args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(JUDGE_BIN), *args], cwd=cwd, env=_env(**extra), capture_output=True, text=True,
                          timeout=300)


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_init_then_lint_exit_0_clean_exit_0_drift_exit_1(tmp_path):
    made = judge("init", "agent", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    folder = tmp_path / "agent"
    assert _files(folder) == {*FILES, "pyproject.toml"}
    assert "judge lint scenarios/hotel-booking.yaml" in made.stdout
    linted = judge("lint", SCENARIO, cwd=folder)
    assert (linted.returncode, linted.stdout.strip()) == (0, f"{SCENARIO}: ok")
    clean = judge("grade", SCENARIO, CLEAN, cwd=folder)  # the scaffold's default judge: local
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "PASS" in clean.stdout and "judge: local" in clean.stdout
    drift = judge("grade", SCENARIO, DRIFT, cwd=folder)
    assert drift.returncode == 1, drift.stdout + drift.stderr
    assert "veto: charge_after_confirmation violated at e7" in drift.stdout
    assert "check_in" in drift.stdout and "superseded at turn 2" in drift.stdout
    # every grade is kept beside the project (the scaffold's pyproject.toml)
    assert len(list((folder / ".judge" / "runs").glob("*.json"))) == 2


def test_the_scaffold_covers_each_entry_class_and_the_common_rules():
    from judge.ledger import load_scenario

    scenario, _ = load_scenario(REPO / "judge" / "cli" / "scaffold" / "scenario.yaml")
    assert {e.class_ for e in scenario.ledger} == {"goal", "constraint", "fact", "permission", "completion",
                                                  "uncertainty"}
    assert any(d.op == "set" for d in scenario.deltas)
    kinds = {r.check for r in scenario.rules}
    assert {"forbidden-call", "scope", "superseded-value", "not-repeated", "claimed-complete", "authorised"} <= kinds
    text = (REPO / "judge" / "cli" / "scaffold" / "scenario.yaml").read_text(encoding="utf-8")
    for kind in kinds:  # each rule kind has a comment saying when to use it
        assert f"# {kind}:" in text, kind
    config = tomllib.loads((REPO / "judge" / "cli" / "scaffold" / "judge.toml").read_text(encoding="utf-8"))
    assert config["tool"]["judge"]["judges"]["local"]["backend"] == "embedding"
    assert '# backend = "llm"' in (REPO / "judge" / "cli" / "scaffold" / "judge.toml").read_text()


@pytest.mark.slow
def test_the_scaffold_pytest_example_passes(tmp_path):
    assert judge("init", str(tmp_path), cwd=REPO).returncode == 0
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_agent_runs.py"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_agent_runs.py").write_text("mine\n")
    refused = judge("init", cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "refusing to overwrite 1 existing file(s)" in refused.stderr
    assert "tests/test_agent_runs.py" in refused.stderr and "Traceback" not in refused.stderr
    assert _files(tmp_path) == {"tests/test_agent_runs.py"}
    assert (tmp_path / "tests" / "test_agent_runs.py").read_text() == "mine\n"


@pytest.mark.slow
def test_init_beside_a_pyproject_leaves_it_alone_and_writes_judge_toml(tmp_path):
    own = b'[project]\nname = "mine"\n'
    (tmp_path / "pyproject.toml").write_bytes(own)
    made = judge("init", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "pyproject.toml").read_bytes() == own
    assert "judge.toml" in made.stdout and "--config judge.toml" in made.stdout
    graded = judge("grade", SCENARIO, CLEAN, "--config", "judge.toml", "--judge", "none", "-q", cwd=tmp_path)
    assert graded.returncode == 0, graded.stderr


def test_the_templates_are_package_data():
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    globs = data["tool"]["setuptools"]["package-data"]["judge.cli"]
    scaffold = REPO / "judge" / "cli"
    shipped = {p.relative_to(scaffold).as_posix() for g in globs for p in scaffold.glob(g) if p.is_file()}
    needed = {f"scaffold/{name}" for name, _ in FILES.values()} | {"scaffold/judge.toml"}
    assert needed <= shipped
