"""judge's distribution is `judge-drift` (`judge` on the package index is an unrelated project): the workflow
`judge init` writes installs it, no doc or message says `pip install judge`, and judge's version in a
report's provenance and a calibration record does not depend on which name installed it."""

from __future__ import annotations

import re
import shlex
import tomllib
from importlib import metadata
from pathlib import Path

import yaml
from typer.testing import CliRunner

import judge
from judge.cli import app

REPO = Path(__file__).resolve().parents[1]
NAME = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_distribution_is_judge_drift_wherever_the_code_names_it():
    from calibration.record import DISTRIBUTION

    assert NAME == judge.DISTRIBUTION == DISTRIBUTION == "judge-drift"


def _pip_installs(workflow: dict) -> list[str]:
    """The requirements of every `pip install` line in the workflow's run steps (options dropped)."""
    found = []
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            for line in step.get("run", "").splitlines():
                if not line.strip().startswith("pip install"):
                    continue
                words = shlex.split(line, comments=True)
                skip = False
                for word in words[2:]:
                    if skip or word.startswith("-"):
                        skip = word in {"--index-url", "-i", "--extra-index-url", "-c", "-r"}
                        continue
                    found.append(word)
    return found


def test_the_workflow_judge_init_writes_installs_this_judge_by_its_distribution_name(tmp_path):
    done = CliRunner().invoke(app, ["init", str(tmp_path)])
    assert done.exit_code == 0, done.output
    workflow = yaml.safe_load((tmp_path / ".github" / "workflows" / "judge.yml").read_text(encoding="utf-8"))
    requirements = _pip_installs(workflow)
    names = {_normal(re.match(r"[A-Za-z0-9._-]+", r).group(0)): r for r in requirements}
    assert "judge" not in names, f"the workflow installs the unrelated `judge` project: {requirements}"
    assert names[_normal(NAME)] == f"{NAME}[local-runtime]=={judge.__version__}"  # the judge that wrote it
    assert "torch" not in names  # the offline judge runs on ONNX Runtime
    assert "{judge_version}" not in (tmp_path / ".github" / "workflows" / "judge.yml").read_text()


BARE = re.compile(r"pip install\s+['\"]?judge(?![\w-])")


def test_no_doc_message_or_template_installs_a_bare_judge():
    files = [REPO / "README.md", REPO / "CONTRIBUTING.md", *(REPO / "docs").rglob("*.md"),  # not the CHANGELOG: history
             *(REPO / "judge").rglob("*.py"), *(REPO / "judge" / "cli" / "scaffold").iterdir(),
             *(p for p in (REPO / "tests").glob("*.py") if p.name != Path(__file__).name),
             *(REPO / "scripts").glob("*.py")]
    found = [f"{path.relative_to(REPO)}:{n}" for path in files if path.is_file()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if BARE.search(line)]
    assert BARE.search("pip install 'judge[ray]'") and BARE.search("pip install judge pytest")
    assert not BARE.search("pip install judge-drift") and not BARE.search("pip install 'judge-drift[ray]'")
    assert found == []


def _dist_info(site: Path, name: str, version: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")


def test_provenance_gives_judge_s_own_version_whatever_distribution_installed_it(tmp_path, monkeypatch):
    """An install under the old name `judge` (another version, first on the path) is not judge's version."""
    from judge.grade.provenance import _package_versions, package_versions

    _dist_info(tmp_path, "judge", "9.9.9")
    monkeypatch.syspath_prepend(str(tmp_path))
    _package_versions.cache_clear()
    try:
        assert metadata.version("judge") == "9.9.9"
        assert package_versions()["judge"] == judge.__version__
    finally:
        _package_versions.cache_clear()


def test_a_calibration_record_keeps_the_version_of_the_judge_drift_distribution(tmp_path, monkeypatch):
    """calibration knows nothing of judge: it reads the distribution's metadata, under its name."""
    from calibration.record import package_versions

    _dist_info(tmp_path, "judge-drift", "9.9.8")
    _dist_info(tmp_path, "judge", "9.9.9")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert package_versions()["judge"] == "9.9.8"
