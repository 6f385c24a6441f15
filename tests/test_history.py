"""The run log: every `judge grade` keeps its report (.judge/runs/, [tool.judge] log_dir,
$JUDGE_LOG_DIR, --no-log); `judge runs list` and `judge runs diff` (exit 1 on a regression)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.api import GradeSession
from judge.cli import app
from judge.errors import UsageError
from judge.grade.history import diff_reports, list_runs, load_report, logged_files, resolve_run, write_run

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]
TOUR = REPO / "docs" / "tour"
SCENARIO, CLEAN, DRIFT = (str(TOUR / n) for n in ("scenario.yaml", "clean.jsonl", "drift.jsonl"))


def _report(*traces: str):
    return GradeSession.open("none").grade_files(SCENARIO, list(traces))


def test_names_sort_by_time_and_never_collide(tmp_path):
    now = datetime(2026, 12, 1, 9, 13, 54, tzinfo=UTC)
    paths = [write_run(_report(CLEAN), tmp_path, now=now) for _ in range(3)]
    later = write_run(_report(DRIFT), tmp_path, now=now.replace(second=55))
    assert len({p.name for p in paths}) == 3 and all(p.name.startswith("20261201-091354-") for p in paths)
    assert logged_files(tmp_path)[0] == later
    assert set(logged_files(tmp_path)[1:]) == set(paths)
    listed = list_runs(tmp_path)
    assert listed[0].id == later.stem and listed[0].outcome == "fail" and listed[0].scenarios == ["tour"]
    assert listed[0].when == now.replace(second=55) and listed[-1].outcome == "pass"


def test_resolve_by_alias_id_prefix_and_path(tmp_path):
    first = write_run(_report(CLEAN), tmp_path, now=datetime(2026, 1, 1, tzinfo=UTC))
    second = write_run(_report(DRIFT), tmp_path, now=datetime(2026, 1, 2, tzinfo=UTC))
    assert resolve_run("latest", tmp_path) == second and resolve_run("previous", tmp_path) == first
    assert resolve_run("20260101", tmp_path) == first and resolve_run(second.stem, tmp_path) == second
    assert resolve_run(str(first), tmp_path) == first
    with pytest.raises(UsageError, match="names 2 runs"):
        resolve_run("2026", tmp_path)
    with pytest.raises(UsageError, match="neither a file nor a run"):
        resolve_run("1999", tmp_path)
    with pytest.raises(UsageError, match="holds 0 run"):
        resolve_run("latest", tmp_path / "empty")


def test_diff_names_the_new_violation_and_the_fix():
    clean, drift = _report(CLEAN), _report(DRIFT)
    worse = diff_reports(clean, drift)
    assert worse.regression and len(worse.runs) == 1
    change = worse.runs[0]
    assert (change.outcome_a, change.outcome_b, change.quality_a) == ("pass", "fail", 1.0)
    assert [(k.key, k.event, k.rule) for k in change.new_failures] == [
        ("editable_paths", "e8", "scope:editable_paths"), ("python", "e6", "superseded-value:python")]
    better = diff_reports(drift, clean)
    assert not better.regression and [k.key for k in better.runs[0].fixed] == ["editable_paths", "python"]
    same = diff_reports(drift, drift)
    assert not same.regression and not same.runs[0].new_failures


def test_runs_pair_by_run_id_and_report_the_rest():
    both, drift_only = _report(CLEAN, DRIFT), _report(DRIFT)
    diff = diff_reports(both, drift_only)
    assert [(c.run_a, c.run_b) for c in diff.runs] == [("tour-drift", "tour-drift")]
    assert diff.only_in_a == ["tour / tour-clean"] and not diff.regression


def test_grade_logs_each_run_and_no_log_skips_it(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_LOG_DIR", str(tmp_path / "log"))
    assert runner.invoke(app, ["grade", SCENARIO, CLEAN, "--judge", "none", "-q"]).exit_code == 0
    assert runner.invoke(app, ["grade", SCENARIO, DRIFT, "--judge", "none", "-q"]).exit_code == 1
    assert runner.invoke(app, ["grade", SCENARIO, DRIFT, "--judge", "none", "-q", "--no-log"]).exit_code == 1
    logged = logged_files(tmp_path / "log")
    assert len(logged) == 2
    assert (tmp_path / "log" / ".gitignore").read_text().endswith("*\n")  # git ignores the log by itself
    assert load_report(logged[0]).runs[0].run_id == "tour-drift"
    listed = runner.invoke(app, ["runs", "list"])
    assert listed.exit_code == 0 and "tour" in listed.output and "2 run(s)" in listed.output
    diff = runner.invoke(app, ["runs", "diff", "previous", "latest"])
    assert diff.exit_code == 1, diff.output
    assert "REGRESSION" in diff.output and "python" in diff.output and "superseded-value:python" in diff.output
    assert runner.invoke(app, ["runs", "diff", "latest", "previous"]).exit_code == 0
    bad = runner.invoke(app, ["runs", "diff", "nope", "latest"])
    assert bad.exit_code == 2 and "neither a file nor a run" in bad.output


def test_the_log_sits_beside_the_project_or_where_log_dir_says(tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGE_LOG_DIR", raising=False)
    monkeypatch.delenv("JUDGE_CONFIG", raising=False)
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.judge]\n")
    monkeypatch.chdir(project / "sub")
    assert runner.invoke(app, ["grade", SCENARIO, CLEAN, "--judge", "none", "-q"]).exit_code == 0
    assert len(logged_files(project / ".judge" / "runs")) == 1
    (project / "pyproject.toml").write_text('[tool.judge]\nlog_dir = "history"\n')
    assert runner.invoke(app, ["grade", SCENARIO, CLEAN, "--judge", "none", "-q"]).exit_code == 0
    assert len(logged_files(project / "history")) == 1
    bare = tmp_path / "bare"
    bare.mkdir()
    monkeypatch.chdir(bare)
    assert runner.invoke(app, ["grade", SCENARIO, CLEAN, "--judge", "none", "-q"]).exit_code == 0
    assert len(logged_files(bare / ".judge" / "runs")) == 1


def test_a_log_that_cannot_be_written_is_a_warning_not_a_failure(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("JUDGE_LOG_DIR", str(blocker / "runs"))
    result = runner.invoke(app, ["grade", SCENARIO, CLEAN, "--judge", "none"])
    assert result.exit_code == 0, result.output
    assert "warning: run log not written" in result.output
    assert runner.invoke(app, ["grade", SCENARIO, DRIFT, "--judge", "none"]).exit_code == 1


def test_runs_list_survives_a_file_that_is_not_a_report(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_LOG_DIR", str(tmp_path))
    (tmp_path / "20260101-000000-0000.json").write_text("{not json")
    listed = runner.invoke(app, ["runs", "list"])
    assert listed.exit_code == 0 and "not a grade report" in listed.output
    bad = runner.invoke(app, ["runs", "diff", "latest", "latest"])
    assert bad.exit_code == 2 and "not a grade report" in bad.output and os.sep in bad.output
