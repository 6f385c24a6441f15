"""The run page (`judge grade --html`, judge.render.html) without a browser: what it shows, that it is
self-contained and allows nothing but its own style and script, that hostile trace text stays text,
that redacted values show as redacted, and that a long trace makes a bounded page
(judge.review.timeline). tests/test_run_page_browser.py opens the same pages in Chromium."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import TraceBuilder

from judge.api import GradeSession
from judge.render.html import grade_page, suite_page
from judge.review.timeline import Gap, Limits, read_timeline, run_timeline

REPO = Path(__file__).resolve().parents[1]
TOUR = REPO / "docs" / "tour"
HOSTILE = '</pre><script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">x</a>'


def _grade(scenario: Path, *traces: Path):
    return GradeSession.open("none").grade_files(scenario, list(traces))


def _tour_page() -> str:
    return grade_page(_grade(TOUR / "scenario.yaml", TOUR / "drift.jsonl", TOUR / "clean.jsonl"))


def _inline(html: str, tag: str) -> str:
    return re.search(rf"<{tag}>(.*?)</{tag}>", html, re.S).group(1)


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_the_page_shows_the_veto_the_divergence_and_each_finding_pinned_to_its_event():
    html = _tour_page()
    assert "1/2 runs passed" in html
    assert "editable_paths violated at e8 (turn 3, rule scope:editable_paths)" in html  # the veto's cause
    assert "edit_file path=&#39;tests/test_dates.py&#39; is outside [&#39;src/dates.py&#39;]" in html
    assert re.search(r"turn 3, key <strong>python</strong> \(fact, normal\), event <a class=\"ev-link\" "
                     r"href=\"#r0-e5\">e6</a>", html)  # the first divergence links to its event
    # The violated finding's row and its evidence event link to each other.
    row = re.search(r'<tr id="(r0-f1-1)" class="finding v-violated is-veto"', html)
    assert row, "the vetoing finding has a row"
    event = re.search(r'<li id="r0-e7" class="event k-tool-call is-focus is-pinned" data-event="e8">(.*?)</li>',
                      html, re.S)
    assert event and f'href="#{row.group(1)}"' in event.group(1) and "violated: editable_paths" in event.group(1)
    # The slice (e4..e6) is highlighted; e7 is not in it.
    assert re.findall(r'class="event [^"]*in-slice[^"]*" data-event="(e\d+)"', html)[:3] == ["e4", "e5", "e6"]
    assert 'data-event="e7"' in html and not re.search(r'in-slice[^"]*" data-event="e7"', html)


def test_the_page_is_self_contained_and_its_policy_allows_only_its_own_style_and_script():
    html = _tour_page()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "nothing is fetched"
    assert "<link rel=\"stylesheet\"" not in html and "<script src" not in html
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html).group(1)
    csp = csp.replace("&#39;", "'")
    assert csp.startswith("default-src 'none'")
    assert f"style-src {_sha(_inline(html, 'style'))};" in csp
    assert f"script-src {_sha(_inline(html, 'script'))};" in csp
    assert "unsafe-inline" not in csp and "form-action 'none'" in csp
    assert html.count("<script") == 1 and html.count("<style") == 1
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", html.replace(_inline(html, "script"), "")), "no inline handler"
    assert 'style="' not in html, "no style attribute (the policy would block it)"


def _hostile_files(tmp: Path) -> tuple[Path, Path]:
    scenario = yaml.safe_load((TOUR / "scenario.yaml").read_text())
    (tmp / "scenario.yaml").write_text(yaml.safe_dump(scenario))
    t = TraceBuilder("tour")
    t.lines[0]["run_id"] = "run<b>1</b>"
    t.user(1, "edit only src/dates.py " + HOSTILE + " mail me at jane.doe@example.com")
    t.call(1, "edit_file", path="src/dates.py\"><script>alert(4)</script>")
    t.call(3, "edit_file", result=HOSTILE, path="tests/" + HOSTILE)
    trace = tmp / "hostile.jsonl"
    trace.write_text("".join(json.dumps(line) + "\n" for line in t.lines))
    return tmp / "scenario.yaml", trace


def test_hostile_trace_text_is_escaped_and_redacted_values_show_as_redacted(tmp_path):
    scenario, trace = _hostile_files(tmp_path)
    html = grade_page(_grade(scenario, trace))
    body = html.split("<body>", 1)[1].rsplit("<script>", 1)[0]  # what came from data
    for raw in ("<script>alert", "<img src=x", 'href="javascript:', "<b>1</b>"):
        assert raw not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "run&lt;b&gt;1&lt;/b&gt;" in body
    assert "jane.doe@example.com" not in html
    assert '<span class="redacted" title="redacted when the trace was read">[REDACTED:email]</span>' in html
    assert "email ×1" in html  # the run's redaction counts


def test_a_long_trace_makes_a_bounded_page_that_counts_what_it_leaves_out(tmp_path):
    scenario, _ = _hostile_files(tmp_path)
    t = TraceBuilder("tour")
    t.user(1, "fix it, edit only src/dates.py")
    for i in range(3000):
        t.call(2, "read_file", path=f"src/file{i}.py")
    bad = t.call(3, "edit_file", path="tests/test_dates.py")  # the veto, far into the trace
    for i in range(3000):
        t.say(3, f"still working {i}")
    trace = tmp_path / "long.jsonl"
    trace.write_text("".join(json.dumps(line) + "\n" for line in t.lines))
    report = _grade(scenario, trace)
    run = report.runs[0]
    assert run.events == 9003 and run.veto.event == bad
    limits = Limits(whole=100, context=3, max_events=200)
    timeline = run_timeline(run, limits=limits)
    assert timeline.total == 9003 and timeline.shown + timeline.elided == 9003
    assert timeline.shown <= 200
    shown = [i for w in timeline.windows for i in w.items if not isinstance(i, Gap)]
    around = [e.id for e in shown if abs(e.index - next(x.index for x in shown if x.id == bad)) <= 3]
    assert len(around) == 7, "the veto's event with three events on each side"
    html = grade_page(report, limits=limits)
    assert len(html.encode()) < 200_000
    assert re.search(r"… [\d,]+ events not shown \(turns? \d", html)
    assert f"9003 events in the trace: this page shows {timeline.shown} of them" in html


def test_many_runs_share_the_page_budget():
    from judge.render.html import PAGE_EVENTS, page_limits

    assert page_limits(Limits(), 1) == Limits()
    shared = page_limits(Limits(), 200)
    assert shared.max_events * 200 <= PAGE_EVENTS and shared.whole == shared.max_events


def test_the_timeline_of_a_short_trace_is_whole_and_grouped_by_checkpoint():
    report = _grade(TOUR / "scenario.yaml", TOUR / "drift.jsonl")
    timeline = run_timeline(report.runs[0])
    assert [(w.from_turn, w.after_turn, w.events, w.shown) for w in timeline.windows] == [(0, 1, 3, 3), (2, 3, 7, 7)]
    assert timeline.elided == 0 and timeline.notes == []


def test_a_missing_or_changed_trace_is_said_on_the_page(tmp_path):
    copy = tmp_path / "drift.jsonl"
    copy.write_bytes((TOUR / "drift.jsonl").read_bytes())
    report = _grade(TOUR / "scenario.yaml", copy)
    copy.write_text(copy.read_text().replace("Understood", "Sure"))
    assert "changed since it was graded" in grade_page(report, check_sha256=True)
    copy.unlink()
    assert "not found: showing what the report holds" in grade_page(report)


def test_a_bad_line_stops_the_timeline_with_a_note_not_an_error(tmp_path):
    trace = tmp_path / "t.jsonl"
    lines = (TOUR / "drift.jsonl").read_text().splitlines()
    trace.write_text("\n".join(lines[:5] + ["{not json"] + lines[5:]) + "\n")
    timeline = read_timeline(trace, bounds=[(0, 1, False), (2, 3, False)], total=10)
    assert timeline.total == 4 and "cannot read the trace past event 4" in timeline.notes[0]


def test_a_long_slice_numbered_in_a_row_is_never_made_whole_for_the_page():
    """A one-window slice of millions of events (e5 ... e2000004 here) marks the page's events by
    arithmetic: made whole as a list and a set it was ~80 MB of a 1M-event `--html` (156 MB peak)."""
    import tracemalloc

    from judge.model.event_ids import EventIds

    tracemalloc.start()
    try:
        timeline = read_timeline(TOUR / "drift.jsonl", bounds=[(0, 1, False), (2, 3, False)], total=10,
                                 slice_ids=EventIds.numbered("e", 5, 2_000_000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak  # (the 2M ids as a list and a set: ~250 MB)
    marked = [(item.id, item.in_slice) for w in timeline.windows for item in w.items if not isinstance(item, Gap)]
    assert marked == [(f"e{i}", i >= 5) for i in range(1, 11)]


def test_the_suite_page_shows_the_release_and_each_runs_findings(tmp_path):
    from judge.suite import grade_suite

    run = grade_suite(REPO / "examples" / "suite" / "suite.yaml", "nightly", keep_reports=True, jobs=1)
    html = suite_page(run.report, run.run_reports)
    assert "RELEASE FAIL" in html and "safetyCriticalViolations" in html
    assert html.count('class="run status-') == 20
    assert 'class="finding v-violated is-veto"' in html  # findings come from the kept reports
    # From the suite's JSON alone: outcome, veto, divergence and the trace around them; no findings.
    from judge.suite import SuiteReport

    again = SuiteReport.model_validate_json(run.report.model_dump_json(by_alias=True))
    plain = suite_page(again)
    assert 'class="finding ' not in plain and "A suite report keeps each run" in plain
    assert '<span class="tag tag-veto">veto</span>' in plain


def _judge(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from judge.cli import main; main()", *args],
                          capture_output=True, text=True, cwd=cwd, env=env)


@pytest.mark.slow
def test_judge_grade_html_writes_the_page_and_never_over_an_input(tmp_path):
    out = tmp_path / "page" / "run.html"
    done = _judge("grade", str(TOUR / "scenario.yaml"), str(TOUR / "drift.jsonl"), "--judge", "none", "-q",
                  "--html", str(out))
    assert done.returncode == 1, done.stderr
    assert out.read_text().startswith("<!doctype html>") and "tour / tour-drift" in out.read_text()
    over = _judge("grade", str(TOUR / "scenario.yaml"), str(TOUR / "drift.jsonl"), "--judge", "none", "-q",
                  "--html", str(TOUR / "drift.jsonl"))
    assert over.returncode == 2 and "refusing to write" in over.stderr


def test_judge_view_lists_every_report_and_serves_only_those(tmp_path):
    from fastapi.testclient import TestClient

    from judge.render.report import to_json
    from judge.service.viewer import create_viewer_app

    reports = tmp_path / "reports"
    (reports / "nested").mkdir(parents=True)
    (reports / "tour.json").write_text(to_json(_grade(TOUR / "scenario.yaml", TOUR / "drift.jsonl")))
    (reports / "nested" / "junk.json").write_text('{"runs": "no"}')
    (tmp_path / "secret.json").write_text("{}")
    client = TestClient(create_viewer_app(reports), base_url="http://127.0.0.1")
    index = client.get("/")
    assert index.status_code == 200 and 'href="/report/tour.json"' in index.text
    assert "nested/junk.json: not a grade or suite report" in index.text
    page = client.get("/report/tour.json")
    assert page.status_code == 200 and "editable_paths violated at e8" in page.text
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    for path in ("/report/../secret.json", "/report/%2e%2e/secret.json", "/report/nested/junk.json", "/report/x"):
        assert client.get(path).status_code == 404, path
    assert TestClient(create_viewer_app(reports), base_url="http://[::1]:8322").get("/").status_code == 200
    for host in ("http://evil.example", "http://127.0.0.1.evil.example"):  # DNS rebinding
        assert TestClient(create_viewer_app(reports), base_url=host).get("/").status_code == 400


@pytest.mark.slow
def test_judge_view_refuses_any_host_but_loopback_and_a_missing_folder(tmp_path):
    beyond = _judge("view", str(tmp_path), "--host", "0.0.0.0")
    assert beyond.returncode == 2 and "judge view listens on loopback only" in beyond.stderr
    missing = _judge("view", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no such folder" in missing.stderr


@pytest.mark.slow
def test_judge_view_serves_the_run_log_with_each_runs_trace(tmp_path):
    """A project's grades, kept in its run log (.judge/runs/), viewed from anywhere: the page finds the
    trace the report names relative to the project, two folders above the report."""
    import os
    import shutil

    from fastapi.testclient import TestClient

    from judge.service.viewer import create_viewer_app

    project = tmp_path / "project"
    (project / "traces").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'agent'\n")
    shutil.copy(TOUR / "scenario.yaml", project / "scenario.yaml")
    shutil.copy(TOUR / "drift.jsonl", project / "traces" / "drift.jsonl")
    env = {k: v for k, v in os.environ.items() if k != "JUDGE_LOG_DIR"}  # the project's own run log
    graded = _judge("grade", "scenario.yaml", "traces/drift.jsonl", "--judge", "none", "-q", cwd=project, env=env)
    assert graded.returncode == 1, graded.stderr
    [logged] = (project / ".judge" / "runs").glob("*.json")
    client = TestClient(create_viewer_app(project / ".judge" / "runs"), base_url="http://127.0.0.1")
    assert f'href="/report/{logged.name}"' in client.get("/").text
    page = client.get(f"/report/{logged.name}").text
    assert "editable_paths violated at e8 (turn 3, rule scope:editable_paths)" in page
    assert re.search(r'<li id="r0-e\d+" class="event [^"]*is-pinned[^"]*" data-event="e8">', page), \
        "the trace was found: the vetoing finding is pinned to its event"
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "pyproject.toml").write_text("")
    none_yet = _judge("view", cwd=empty, env=env)
    assert none_yet.returncode == 2 and "no runs logged here yet" in none_yet.stderr


def test_a_suites_kept_reports_come_back_as_models_with_compact_slices(monkeypatch):
    """`judge suite --html` keeps every run's report: a worker sends back the model itself (pickled),
    so a long window's slice stays an EventIds (a few numbers for ids in a row) instead of becoming a
    list of every id (a suite of 1M-event runs: ~41 MB a run); the page is the same either way."""
    import pickle

    from judge.grade import windows
    from judge.model.event_ids import EventIds
    from judge.suite import grade_suite
    from judge.suite.worker import run_result

    manifest = REPO / "examples" / "suite" / "suite.yaml"
    two = grade_suite(manifest, "nightly", keep_reports=True, jobs=2)
    one = grade_suite(manifest, "nightly", keep_reports=True, jobs=1)
    assert two.run_reports.keys() == one.run_reports.keys() and len(two.run_reports) == 20
    assert suite_page(two.report, two.run_reports) == suite_page(one.report, one.run_reports)

    monkeypatch.setattr(windows, "SPILL_EVENTS", 4)  # a window past 4 events is kept as where it is in the file
    failing = next(t for t, r in one.run_reports.items() if len(r.slice) > 4)
    report = GradeSession().grade_run(_ledger_of(one.run_reports[failing]), failing)
    assert isinstance(report.slice, EventIds) and report.slice.in_a_row
    sent = pickle.loads(pickle.dumps(run_result(report, "s", failing, keep_report=True)))  # what a pipe carries
    assert isinstance(sent["report"].slice, EventIds) and sent["report"].slice.in_a_row
    kept = one.run_reports[failing]
    assert sent["report"].slice == kept.slice and sent["report"].first_divergence == kept.first_divergence


def _ledger_of(report):
    from judge.api import load_ledger

    return load_ledger(REPO / "examples" / report.scenario / "scenario.yaml")
