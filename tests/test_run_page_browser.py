"""The run page in a real browser: Playwright drives Debian's chromium (headless). The page written by
`judge grade --html` loads from a file with no network request and no policy violation, shows the
veto's cause, and a finding's evidence link opens (and targets) its event in the trace, and back;
`judge view` serves an index of a reports folder whose pages do the same.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from review_data import RUN, live_server, make_reports

REPO = Path(__file__).resolve().parents[1]
TOUR = REPO / "docs" / "tour"
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium "
                                "(apt-get install chromium chromium-driver; .ci/run does)")


@pytest.fixture
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package (the test extra)")
    with sync_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            yield launched, sync_api.expect
        finally:
            launched.close()


def _watch(page) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {"requests": [], "errors": [], "console": []}
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("pageerror", lambda exc: seen["errors"].append(str(exc)))
    page.on("console", lambda m: seen["console"].append(m.text) if m.type in ("error", "warning") else None)
    return seen


@pytest.mark.slow
def test_the_page_loads_offline_and_pins_each_finding_to_its_event(tmp_path, browser):
    launched, expect = browser
    out = tmp_path / "run.html"
    done = subprocess.run([sys.executable, "-c", "from judge.cli import main; main()", "grade",
                           str(TOUR / "scenario.yaml"), str(TOUR / "drift.jsonl"), str(TOUR / "clean.jsonl"),
                           "--judge", "none", "-q", "--html", str(out)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 1, done.stderr
    page = launched.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(10_000)
    seen = _watch(page)
    page.goto(out.as_uri())
    run = page.locator("section.run").first
    expect(run.locator(".badge").first).to_have_text("VETO")
    veto = run.locator(".why-box dd").nth(1)
    expect(veto).to_contain_text("editable_paths violated at e8 (turn 3, rule scope:editable_paths)")
    expect(veto).to_contain_text("is outside ['src/dates.py']")

    # The finding's evidence link goes to its event, which is pinned back to the finding.
    row = run.locator("tr.finding.is-veto")
    row.locator("a.ev-link").click()
    event = run.locator("li.event:target")
    expect(event).to_have_attribute("data-event", "e8")
    expect(event).to_be_in_viewport()
    expect(event.locator("a.pin.v-violated")).to_contain_text("violated: editable_paths (scope:editable_paths)")
    event.locator("a.pin.v-violated").click()
    expect(page.locator("tr.finding:target")).to_have_attribute("data-verdict", "violated")
    expect(page.locator("li.event.in-slice")).to_have_count(3)

    # A link into a collapsed trace opens it: close the passing run's first window, then follow its pin.
    clean = page.locator("section.run").nth(1)
    clean.locator("details.trace").first.evaluate("d => d.open = false")
    clean.locator("a.ev-link").first.click()
    expect(clean.locator("li.event:target")).to_be_visible()

    # Hide what was upheld: only the findings that are not remain.
    page.locator("#only-problems").check()
    expect(run.locator("tr.finding.v-upheld")).to_be_hidden()
    expect(run.locator("tr.finding.v-violated").first).to_be_visible()

    assert seen["requests"] == [out.as_uri()], "the page fetched something"
    assert seen["errors"] == [] and seen["console"] == [], seen


@pytest.fixture
def reports(tmp_path) -> dict[str, Path]:
    """Graded before the browser starts (Playwright's sync API runs an event loop; grading runs its own)."""
    return make_reports(tmp_path)


@pytest.mark.slow
def test_judge_view_serves_an_index_and_each_report_page(reports, browser):
    from judge.service.viewer import create_viewer_app

    launched, expect = browser
    paths = reports
    with live_server(create_viewer_app(paths["reports"])) as url:
        page = launched.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(10_000)
        seen = _watch(page)
        page.goto(url + "/")
        expect(page.locator("table.reports tbody tr")).to_have_count(1)
        expect(page.locator(".notice")).to_contain_text("notes.json: not a grade or suite report")
        page.locator("table.reports a").click()
        expect(page).to_have_url(re.compile(r"/report/drift\.json$"))
        run = page.locator("section.run")
        expect(run.locator("h2")).to_contain_text(f"checkout-firefox / {RUN}")
        # The replayed judge's rationale and the advisory judge's calibration status are shown.
        expect(page.locator(".judge-box")).to_contain_text("replay")
        expect(run.locator(".rationale").first).to_be_visible()
        expect(run.locator("tr.finding.v-judge-error")).to_have_count(1)
        # The trace was found beside the report (../runs/drift.jsonl) and its events are pinned.
        expect(run.locator("li.event.is-pinned").first).to_be_visible()
        page.locator("a", has_text="all reports").click()
        expect(page).to_have_url(url + "/")
        assert all(u.startswith(url) for u in seen["requests"]), seen["requests"]
        assert seen["errors"] == [] and seen["console"] == [], seen
