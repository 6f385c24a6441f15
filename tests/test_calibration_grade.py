"""`judge grade` applies a judge's calibration record; a missing or stale one warns or fails; and
`judge calibrate --check` says what changed. A replay judge stands in for a model, in a project of
its own (tmp_path with its pyproject.toml, labels/ and calibration/records/)."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from judge.cli import app

runner = CliRunner()
FINGERPRINT = {"backend": "test", "model": "judge-m1", "prompt": {"id": "goal-fidelity", "version": 1}}
KEYS = {3: ["goal", "editable_paths", "no_app_code", "no_deploy"],
        5: ["goal", "editable_paths", "no_app_code", "no_deploy", "browser"],
        7: ["editable_paths", "no_app_code", "no_deploy", "repair"]}


@pytest.fixture
def project(shared_dir, tmp_path, monkeypatch):
    contract = shared_dir / "contract"
    for name in ("checkout-firefox.yaml", "checkout-firefox.clean.jsonl"):
        shutil.copy(contract / name, tmp_path / name)
    recorded = [{"scenario": "checkout-firefox", "run_id": "r-clean", "after_turn": turn, "fingerprint": FINGERPRINT,
                 "findings": [{"key": k, "verdict": "upheld", "confidence": 0.7, "rationale": "kept"} for k in keys]}
                for turn, keys in KEYS.items()]
    (tmp_path / "recorded.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recorded))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.judge]\ndefault = "rep"\nstale = "error"\n'
        '[tool.judge.judges.rep]\nbackend = "replay"\npath = "recorded.jsonl"\n')
    (tmp_path / "labels").mkdir()
    (tmp_path / "calibration" / "records").mkdir(parents=True)
    labels, verdicts = [], []
    for i in range(40):  # a judge right 30 times in 40, more confident when right
        right = i % 4 != 0
        truth = "violated" if i % 2 else "upheld"
        said = truth if right else ("upheld" if truth == "violated" else "violated")
        labels.append({"case": f"c{i}", "label": truth, "annotator": "a"})
        verdicts.append({"case": f"c{i}", "verdict": said, "confidence": 0.9 if right else 0.55,
                         "judge": FINGERPRINT})
    (tmp_path / "labels" / "set.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    (tmp_path / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in verdicts))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUDGE_CONFIG", raising=False)
    return tmp_path


def _grade(project):
    result = runner.invoke(app, ["grade", "checkout-firefox.yaml", "checkout-firefox.clean.jsonl",
                                 "--json", "report.json", "-q"])
    return result.exit_code, json.loads((project / "report.json").read_text())["runs"][0]


def test_stale_calibration_refuses_to_grade_then_a_record_applies(project):
    refused = runner.invoke(app, ["grade", "checkout-firefox.yaml", "checkout-firefox.clean.jsonl",
                                  "--json", "report.json", "-q"])
    # stale = "error" is a configuration problem, not a failing run: exit 2, one line, no report
    assert refused.exit_code == 2 and "calibration of judge 'rep' is stale" in refused.output
    assert 'stale = "error"' in refused.output and len(refused.output.strip().splitlines()) == 1
    assert not (project / "report.json").exists()
    assert runner.invoke(app, ["calibrate", "--check"]).exit_code == 1

    made = runner.invoke(app, ["calibrate", "--labels", "labels", "--verdicts", "verdicts.jsonl", "--name", "rep"])
    assert made.exit_code == 0, made.output
    assert (project / "calibration" / "records" / "rep.json").exists()
    assert (project / "calibration" / "records" / "rep.png").exists()
    check = runner.invoke(app, ["calibrate", "--check"])
    assert check.exit_code == 0 and "current" in check.output

    code, run = _grade(project)
    assert code == 0 and not run["warnings"]
    judged = [f for cp in run["checkpoints"] for f in cp["findings"] if f["confidence"] is not None]
    assert judged and all(f["confidence_calibrated"] is not None for f in judged)
    record = json.loads((project / "calibration" / "records" / "rep.json").read_text())
    threshold = record["review_threshold"]
    for f in judged:  # review marks only where the judge decided (or disagreed with a rule)
        below = threshold is None or f["confidence_calibrated"] < threshold
        assert f["needs_review"] == ((f["source"] == "judge" and below) or f["disagreement"])
    assert any(f["source"] == "deterministic" and not f["needs_review"] for f in judged)


def test_check_names_what_changed(project):
    runner.invoke(app, ["calibrate", "--labels", "labels", "--verdicts", "verdicts.jsonl", "--name", "rep"])
    with (project / "labels" / "set.jsonl").open("a") as fh:  # labels are appended, never rewritten
        fh.write(json.dumps({"case": "c99", "label": "upheld", "annotator": "b"}) + "\n")
    check = runner.invoke(app, ["calibrate", "--check"])
    assert check.exit_code == 1 and "labels changed" in check.output
    (project / "recorded.jsonl").write_text((project / "recorded.jsonl").read_text().replace("judge-m1", "judge-m2"))
    check = runner.invoke(app, ["calibrate", "--check"])
    assert check.exit_code == 1 and "judge-m1" in check.output and "judge-m2" in check.output


def test_review_fail_policy_fails_runs_with_findings_to_review(project):
    (project / "pyproject.toml").write_text((project / "pyproject.toml").read_text()
                                            .replace('stale = "error"', 'stale = "warn"\nreview = "fail"'))
    runner.invoke(app, ["calibrate", "--labels", "labels", "--verdicts", "verdicts.jsonl", "--name", "rep"])
    code, run = _grade(project)
    needs = [f for cp in run["checkpoints"] for f in cp["findings"] if f["needs_review"]]
    assert needs and code == 1 and not run["passed"]
