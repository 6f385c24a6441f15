"""Outputs never overwrite inputs, by inode too; labels and JSONL survive every Unicode line break."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app

runner = CliRunner()
TOUR = Path(__file__).resolve().parents[2] / "docs" / "tour"


@pytest.fixture
def inputs(tmp_path):
    scenario, trace = tmp_path / "scenario.yaml", tmp_path / "drift.jsonl"
    scenario.write_bytes((TOUR / "scenario.yaml").read_bytes())
    trace.write_bytes((TOUR / "drift.jsonl").read_bytes())
    return scenario, trace


@pytest.mark.parametrize("link", [os.link, os.symlink], ids=["hard link", "symlink"])
@pytest.mark.parametrize("option", ["--json", "--md", "--junit"])
def test_grade_refuses_a_link_to_its_trace(inputs, tmp_path, link, option):
    scenario, trace = inputs
    before = trace.read_bytes()
    alias = tmp_path / "report.out"
    link(trace, alias)
    result = runner.invoke(app, ["grade", str(scenario), str(trace), "--judge", "none", option, str(alias)])
    assert result.exit_code == 2 and "refusing to write over an input file" in result.output
    assert trace.read_bytes() == before


def test_import_refuses_a_hard_link_to_its_input(tmp_path):
    src = tmp_path / "msgs.json"
    src.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    os.link(src, tmp_path / "alias.jsonl")
    result = runner.invoke(app, ["import", "openai", str(src), "-o", str(tmp_path / "alias.jsonl")])
    assert result.exit_code == 2 and "refusing to write over an input file" in result.output
    assert json.loads(src.read_text()) == [{"role": "user", "content": "hi"}]


def test_suite_and_calibrate_refuse_hard_links(inputs, tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"case": "a", "label": "upheld", "annotator": "x"}\n')
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text('{"case": "a", "verdict": "upheld", "confidence": 0.9, "judge": "j"}\n')
    os.link(labels, tmp_path / "alias.json")
    result = runner.invoke(app, ["calibrate", "--labels", str(labels), "--verdicts", str(verdicts), "--name", "j",
                                 "--out", str(tmp_path / "rec"), "--json", str(tmp_path / "alias.json")])
    assert result.exit_code == 2 and "refusing to write over an input file" in result.output
    assert labels.read_text().startswith('{"case": "a"')
    manifest = tmp_path / "suite.yaml"
    manifest.write_text("suites:\n  s: {repetitions: 1, scenarios: [tour]}\n"
                        f"scenarios:\n  tour: {{file: {inputs[0].name}, runs: \"drift*.jsonl\"}}\n")
    assert runner.invoke(app, ["suite", str(manifest), "--judge", "none", "-q"]).exit_code in (0, 1)
    os.link(inputs[1], tmp_path / "suite-alias.json")
    result = runner.invoke(app, ["suite", str(manifest), "--judge", "none", "-q", "--json",
                                 str(tmp_path / "suite-alias.json")])
    assert result.exit_code == 2 and "refusing to write over an input file" in result.output, result.output
    assert inputs[1].read_bytes() == (TOUR / "drift.jsonl").read_bytes()


def test_a_review_note_with_unicode_line_breaks_stays_one_label(tmp_path):
    from calibration.inputs import read_labels
    from judge.review.labels import Answer, LabelStore, label_row

    store = LabelStore(tmp_path / "labels.jsonl")
    note = "first\u2028second\u2029third\x85fourth\x1cfifth"
    answer = Answer(case="s/r/1/k", label="upheld", annotator="reviewer-a", note=note)
    store.append(label_row(answer, scenario="s", after_turn=1, key="k", trace=None))
    raw = store.path.read_text(encoding="utf-8")
    assert raw.count("\n") == 1 and "\u2028" not in raw and "\\u2028" in raw and "\\u0085" in raw
    assert len(raw.splitlines()) == 1  # even a reader that splits on every line break sees one line
    rows = store.rows()
    assert len(rows) == 1 and rows[0]["note"] == note
    assert [r.case for r in read_labels(store.path)] == ["s/r/1/k"]


def test_a_label_file_written_raw_by_another_tool_still_reads(tmp_path):
    from calibration.inputs import read_labels
    from judge.review.labels import LabelStore

    path = tmp_path / "labels.jsonl"
    row = {"case": "s/r/1/k", "label": "upheld", "annotator": "x", "note": "a\u2028b\x85c"}
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")  # U+2028 raw in a string
    assert len(read_labels(path)) == 1 and len(LabelStore(path).rows()) == 1
