"""/docs (Swagger UI) and /redoc work with no network: every asset comes from the files the
fastapi-offline package ships, served by the app itself; checked in Chromium with every request off
the server refused."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from fastapi.testclient import TestClient
from review_data import live_server

from judge.service import create_app

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_docs_pages_name_only_assets_the_app_serves(path):
    client = TestClient(create_app(token=""), base_url="http://127.0.0.1")  # a loopback Host: the only kind it answers
    page = client.get(path)
    assert page.status_code == 200
    urls = re.findall(r'(?:src|href)="([^"]+)"', page.text) + re.findall(r"url: '([^']+)'", page.text)
    assert urls and not [u for u in urls if urlparse(u).scheme]  # no CDN, nothing absolute
    for url in urls:
        assert client.get(url).status_code == 200, url


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_swagger_ui_renders_in_chromium_with_the_network_cut_off(monkeypatch):
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the playwright package (the test extra)")
    monkeypatch.delenv("JUDGE_API_TOKEN", raising=False)
    outside: list[str] = []
    with live_server(create_app(token="")) as url, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            page = browser.new_page()
            here = urlparse(url).netloc

            def only_this_server(route):
                if urlparse(route.request.url).netloc == here:
                    route.continue_()
                else:
                    outside.append(route.request.url)
                    route.abort()

            page.route("**/*", only_this_server)
            page.goto(f"{url}/docs")
            sync_api.expect(page.locator(".swagger-ui .info .title")).to_contain_text("judge", timeout=15_000)
            sync_api.expect(page.locator("#operations-grading-grade_v1_grade_post")).to_be_visible()
        finally:
            browser.close()
    assert outside == []
