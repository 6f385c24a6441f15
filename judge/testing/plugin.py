"""The pytest plugin of judge.testing (entry point `pytest11`: judge = judge.testing.plugin).

- A test that fails in `assert_passed` is reported as the test's line and the run's failure message
  (outcome, veto cause, each violation), without a traceback into judge.
- `--judge-html DIR` saves an HTML page (judge.render.html) of each run a failing test graded.

It imports nothing heavy: loading it costs a test session nothing until a test grades.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judge import testing
from judge.model.atomic import write_atomic

HTML_MISSING = ("--judge-html needs judge.render.html (the HTML page of a grade report), which this "
                "installation of judge does not have")


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add `--judge-html DIR` to pytest's options."""
    group = parser.getgroup("judge", "judge: grading agent runs (judge.testing)")
    group.addoption("--judge-html", metavar="DIR", default=None,
                    help="Save an HTML page of each run a failing test graded into DIR.")


def _renderer():
    """The grade report's HTML page renderer (judge.render.html.grade_page), None when this
    installation has none."""
    try:
        from judge.render import html
    except ImportError:
        return None
    return getattr(html, "grade_page", None) or getattr(html, "to_html", None)


def pytest_configure(config: pytest.Config) -> None:
    """With `--judge-html`, record each graded run (a usage error when the HTML renderer is missing)."""
    if config.getoption("judge_html", None):
        if _renderer() is None:
            raise pytest.UsageError(HTML_MISSING)
        testing.recording = True


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop recording and forget the recorded runs."""
    testing.recording = False
    testing.graded.clear()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Each test starts with no recorded runs."""
    testing.graded.clear()


def _where(item: pytest.Item, excinfo: pytest.ExceptionInfo) -> str:
    """`tests/test_x.py:12` of the test's own frame that called assert_passed (the deepest one)."""
    entries = [e for e in excinfo.traceback if Path(str(e.path)) == Path(str(item.path))]
    if not entries:
        return item.nodeid
    path = Path(str(entries[-1].path))
    try:
        shown = path.relative_to(item.config.rootpath)
    except ValueError:
        shown = path
    return f"{shown.as_posix()}:{entries[-1].lineno + 1}"


def _page_name(nodeid: str, index: int) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[:150] + (f"-{index}" if index else "") + ".html"


def _save_pages(item: pytest.Item, directory: str) -> list[Path]:
    render = _renderer()
    if render is None or not testing.graded:
        return []
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for i, result in enumerate(testing.graded):
        path = folder / _page_name(item.nodeid, i)
        write_atomic(path, render(result.report))
        written.append(path)
    return written


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A failed `assert_passed` is reported as the test's line and its message, without a traceback
    into judge; with `--judge-html`, a failing test's graded runs are saved as pages."""
    report = yield
    if call.when != "call" or not report.failed:
        return report
    excinfo = call.excinfo
    if excinfo is not None and excinfo.errisinstance(testing.JudgeAssertionError):
        report.longrepr = f"{_where(item, excinfo)}: {excinfo.value}"
    directory = item.config.getoption("judge_html", None)
    if directory:
        for path in _save_pages(item, directory):
            report.sections.append(("judge", f"HTML page: {path}"))
    return report
