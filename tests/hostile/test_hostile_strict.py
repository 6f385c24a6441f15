"""Strict data files (issue 23): inputs that were accepted and should not have been are exit 2 with
one line naming the file, the line and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app

runner = CliRunner()
TOUR = Path(__file__).resolve().parents[2] / "docs" / "tour"
LABEL = {"case": "tour/r1/4/goal", "scenario": "tour", "trace": "drift.jsonl", "after_turn": 4, "key": "goal",
         "label": "upheld", "evidence_event": None, "annotator": "a"}


def _one_line(result, *parts: str) -> str:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.output
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


@pytest.mark.parametrize("change, says", [
    ({"label": "violatedd"}, "label: a ledger label is one of violated, upheld, not-exercised (got 'violatedd')"),
    ({"labell": "upheld"}, "labell: unknown field"),
    ({"after_turn": "five"}, "after_turn: Input should be a valid integer"),
])
def test_bad_labels_are_exit_2(tmp_path, change, says):
    labels = tmp_path / "labels.jsonl"
    good = json.dumps(LABEL)
    labels.write_text(good + "\n" + json.dumps({**LABEL, "annotator": "b", **change}) + "\n")
    verdicts = tmp_path / "verdicts.jsonl"
    verdict = {"case": LABEL["case"], "verdict": "upheld", "confidence": 0.9, "judge": "j"}
    verdicts.write_text(json.dumps(verdict) + "\n")
    result = runner.invoke(app, ["calibrate", "--labels", str(labels), "--verdicts", str(verdicts), "--name", "j",
                                 "--out", str(tmp_path / "rec")])
    _one_line(result, "labels.jsonl:2:", says)
    assert not (tmp_path / "rec").exists()
    (tmp_path / "drift.jsonl").write_bytes((TOUR / "drift.jsonl").read_bytes())
    result = runner.invoke(app, ["calibrate", "--labels", str(labels), "--judge", "local", "--out",
                                 str(tmp_path / "rec"), "--scenarios", str(TOUR)])
    _one_line(result, "labels.jsonl:2:", says)


def test_plain_pairs_of_any_labelled_set_still_read():
    from calibration.inputs import LabelRecord

    assert LabelRecord.model_validate({"case": "llmbar/1", "label": 2, "annotator": "gold"}).label == "2"


def test_an_unknown_tool_judge_key_names_the_nearest_one(tmp_path):
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.judge]\ndefault = "local"\nstal = "error"\n')
    _one_line(runner.invoke(app, ["config", "show", "--config", str(config)]),
              "pyproject.toml:3:", "tool.judge.stal", "unknown key 'stal'", "did you mean 'stale'?")
    result = runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(TOUR / "clean.jsonl"), "--config",
                                 str(config), "--no-log"])
    _one_line(result, "unknown key 'stal'")


def test_an_unknown_judge_table_key_names_the_nearest_one(tmp_path):
    config = tmp_path / "judge.toml"
    config.write_text('[tool.judge]\ndefault = "g"\n[tool.judge.judges.g]\nbackend = "llm"\nmodel = "x"\n'
                      "temprature = 0\n")
    result = runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(TOUR / "clean.jsonl"), "--config",
                                 str(config), "--no-log"])
    _one_line(result, "judge.toml:6:", "tool.judge.judges.g.temprature", "did you mean 'temperature'?")


def test_a_json_scenario_with_a_trailing_comma_is_not_read_as_yaml(tmp_path):
    scenario = tmp_path / "scenario.json"
    scenario.write_text('{"id": "tour", "title": "t", "ledger": [],\n "checkpoints": [],}\n')
    _one_line(runner.invoke(app, ["lint", str(scenario)]), "scenario.json:2:", "invalid JSON")
    result = runner.invoke(app, ["grade", str(scenario), str(TOUR / "clean.jsonl"), "--judge", "none", "--no-log"])
    _one_line(result, "scenario.json:2:", "invalid JSON")


@pytest.mark.parametrize("value, says", [("NaN", "NaN is not a JSON number"),
                                          ("-Infinity", "-Infinity is not a JSON number"),
                                          ("1e999", "1e999 is too large")])
def test_non_finite_numbers_in_a_trace_are_refused(tmp_path, value, says):
    lines = (TOUR / "clean.jsonl").read_text().splitlines()
    trace = tmp_path / "nan.jsonl"
    trace.write_text("\n".join([*lines, '{"id": "e99", "turn": 9, "kind": "state-write", "key": "k", "value": '
                                + value + "}"]) + "\n")
    result = runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(trace), "--judge", "none", "--no-log"])
    _one_line(result, f"nan.jsonl:{len(lines) + 1}", says)


def test_non_finite_numbers_through_the_service_are_422():
    from fastapi.testclient import TestClient

    from judge.service import create_app

    client = TestClient(create_app(token=""), base_url="http://127.0.0.1")
    header = {"kind": "run", "run_id": "r", "scenario": "tour"}
    body = ('{"scenario": ' + json.dumps((TOUR / "scenario.yaml").read_text()) + ', "judge": "none", "traces": [['
            + json.dumps(header) + ', {"id": "e1", "turn": 1, "kind": "state-write", "key": "k", "value": NaN}]]}')
    answer = client.post("/v1/grade", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 422 and answer.headers["x-judge-exit-code"] == "2", answer.text
    assert answer.json()["detail"] == "traces[0]:2: value: NaN and infinite numbers are not JSON numbers"
