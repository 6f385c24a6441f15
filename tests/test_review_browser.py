"""The review page in a real browser: Playwright drives Debian's chromium (headless) against a live
server started here; two cases are labelled with the keyboard and the labels JSONL is checked.

Set JUDGE_REVIEW_SCREENSHOT=docs/review.png to also save the screenshot the README shows.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from review_data import live_server, make_reports

from judge.service import create_app

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium "
                                "(apt-get install chromium chromium-driver; .ci/run does)")


@pytest.fixture(autouse=True, scope="module")
def _no_token_in_the_environment():
    """create_app() reads JUDGE_API_TOKEN: these tests choose their token themselves."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("JUDGE_API_TOKEN", raising=False)
        yield


@pytest.mark.slow
def test_label_two_cases_with_the_keyboard(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package (the test extra)")
    paths = make_reports(tmp_path)
    labels = paths["labels"]
    app = create_app(reports_dir=paths["reports"], labels_path=labels, annotator="reviewer-a")
    errors: list[str] = []
    with live_server(app) as url, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1360, "height": 900})
            page.set_default_timeout(10_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{url}/review")
            expect = sync_api.expect
            items = page.locator("article.item")
            expect(items).to_have_count(5)

            # The first case (a judge error on `goal` after turn 3) is open: answer "upheld".
            first = items.nth(0)
            expect(first).to_be_visible()
            expect(first).to_contain_text("model timed out")
            page.keyboard.press("u")
            expect(page.locator("#q-0")).to_have_class(_has("is-labelled"))

            # The page moved on to the next open case: the rule's evidence (e10) is picked.
            second = items.nth(1)
            expect(second).to_be_visible()
            expect(second.locator("tr.is-rule-evidence")).to_have_attribute("data-event", "e10")
            out = second.locator("[data-evidence-out]")
            expect(out).to_have_text("e10")
            page.keyboard.press("e")
            expect(out).to_have_text("e11")
            page.keyboard.press("E")
            expect(out).to_have_text("e10")
            expect(second.locator("tr.is-picked")).to_have_attribute("data-event", "e10")
            page.keyboard.press("t")
            page.keyboard.type("ran chromium; unchanged by the correction")  # u and n must type, not label
            page.keyboard.press("Escape")
            page.keyboard.press("v")
            expect(page.locator("#q-1")).to_have_class(_has("is-labelled"))
            expect(page.locator("#count-labelled")).to_have_text("2")
            expect(items.nth(2)).to_be_visible()

            # Back to the second case and a contrary answer: kept, and flagged as a conflict.
            page.keyboard.press("k")
            expect(second).to_be_visible()
            page.keyboard.press("n")
            expect(page.locator("#q-1")).to_have_class(_has("is-conflict"))
            expect(page.locator("#count-conflicts")).to_have_text("1")
            expect(items.nth(2)).to_be_visible()  # on to the next open case again
            page.keyboard.press("k")
            expect(second.locator("[data-conflict]")).to_be_visible()
            expect(second.locator(".label-list li")).to_have_count(2)

            shot = os.environ.get("JUDGE_REVIEW_SCREENSHOT")
            if shot:
                page.set_viewport_size({"width": 1360, "height": 1000})
                page.evaluate("window.scrollTo(0, 0)")
                page.screenshot(path=shot, full_page=False)
        finally:
            browser.close()
    assert errors == []

    rows = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    base = {"scenario": "checkout-firefox", "trace": "../runs/drift.jsonl", "annotator": "reviewer-a"}
    assert rows[0] == {**base, "case": "checkout-firefox/checkout-drift-01/3/goal", "after_turn": 3,
                       "key": "goal", "label": "upheld", "evidence_event": None, "note": None}
    assert rows[1] == {**base, "case": "checkout-firefox/checkout-drift-01/6/browser", "after_turn": 6,
                       "key": "browser", "label": "violated", "evidence_event": "e10",
                       "note": "ran chromium; unchanged by the correction"}
    assert rows[2]["case"] == rows[1]["case"] and rows[2]["label"] == "not-exercised"
    assert len(rows) == 3


def _has(name: str):
    import re

    return re.compile(rf"(^|\s){re.escape(name)}(\s|$)")
