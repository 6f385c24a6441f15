"""`judge calibrate` writes into the project, never into the installed package (issue 23).

The test installs a copy of the `calibration` package read-only (a read-only bind mount as root, else
no write permission), runs `judge` from a project outside this repository that has labels but no
calibration/records, and checks that records land in the project, `--check` reads the project's
labels, and the package copy is byte for byte what it was."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOUR = REPO / "docs" / "tour"


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture
def read_only_package(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(REPO / "calibration", site / "calibration", ignore=shutil.ignore_patterns("__pycache__"))
    mounted = False
    if os.geteuid() == 0:
        bind = subprocess.run(["mount", "--bind", str(site), str(site)], capture_output=True)
        remount = bind.returncode == 0 and subprocess.run(
            ["mount", "-o", "remount,bind,ro", str(site)], capture_output=True).returncode == 0
        if not remount:
            if bind.returncode == 0:
                subprocess.run(["umount", str(site)], capture_output=True)
            pytest.skip("running as root without mount: a read-only package folder cannot be made")
        mounted = True
    else:
        for path in [site, *site.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
    try:
        yield site
    finally:
        if mounted:
            subprocess.run(["umount", str(site)], capture_output=True)
        else:
            for path in [site, *site.rglob("*")]:
                path.chmod(path.stat().st_mode | 0o200)


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "runs").mkdir(parents=True)
    (root / "labels").mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "someone-elses-agent"\nversion = "0.1"\n')
    shutil.copy(TOUR / "scenario.yaml", root / "runs" / "scenario.yaml")
    shutil.copy(TOUR / "drift.jsonl", root / "runs" / "drift.jsonl")
    rows = [{"case": f"tour/tour-drift/{turn}/{key}", "scenario": "tour", "trace": "../runs/drift.jsonl",
             "after_turn": turn, "key": key, "label": label, "evidence_event": None, "annotator": "me"}
            for turn, key, label in ((1, "goal", "upheld"), (3, "goal", "upheld"), (3, "python", "violated"))]
    (root / "labels" / "mine.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "verdicts.jsonl").write_text("".join(json.dumps({"case": r["case"], "verdict": r["label"],
                                                            "confidence": 0.8, "judge": "mine"}) + "\n"
                                                for r in rows))
    return root


def _judge(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    code = ("import sys\n"
            f"sys.path.insert(0, {str(site)!r})\n"
            "import calibration\n"
            f"assert calibration.__file__.startswith({str(site)!r}), calibration.__file__\n"
            "from judge.cli import main\n"
            f"sys.argv = ['judge', *{list(args)!r}]\n"
            "main()\n")
    env = {k: v for k, v in os.environ.items() if k != "JUDGE_CONFIG"}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**env, "JUDGE_CACHE_DIR": str(cwd / ".cache"), "HF_HUB_OFFLINE": "1"})


@pytest.mark.slow
def test_calibrate_writes_into_the_project_and_never_into_the_package(read_only_package, project):
    site = read_only_package
    before = _digests(site)
    made = _judge(site, project, "calibrate", "--labels", "labels", "--verdicts", "verdicts.jsonl", "--name", "mine")
    assert made.returncode == 0, made.stderr
    records = project / "calibration" / "records"
    assert (records / "mine.json").is_file() and (records / "mine.png").is_file()
    assert json.loads((records / "mine.json").read_text())["n"] == 3

    judged = _judge(site, project, "calibrate", "--judge", "local", "--scenarios", "runs")
    assert judged.returncode == 0, judged.stderr
    assert {p.name for p in records.iterdir()} >= {"local.json", "local.png", "local.verdicts.jsonl"}

    checked = _judge(site, project, "calibrate", "--check", "--judge", "local")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "is current" in checked.stdout and str(records) in checked.stdout.replace("\n", "")

    (project / "labels" / "mine.jsonl").open("a").write(json.dumps(
        {"case": "tour/tour-drift/1/editable_paths", "scenario": "tour", "trace": "../runs/drift.jsonl",
         "after_turn": 1, "key": "editable_paths", "label": "upheld", "annotator": "me"}) + "\n")
    stale = _judge(site, project, "calibrate", "--check", "--judge", "local")
    assert stale.returncode == 1 and "labels changed" in stale.stdout  # the project's labels are read

    refused = _judge(site, project, "calibrate", "--labels", "labels", "--verdicts", "verdicts.jsonl", "--name",
                     "x", "--out", str(site / "calibration" / "records"))
    assert refused.returncode == 2, refused.stderr
    assert "refusing to write calibration records into the installed package" in refused.stderr
    assert _digests(site) == before
