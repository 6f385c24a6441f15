"""The optional parts of judge-drift are extras (pyproject.toml), and a command that needs one that is not
installed says which, in one line, exit 2 (judge.errors.require_extra), instead of an ImportError's
traceback or an internal error. A missing module is simulated by blocking its import (sys.modules[name] =
None: `import name` then raises ModuleNotFoundError, as in an install without it);
tests/test_core_install.py checks the same in a real install of the core alone."""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.errors import EXTRA_ALSO, EXTRA_MODULES, MissingExtraError, extra_modules, missing_extra, require_extra

REPO = Path(__file__).resolve().parents[1]
TOUR = REPO / "docs" / "tour"
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS = PROJECT["optional-dependencies"]
NOT_SHIPPED = {"test", "docs", "local-llm"}  # the extras of the project's own tests and docs


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group(0)).lower()


def _distributions(extra: str) -> set[str]:
    """The distributions an extra brings, its references to other extras (`judge-drift[local]`) followed."""
    found: set[str] = set()
    for requirement in EXTRAS[extra]:
        if _name(requirement) == "judge-drift":
            for other in re.search(r"\[(.*)\]", requirement).group(1).split(","):
                found |= _distributions(other.strip())
        else:
            found.add(_name(requirement))
    return found


def _block(monkeypatch, *modules: str) -> None:
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


def test_the_core_has_no_torch_and_no_part_of_an_extra():
    core = {_name(r) for r in PROJECT["dependencies"]}
    assert {"torch", "sentence-transformers", "transformers", "numpy", "litellm", "fastapi", "statsmodels",
            "matplotlib", "scikit-learn", "onnxruntime"}.isdisjoint(core)
    for extra in EXTRA_MODULES.keys() | EXTRA_ALSO.keys():
        assert not (_distributions(extra) - {"jinja2"}) & core, extra  # Jinja2: the HTML report, core too


def test_every_extra_named_in_errors_is_in_pyproject_and_brings_its_modules():
    """judge.errors' table and pyproject.toml say the same: each module an extra must bring comes from one
    of that extra's distributions (read from what is installed here, where every extra is)."""
    providers = metadata.packages_distributions()
    for extra in EXTRA_MODULES.keys() | EXTRA_ALSO.keys():
        assert extra in EXTRAS, f"{extra} is not an extra of pyproject.toml"
        brought = _distributions(extra)
        for module in extra_modules(extra):
            assert {_name(d) for d in providers.get(module, [])} & brought, (extra, module, brought)


def test_all_is_every_shipped_extra():
    assert _distributions("all") == set().union(*(_distributions(e) for e in EXTRAS if e not in NOT_SHIPPED | {"all"}))


def test_the_makefile_installs_all_with_the_test_extras():
    extras = re.search(r"^EXTRAS \?= (\S+)$", (REPO / "Makefile").read_text(encoding="utf-8"), re.M).group(1)
    assert set(extras.split(",")) >= {"all", "test", "local-llm"}


def test_require_extra_names_the_extra_in_one_line(monkeypatch):
    require_extra("service", "judge serve")  # all installed here: nothing to say
    _block(monkeypatch, "uvicorn")
    with pytest.raises(MissingExtraError) as raised:
        require_extra("service", "judge serve")
    assert str(raised.value) == "judge serve needs the service extra: pip install 'judge-drift[service]'"
    assert raised.value.missing == ["uvicorn"] and raised.value.extra == "service"


def test_missing_extra_blames_only_an_extra_s_module():
    assert str(missing_extra(ModuleNotFoundError("x", name="statsmodels.stats"), "judge corpus diff")) == \
        "judge corpus diff needs the calibration extra: pip install 'judge-drift[calibration]'"
    assert missing_extra(ModuleNotFoundError("x", name="judge.nowhere"), "judge grade") is None  # a bug of ours
    assert missing_extra(ImportError("cannot import name 'x'", name="numpy"), "judge grade") is None


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


def _one_line(result, expected: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: {expected}", result.output


def test_judge_serve_without_the_service_extra(monkeypatch):
    _block(monkeypatch, "uvicorn", "fastapi")
    _one_line(_run("serve", "--port", "0"), "judge serve needs the service extra: pip install 'judge-drift[service]'")


def test_judge_view_without_the_service_extra(monkeypatch, tmp_path):
    _block(monkeypatch, "fastapi")
    _one_line(_run("view", str(tmp_path), "--port", "0"),
              "judge view needs the service extra: pip install 'judge-drift[service]'")


def test_the_default_judge_without_the_local_extra(monkeypatch):
    _block(monkeypatch, "onnxruntime")
    _one_line(_run("grade", str(TOUR / "scenario.yaml"), str(TOUR / "drift.jsonl"), "--no-log"),
              "judge 'local' (backend embedding) needs the local extra: pip install 'judge-drift[local]'")


def test_a_rules_only_grade_needs_no_extra(monkeypatch):
    _block(monkeypatch, "onnxruntime", "numpy", "litellm", "fastapi", "torch")
    result = _run("grade", str(TOUR / "scenario.yaml"), str(TOUR / "drift.jsonl"), "--judge", "none", "--no-log")
    assert result.exit_code == 1, result.output  # the tour's drifting run: a violation, graded


def test_the_llm_judge_without_the_llm_extra(monkeypatch, tmp_path):
    config = tmp_path / "judge.toml"
    config.write_text('[tool.judge.judges.gpt]\nbackend = "llm"\nmodel = "openai/gpt-4o-mini"\n', encoding="utf-8")
    _block(monkeypatch, "litellm")
    _one_line(_run("grade", str(TOUR / "scenario.yaml"), str(TOUR / "drift.jsonl"), "--judge", "gpt",
                   "--config", str(config), "--no-log"),
              "judge 'gpt' (backend llm) needs the llm extra: pip install 'judge-drift[llm]'")


def test_calibration_commands_without_the_calibration_extra(monkeypatch, tmp_path):
    _block(monkeypatch, "statsmodels")
    empty = tmp_path / "a.json"
    _one_line(_run("corpus", "diff", str(empty), str(empty)),
              "judge corpus diff needs the calibration extra: pip install 'judge-drift[calibration]'")


def test_a_corpus_report_without_the_calibration_extra_says_so_before_grading(monkeypatch):
    _block(monkeypatch, "scipy")
    _one_line(_run("grade", "--policy", "agent-safety", str(REPO / "examples" / "local-container"), "--judge", "none",
                   "--no-log"),
              "a corpus report (its violation rates) needs the calibration extra: pip install "
              "'judge-drift[calibration]'")


def test_an_import_no_entry_point_checked_still_names_the_extra(monkeypatch):
    """The net under every command (judge.cli.common.user_errors): a command that imports a module of an
    extra without checking first still ends in one line naming it, exit 2."""
    import typer

    from judge.cli.common import user_errors

    @user_errors
    def plots_command() -> None:
        import matplotlib.pyplot  # noqa: F401 - blocked below

    _block(monkeypatch, "matplotlib", "matplotlib.pyplot")
    with pytest.raises(typer.Exit) as ended:
        plots_command()
    assert ended.value.exit_code == 2


def test_engine_ray_without_the_ray_extra(monkeypatch):
    from judge.suite.engine import _import_ray

    _block(monkeypatch, "ray")
    with pytest.raises(MissingExtraError, match=re.escape("--engine ray needs the ray extra: pip install "
                                                          "'judge-drift[ray]'")):
        _import_ray()


def test_an_endpoint_agent_without_the_drive_extra(monkeypatch):
    from judge.suite.drive.endpoint import EndpointAgent

    _block(monkeypatch, "openai")
    with pytest.raises(MissingExtraError, match=re.escape("the endpoint agent 'bot' needs the drive extra: "
                                                          "pip install 'judge-drift[drive]'")):
        EndpointAgent(base_url="http://127.0.0.1:9/v1", model="m", name="bot")


def test_another_embedding_model_without_the_sentence_transformers_extra(monkeypatch, tmp_path):
    """Only a model other than the bundled one needs torch; the bundled one needs the local extra."""
    from judge.text import minilm

    _block(monkeypatch, "torch")
    monkeypatch.setattr(minilm, "_runtimes_found", set())
    with pytest.raises(MissingExtraError, match=re.escape(
            f"the embedding model {tmp_path} needs the sentence-transformers extra: "
            "pip install 'judge-drift[sentence-transformers]'")):
        minilm.load_embedding_model(str(tmp_path))
    _block(monkeypatch, "onnxruntime")
    with pytest.raises(MissingExtraError, match=re.escape("needs the local extra")):
        minilm.load_embedding_model(minilm.DEFAULT_MODEL)
