"""The calibration commands: tables, --json, and bad input as one red line with exit code 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from judge.cli.calibration import register


@pytest.fixture(scope="module")
def app():
    app = typer.Typer()
    register(app)
    return app


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    judge_a, judge_b = {"model": "a", "prompt_sha256": "1" * 64}, "judge-b"
    rows = {"labels": [], "a": [], "b": [], "unlabelled": []}
    for i in range(120):
        truth = "violated" if i % 3 == 0 else "upheld"
        rows["labels"].append({"case": f"c{i}", "label": truth, "annotator": "r1", "key": "k"})
        for name, judge, skill in (("a", judge_a, 0.85), ("b", judge_b, 0.95)):
            right = rng.random() < skill
            said = truth if right else ("upheld" if truth == "violated" else "violated")
            rows[name].append({"case": f"c{i}", "verdict": said, "judge": judge,
                               "confidence": float(np.clip(0.9 if right else 0.6, 0, 1))})
    for i in range(200):
        rows["unlabelled"].append({"case": f"u{i}", "verdict": "violated" if i % 4 == 0 else "upheld",
                                   "judge": judge_a, "confidence": 0.8})
    paths = {}
    for name, lines in rows.items():
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text("".join(json.dumps(line) + "\n" for line in lines))
    return paths


def invoke(app, args):
    return CliRunner().invoke(app, [str(arg) for arg in args])


@pytest.mark.slow
def test_calibrate_writes_the_record_and_json(app, files, tmp_path):
    result = invoke(app, ["calibrate", "--labels", files["labels"], "--verdicts", files["a"],
                          "--out", tmp_path / "records", "--name", "judge-a", "--n-boot", 100,
                          "--json", tmp_path / "result.json"])
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.stdout and "Cohen's kappa" in result.stdout
    assert (tmp_path / "records" / "judge-a.json").is_file()
    assert (tmp_path / "records" / "judge-a.png").is_file()
    written = json.loads((tmp_path / "result.json").read_text())
    assert written["record"]["n"] == 120 and written["record"]["name"] == "judge-a"


def test_compare_estimate_and_agreement(app, files, tmp_path):
    compared = invoke(app, ["compare", "--labels", files["labels"], "--verdicts", files["a"],
                            "--verdicts", files["b"], "--n-boot", 100, "--json", tmp_path / "c.json"])
    assert compared.exit_code == 0, compared.output
    assert "McNemar" in compared.stdout
    assert json.loads((tmp_path / "c.json").read_text())["n"] == 120
    estimated = invoke(app, ["estimate", "--labels", files["labels"], "--verdicts", files["a"],
                             "--unlabeled", files["unlabelled"], "--n-boot", 100])
    assert estimated.exit_code == 0, estimated.output
    assert "corrected 'violated' rate" in estimated.stdout
    agreed = invoke(app, ["agreement", "--verdicts", files["a"], "--verdicts", files["b"]])
    assert agreed.exit_code == 0 and "percent agreement" in agreed.stdout


def test_bad_input_is_one_red_line_and_exit_code_2(app, files, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"case": "c1", "verdict": "upheld", "confidence": 2, "judge": "j"}\n')
    result = invoke(app, ["agreement", "--verdicts", files["a"], "--verdicts", bad])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {bad}:1: confidence: Input should be less than or equal to 1"]
    assert "Traceback" not in result.output


def test_one_verdicts_option_where_two_are_needed_is_a_usage_error(app, files):
    result = invoke(app, ["compare", "--labels", files["labels"], "--verdicts", files["a"]])
    assert result.exit_code == 2 and "give --verdicts twice" in result.stderr
