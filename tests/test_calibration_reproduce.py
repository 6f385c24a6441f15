"""The shipped calibration record of the `local` judge reproduces (issue 11): rerunning
`judge calibrate --judge local` on the shipped labels gives the record's figures and verdicts, and
the record goes stale when the judge's code changes.

After an intended change to the local judge (its code, cue tables or model), re-record it with
`judge calibrate --judge local` (it rewrites calibration/records/local.json, .png and
.verdicts.jsonl) and say so in the commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app

REPO = Path(__file__).resolve().parents[1]
RECORDS = REPO / "calibration" / "records"
runner = CliRunner()


@pytest.mark.slow
def test_calibrating_local_on_the_shipped_labels_reproduces_the_shipped_record(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    result = runner.invoke(app, ["calibrate", "--judge", "local", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "judge errors" not in result.output  # no finding without a judge verdict counts as one
    shipped = json.loads((RECORDS / "local.json").read_text())
    made = json.loads((tmp_path / "local.json").read_text())
    for field in ("n", "ties_excluded", "n_unmatched", "accuracy", "cohen_kappa", "tpr", "tnr", "confusion",
                  "fingerprint", "labels_sha256", "certified", "review_threshold"):
        assert made[field] == shipped[field], field
    verdicts = (tmp_path / "local.verdicts.jsonl").read_text()
    assert verdicts == (RECORDS / "local.verdicts.jsonl").read_text()
    check = runner.invoke(app, ["calibrate", "--check", "--judge", "local"])
    assert check.exit_code == 0 and "is current" in check.output


def test_a_change_to_the_local_judges_code_makes_its_record_stale(monkeypatch):
    from judge.judges.local import judge as local_judge

    monkeypatch.chdir(REPO)
    monkeypatch.setattr(local_judge, "code_sha256", lambda: "0" * 64)
    check = runner.invoke(app, ["calibrate", "--check", "--judge", "local"])
    assert check.exit_code == 1 and "code changed (code_sha256:" in check.output


def test_another_thresholds_version_makes_its_record_stale(tmp_path, monkeypatch):
    """The shipped record is local@2's: the same judge on local@1 has no current record."""
    monkeypatch.chdir(REPO)
    config = tmp_path / "judge.toml"
    config.write_text('[tool.judge]\ndefault = "local"\n[tool.judge.judges.local]\nbackend = "embedding"\n'
                      'model = "all-MiniLM-L6-v2"\nparams = "local@1"\n')
    check = runner.invoke(app, ["calibrate", "--check", "--judge", "local", "--config", str(config)])
    assert check.exit_code == 1 and "is stale" in check.output and "params" in check.output, check.output
