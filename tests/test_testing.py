"""judge.testing and its pytest plugin, through pytest itself (the `pytester` fixture): a clean
trace passes; a drifting one fails with its violations listed and no traceback into judge."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

from judge.testing import GradeResult, JudgeAssertionError, assert_passed, failure_message, grade

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
TOUR = REPO / "docs" / "tour"
SCENARIO, CLEAN, DRIFT = TOUR / "scenario.yaml", TOUR / "clean.jsonl", TOUR / "drift.jsonl"

TESTS = f"""
from judge.testing import assert_passed, grade

def test_clean_run():
    assert_passed(grade({str(SCENARIO)!r}, {str(CLEAN)!r}))

def test_drifting_run():
    result = grade({str(SCENARIO)!r}, {str(DRIFT)!r})
    assert_passed(result)
"""


def test_grade_returns_the_outcome_and_the_violations():
    clean, drift = grade(SCENARIO, CLEAN), grade(SCENARIO, DRIFT)
    assert (clean.passed, clean.outcome, clean.violations) == (True, "pass", [])
    assert_passed(clean)
    assert (drift.passed, drift.outcome) == (False, "fail")
    assert drift.violations == [("editable_paths", "e8", "scope:editable_paths"),
                                ("python", "e6", "superseded-value:python")]
    assert drift.report.runs[0].veto.key == "editable_paths"


def test_assert_passed_lists_each_violation_and_the_veto():
    drift = grade(SCENARIO, DRIFT)
    with pytest.raises(AssertionError) as caught:
        assert_passed(drift)
    assert isinstance(caught.value, JudgeAssertionError) and caught.value.result is drift
    message = str(caught.value)
    assert message == failure_message(drift)
    assert "veto: editable_paths violated at e8 (turn 3, rule scope:editable_paths)" in message
    assert "python          e6     superseded-value:python" in message
    assert "first divergence: turn 3, key python, event e6" in message


def test_grade_takes_the_trace_as_lines_too():
    lines = [line for line in DRIFT.read_text().splitlines() if line.strip()]
    result = grade(SCENARIO, lines)
    assert isinstance(result, GradeResult) and ("python", "e6", "superseded-value:python") in result.violations


def test_nothing_is_kept_unless_the_plugin_records():
    import judge.testing as testing

    before = len(testing.graded)
    grade(SCENARIO, CLEAN)
    assert len(testing.graded) == before == 0


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str):
    # Only the plugin under test, whatever is installed in this environment.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_agent=TESTS)
    return pytester.runpytest("-p", "judge.testing.plugin", *args)


def test_a_clean_trace_passes_and_a_drifting_one_fails_with_its_violations(pytester, monkeypatch):
    result = _run(pytester, monkeypatch)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*test_agent.py:8: judge: run 'tour-drift' of scenario 'tour': VETO (fail, quality *)",
        "*veto: editable_paths violated at e8 (turn 3, rule scope:editable_paths)",
        "*violations (key, event, rule):",
        "*editable_paths  e8     scope:editable_paths",
        "*python          e6     superseded-value:python",
    ])
    assert "judge/testing/__init__.py" not in out and "judge/grade/" not in out  # no traceback into judge
    assert "test_clean_run" not in out.split("short test summary")[0].split("FAILURES")[-1]


def test_without_the_plugin_the_message_is_still_the_assertion(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_agent=TESTS)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*JudgeAssertionError: judge: run 'tour-drift'*", "*python*e6*superseded-value:python"])


def test_judge_html_saves_the_real_run_page_of_each_failing_test(pytester, monkeypatch, tmp_path):
    """--judge-html with the renderer `judge grade --html` uses (judge.render.html.grade_page): the
    page of the drifting run shows the veto's cause and its finding pinned to the evidence event,
    with the trace read from where the test graded it; a passing test leaves no page."""
    import re

    from judge.render.html import grade_page
    from judge.testing.plugin import _renderer

    assert _renderer() is grade_page
    pages = tmp_path / "pages"
    result = _run(pytester, monkeypatch, "--judge-html", str(pages))
    result.assert_outcomes(passed=1, failed=1)
    written = sorted(pages.iterdir())
    assert [p.name for p in written] == ["test_agent.py_test_drifting_run.html"]
    html = written[0].read_text(encoding="utf-8")
    assert "editable_paths violated at e8 (turn 3, rule scope:editable_paths)" in html  # the veto's cause
    row = re.search(r'<tr id="(r0-f\d+-\d+)" class="finding v-violated is-veto"', html)
    event = re.search(r'<li id="r0-e\d+" class="event [^"]*is-pinned[^"]*" data-event="e8">(.*?)</li>', html, re.S)
    assert row and event, "the vetoing finding and its evidence event are both on the page"
    assert f'href="#{row.group(1)}"' in event.group(1) and "violated: editable_paths" in event.group(1)
    assert "not found" not in html  # the timeline was read from the trace file, not left out
    assert f"HTML page: {written[0]}" in result.stdout.str()


def test_judge_html_says_what_it_needs_without_the_renderer(pytester, monkeypatch, tmp_path):
    """An installation without judge.render.html: --judge-html is a usage error, not a silent no-op."""
    import sys

    import judge.render
    from judge.testing.plugin import HTML_MISSING

    # pytester runs in this process: the renderer goes away for its run only.
    monkeypatch.delattr(judge.render, "html", raising=False)
    monkeypatch.setitem(sys.modules, "judge.render.html", None)

    pages = tmp_path / "pages"
    result = _run(pytester, monkeypatch, "--judge-html", str(pages))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert HTML_MISSING in result.stderr.str()
    assert not pages.exists()


def test_the_plugin_is_a_pytest11_entry_point():
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    target = data["project"]["entry-points"]["pytest11"]["judge"]
    module = importlib.import_module(target)
    assert callable(module.pytest_addoption) and callable(module.pytest_runtest_makereport)


def test_judge_html_writes_one_page_per_run_of_each_failing_test(pytester, monkeypatch, tmp_path):
    """The plugin's page-saving path on its own: a stand-in for judge.render.html.grade_page
    records which report each page got."""
    import sys
    import types

    import judge.render

    # pytester runs in this process: the stand-in replaces the renderer for its run only.
    stand_in = types.SimpleNamespace(grade_page=lambda report: "<html>" + ",".join(r.run_id for r in report.runs)
                                     + "</html>")
    monkeypatch.setattr(judge.render, "html", stand_in, raising=False)
    monkeypatch.setitem(sys.modules, "judge.render.html", stand_in)
    pages = tmp_path / "pages"
    result = _run(pytester, monkeypatch, "--judge-html", str(pages))
    result.assert_outcomes(passed=1, failed=1)
    written = sorted(pages.iterdir())
    assert [p.name for p in written] == ["test_agent.py_test_drifting_run.html"]
    assert written[0].read_text(encoding="utf-8") == "<html>tour-drift</html>"
    assert f"HTML page: {written[0]}" in result.stdout.str()
