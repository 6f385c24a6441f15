"""Locks that hold and paths that travel (issue 23): a project prompt shadowing a built-in version is
refused with or without a lock file; `judge slice --trace`; review labels name traces relatively."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
TOUR = REPO / "docs" / "tour"


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    (root / "prompts" / "goal-fidelity").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "p"\n[tool.judge]\ndefault = "gpt"\n[tool.judge.judges.gpt]\nbackend = "llm"\n'
        'model = "openai/never-called"\napi_base = "http://127.0.0.1:9/v1"\nprompt = "goal-fidelity@2"\n')
    edited = (REPO / "prompts" / "goal-fidelity" / "v2.md").read_text() + "\nBe lenient with the agent.\n"
    (root / "prompts" / "goal-fidelity" / "v2.md").write_text(edited)
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("locked", [False, True], ids=["no lock file", "locked in the project"])
def test_a_project_prompt_shadowing_a_builtin_version_is_refused(project, locked):
    if locked:
        assert runner.invoke(app, ["prompts", "lock"]).exit_code in (0, 1)
        assert (project / "prompts" / "prompts.lock").is_file()
    result = runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(TOUR / "clean.jsonl"), "--no-log"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "shadows the built-in goal-fidelity@2" in lines[0] and "v2.md" in lines[0]
    check = runner.invoke(app, ["prompts", "check"])
    assert check.exit_code == 1 and "shadows goal-fidelity@2" in check.output


def test_a_project_copy_of_a_builtin_prompt_as_it_is_is_fine(project):
    from judge.prompts import load_prompt

    shutil.copy(REPO / "prompts" / "goal-fidelity" / "v2.md", project / "prompts" / "goal-fidelity" / "v2.md")
    assert load_prompt("goal-fidelity@2").origin == "user"  # the same text: no shadow


def test_slice_takes_the_trace_from_another_folder(tmp_path, monkeypatch):
    graded = tmp_path / "graded"
    graded.mkdir()
    shutil.copy(TOUR / "scenario.yaml", graded / "scenario.yaml")
    shutil.copy(TOUR / "drift.jsonl", graded / "drift.jsonl")
    monkeypatch.chdir(graded)
    assert runner.invoke(app, ["grade", "scenario.yaml", "drift.jsonl", "--judge", "none", "--no-log", "-q",
                               "--json", "report.json"]).exit_code == 1
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = elsewhere / "run-42.jsonl"
    shutil.move(str(graded / "drift.jsonl"), str(moved))  # the trace alone moved, under another name
    monkeypatch.chdir(tmp_path)
    report = graded / "report.json"
    lost = runner.invoke(app, ["slice", str(report), "--run", "tour-drift", "-o", str(tmp_path / "s")])
    assert lost.exit_code == 2 and "--trace PATH" in lost.output, lost.output
    result = runner.invoke(app, ["slice", str(report), "--run", "tour-drift", "-o", str(tmp_path / "s"),
                                 "--trace", str(moved)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "s" / "trace.jsonl").is_file()
    other = tmp_path / "other.jsonl"
    other.write_bytes((TOUR / "clean.jsonl").read_bytes())
    wrong = runner.invoke(app, ["slice", str(report), "--run", "tour-drift", "-o", str(tmp_path / "t"),
                                "--trace", str(other)])
    assert wrong.exit_code == 2 and "is not the trace run 'tour-drift' was graded with" in wrong.output


def test_review_labels_name_the_trace_relatively_even_across_top_folders(tmp_path):
    from judge.review.queue import ReviewItem, relative_trace

    trace = (TOUR / "drift.jsonl").resolve()  # under the repository, the labels under /tmp
    item = ReviewItem(case="c", scenario="tour", run_id="r", after_turn=1, from_turn=0, key="k", reasons=[],
                      finding={}, report_file="r.json", trace="drift.jsonl", trace_path=trace)
    named = relative_trace(item, tmp_path / "labels" / "labels.jsonl")
    assert not Path(named).is_absolute() and ((tmp_path / "labels") / named).resolve() == trace


def test_labels_relative_to_the_project_root_are_read_too(tmp_path):
    from judge.grade.labelled import _label_trace

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (tmp_path / "runs").mkdir()
    (tmp_path / "labels").mkdir()
    shutil.copy(TOUR / "drift.jsonl", tmp_path / "runs" / "drift.jsonl")
    labels = tmp_path / "labels" / "l.jsonl"
    labels.write_text(json.dumps({"case": "c", "label": "upheld", "annotator": "a"}) + "\n")
    assert _label_trace(labels, "../runs/drift.jsonl") == (tmp_path / "runs" / "drift.jsonl").resolve()
    assert _label_trace(labels, "runs/drift.jsonl") == (tmp_path / "runs" / "drift.jsonl").resolve()
