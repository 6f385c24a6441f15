"""Planted secrets never reach the run page (`judge grade --html`, `judge view`): the page reads the
trace again through the redacting reader, and shows every value it redacted as redacted."""

from __future__ import annotations

import json

from planted import SCENARIO, leaks, planted_trace
from typer.testing import CliRunner

from judge.cli import app


def test_nothing_planted_reaches_the_run_page_or_judge_view(tmp_path):
    from fastapi.testclient import TestClient

    from judge.service.viewer import create_viewer_app

    scenario, trace = tmp_path / "planted.json", tmp_path / "planted.jsonl"
    scenario.write_text(json.dumps(SCENARIO))
    trace.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in planted_trace("planted")),
                     encoding="utf-8")
    reports, page = tmp_path / "reports", tmp_path / "run.html"
    result = CliRunner().invoke(app, ["grade", str(scenario), str(trace), "--judge", "none", "-q",
                                      "--html", str(page), "--json", str(reports / "r.json")])
    assert page.is_file() and (reports / "r.json").is_file(), result.output
    html = page.read_text(encoding="utf-8")
    assert 'class="event ' in html, "the page shows the trace's events"
    assert html.count('<span class="redacted"') > 20
    assert leaks(html) == []
    served = TestClient(create_viewer_app(reports), base_url="http://127.0.0.1")
    assert leaks(served.get("/").text) == []
    shown = served.get("/report/r.json")
    assert shown.status_code == 200 and 'class="event ' in shown.text and leaks(shown.text) == []


def test_nothing_planted_reaches_a_suite_page(tmp_path):
    """A suite's page and `judge view` of its JSON report: the scenario's no-leak values are found
    through the suite report's scenario file and redacted too."""
    from fastapi.testclient import TestClient

    from judge.service.viewer import create_viewer_app

    (tmp_path / "planted.json").write_text(json.dumps(SCENARIO))
    (tmp_path / "planted-r1.jsonl").write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in planted_trace("planted")), encoding="utf-8")
    manifest = tmp_path / "suite.yaml"
    manifest.write_text("suites:\n  s: {repetitions: 1, scenarios: [planted]}\n"
                        "scenarios:\n  planted: {file: planted.json, runs: \"planted-r*.jsonl\"}\n")
    reports, page = tmp_path / "reports", tmp_path / "suite.html"
    result = CliRunner().invoke(app, ["suite", str(manifest), "--judge", "none", "-q", "--html", str(page),
                                      "--json", str(reports / "suite.json")])
    assert page.is_file() and (reports / "suite.json").is_file(), result.output
    assert leaks(page.read_text(encoding="utf-8")) == []
    shown = TestClient(create_viewer_app(reports), base_url="http://127.0.0.1").get("/report/suite.json")
    assert shown.status_code == 200 and leaks(shown.text) == []
