"""`judge view DIR`: a small loopback web app with an index of every grade and suite report under a
folder, each rendered as the page `judge grade --html` writes (judge.render.html).

Only GET. A report is served only when it is one of the files the index lists (a path in the URL
cannot reach anything else), its traces are looked for beside it, and every page carries the
renderer's Content-Security-Policy as a header too. Host headers other than the loopback names are
answered 400 (a page elsewhere cannot read the reports through a DNS name pointed at 127.0.0.1).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from judge.model import GradeReport
from judge.render import content_security_policy, grade_page, index_page, run_status, suite_page
from judge.service.http import LOOPBACK_HOSTS, TrustedHosts
from judge.suite import SuiteReport

MAX_REPORT_BYTES = 64 * 1024 * 1024


@dataclass
class Entry:
    path: Path
    rel: str
    signature: tuple[int, int]
    report: GradeReport | SuiteReport | None
    note: str | None = None

    def row(self) -> dict[str, Any]:
        r = self.report
        if isinstance(r, SuiteReport):
            decision = r.release.decision.upper()
            return {"kind": "suite", "runs": r.totals.get("runs", 0), "passed": r.totals.get("passed", 0),
                    "outcome": f"RELEASE {decision}", "title": f"suite {r.suite}"}
        assert r is not None  # index() lists an unreadable file as a note, never as a row
        statuses = [run_status(run) for run in r.runs]
        worst = next((s for s in ("VETO", "FAIL", "INCONCLUSIVE") if s in statuses), "PASS")
        scenarios = sorted({run.scenario for run in r.runs})
        return {"kind": "grade", "runs": len(r.runs), "passed": sum(run.passed for run in r.runs),
                "outcome": worst, "title": ", ".join(scenarios[:4]) + (" ..." if len(scenarios) > 4 else "")}


def load_report(path: Path) -> tuple[GradeReport | SuiteReport | None, str | None]:
    """(the report, None), or (None, why the file is not shown)."""
    try:
        if path.stat().st_size > MAX_REPORT_BYTES:
            return None, f"larger than {MAX_REPORT_BYTES // (1024 * 1024)} MB, not shown"
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        return None, f"not readable as JSON ({type(exc).__name__})"
    if not isinstance(data, dict):
        return None, "not a grade or suite report"
    try:
        if isinstance(data.get("runs"), list):
            return GradeReport.model_validate(data), None
        if isinstance(data.get("scenarios"), list) and "release" in data:
            return SuiteReport.model_validate(data), None
    except ValueError as exc:
        return None, f"not a report of this version of judge ({str(exc).splitlines()[0]})"
    return None, "not a grade or suite report"


class ReportFolder:
    """The reports under a folder, re-read when a file is added, changed or removed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()
        self.entries: dict[str, Entry] = {}

    def scan(self) -> list[Entry]:
        seen: dict[str, Entry] = {}
        for path in sorted(self.folder.rglob("*.json")):
            try:
                st = path.stat()
            except OSError:
                continue
            if not path.is_file():
                continue
            rel = path.relative_to(self.folder).as_posix()
            signature = (st.st_mtime_ns, st.st_size)
            old = self.entries.get(rel)
            if old is not None and old.signature == signature:
                seen[rel] = old
                continue
            report, note = load_report(path)
            seen[rel] = Entry(path, rel, signature, report, note)
        self.entries = seen
        return list(seen.values())

    def index(self) -> str:
        rows, notes = [], []
        for entry in self.scan():
            if entry.report is None:
                notes.append(f"{entry.rel}: {entry.note}")
                continue
            rows.append({"href": "/report/" + quote(entry.rel), "path": entry.rel, **entry.row()})
        return index_page(rows, str(self.folder), notes)

    def page(self, rel: str) -> str | None:
        entry = next((e for e in self.scan() if e.rel == rel and e.report is not None), None)
        if entry is None:
            return None
        # Beside the report and up to two folders above it: a run log's report (.judge/runs/x.json)
        # names its traces relative to the project folder it was graded in.
        places = [entry.path.parent, *list(entry.path.parent.parents)[:2], self.folder]
        if isinstance(entry.report, SuiteReport):
            manifest = Path(entry.report.manifest)
            places.insert(0, manifest.parent if manifest.is_absolute() else Path.cwd() / manifest.parent)
            return suite_page(entry.report, places=places, check_sha256=True, source=entry.rel, index_href="/")
        assert entry.report is not None  # chosen among the readable entries above
        return grade_page(entry.report, places=places, check_sha256=True, source=entry.rel, index_href="/")


def _headers() -> dict[str, str]:
    return {"Content-Security-Policy": content_security_policy() + "; frame-ancestors 'none'",
            "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store"}


def create_viewer_app(folder: str | Path) -> FastAPI:
    """The app `judge view` serves: `/` (the index) and `/report/PATH` (one report's page)."""
    reports = ReportFolder(Path(folder))
    app = FastAPI(title="judge view", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(TrustedHosts, hosts=tuple(LOOPBACK_HOSTS))  # as `judge serve` on loopback

    @app.get("/", response_class=HTMLResponse)
    async def index() -> HTMLResponse:
        return HTMLResponse(await run_in_threadpool(reports.index), headers=_headers())

    @app.get("/report", include_in_schema=False)
    async def no_report() -> RedirectResponse:
        return RedirectResponse("/")

    @app.get("/report/{rel:path}", response_class=HTMLResponse)
    async def report(rel: str) -> HTMLResponse:
        html = await run_in_threadpool(reports.page, rel)
        if html is None:
            raise HTTPException(404, f"no report {rel!r} in the folder")
        return HTMLResponse(html, headers=_headers())

    return app
