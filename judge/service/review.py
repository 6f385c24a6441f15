"""The review page (`/review`) and its small JSON API, served by the HTTP service.

`GET /review` renders the queue (judge/review/queue.py) with judge/service/templates/review.html;
`POST /review/api/labels` appends one answer to the labels JSONL (judge/review_labels.py);
`GET /review/api/queue` is the same queue as JSON. The queue is rebuilt when a report file changes.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse, HTMLResponse
from starlette.concurrency import run_in_threadpool

from judge.review import (
    Answer,
    LabelStore,
    ReviewItem,
    build_queue,
    in_conflict,
    label_row,
    relative_trace,
    report_files,
)

HERE = Path(__file__).resolve().parent
STATIC = {"review.css": "text/css; charset=utf-8", "review.js": "text/javascript; charset=utf-8"}


class ReviewState:
    """The queue of a reports folder, rebuilt when a report file is added, changed or removed."""

    def __init__(self, reports_dir: Path | None, labels_path: Path | None, scenarios: list[Path],
                 annotator: str | None) -> None:
        self.reports_dir = reports_dir
        self.store = LabelStore(labels_path) if labels_path is not None else None
        self.scenarios = scenarios
        self.annotator = annotator or os.environ.get("JUDGE_ANNOTATOR") or os.environ.get("USER") or ""
        self._lock = threading.Lock()
        self._signature: tuple | None = None
        self._items: list[ReviewItem] = []
        self._notes: list[str] = []

    def _current_signature(self) -> tuple:
        if self.reports_dir is None or not self.reports_dir.is_dir():
            return ()
        out = []
        for path in report_files(self.reports_dir):
            try:
                st = path.stat()
            except OSError:
                continue
            out.append((str(path), st.st_mtime_ns, st.st_size))
        return tuple(out)

    def queue(self) -> tuple[list[ReviewItem], list[str]]:
        """(items, notes); blocking, run it in a worker thread."""
        with self._lock:
            signature = self._current_signature()
            if signature != self._signature:
                if self.reports_dir is None:
                    self._items, self._notes = [], []
                elif not self.reports_dir.is_dir():
                    self._items, self._notes = [], [f"reports folder {self.reports_dir} does not exist"]
                else:
                    self._items, self._notes = build_queue(self.reports_dir, scenarios=self.scenarios)
                self._signature = signature
            return self._items, self._notes

    def item(self, case: str) -> ReviewItem | None:
        return next((i for i in self.queue()[0] if i.case == case), None)

    def record(self, answer: Answer) -> dict[str, Any]:
        if self.store is None:
            raise HTTPException(409, "this server runs without --labels FILE: answers cannot be recorded")
        item = self.item(answer.case)
        if item is None:
            raise HTTPException(404, f"case {answer.case!r} is not in the review queue")
        if answer.label == "violated":
            if answer.evidence_event is None:
                raise HTTPException(422, "a violated label needs its evidence event (press e or click an event)")
            if item.events and answer.evidence_event not in item.event_ids:
                raise HTTPException(422, f"evidence event {answer.evidence_event!r} is not in the slice of "
                                         f"{item.case} (turns {item.from_turn}..{item.after_turn})")
        row = label_row(answer, scenario=item.scenario, after_turn=item.after_turn, key=item.key,
                        trace=relative_trace(item, self.store.path))
        self.store.append(row)
        return case_state(item.case, self.store.by_case().get(item.case, []))


def case_state(case: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"case": case, "labels": rows, "conflict": in_conflict(rows)}


def _item_json(item: ReviewItem, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"case": item.case, "scenario": item.scenario, "run_id": item.run_id,
            "after_turn": item.after_turn, "from_turn": item.from_turn, "key": item.key,
            "reasons": item.reasons, "finding": item.finding, "deterministic": item.deterministic,
            "report_file": item.report_file, "trace": item.trace,
            "trace_path": str(item.trace_path) if item.trace_path else None,
            "events": [vars(e) for e in item.events], "events_note": item.events_note,
            "entry": item.entry, "entry_note": item.entry_note,
            "scenario_file": str(item.scenario_file) if item.scenario_file else None,
            **case_state(item.case, rows)}


def _environment():
    import json

    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["show"] = lambda v: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return env


def review_router(*, reports_dir: str | Path | None, labels_path: str | Path | None, scenarios: list[Path],
                  annotator: str | None) -> APIRouter:
    state = ReviewState(Path(reports_dir) if reports_dir else None,
                        Path(labels_path) if labels_path else None, scenarios, annotator)
    env = _environment()
    router = APIRouter(tags=["review"])

    def snapshot() -> tuple[list[dict[str, Any]], list[str]]:
        items, notes = state.queue()
        labels = state.store.by_case() if state.store is not None else {}
        return [_item_json(i, labels.get(i.case, [])) for i in items], notes

    @router.get("/review", response_class=HTMLResponse)
    async def page() -> HTMLResponse:
        """The review queue: findings marked needs_review, disagreement, judge-error or flagged."""
        items, notes = await run_in_threadpool(snapshot)
        html = env.get_template("review.html").render(
            items=items, notes=notes, annotator=state.annotator,
            reports_dir=str(state.reports_dir) if state.reports_dir else None,
            labels_path=str(state.store.path) if state.store else None,
            labelled=sum(1 for i in items if i["labels"]), conflicts=sum(1 for i in items if i["conflict"]))
        return HTMLResponse(html, headers={"Cache-Control": "no-store"})

    @router.get("/review/api/queue")
    async def queue() -> dict[str, Any]:
        """The review queue as JSON, with each case's labels and conflict flag."""
        items, notes = await run_in_threadpool(snapshot)
        return {"items": items, "notes": notes,
                "labels": str(state.store.path) if state.store else None}

    @router.post("/review/api/labels")
    async def answer(body: Answer) -> dict[str, Any]:
        """Append one answer to the labels JSONL; returns the case's labels and conflict flag."""
        return await run_in_threadpool(state.record, body)

    @router.get("/review/static/{name}", include_in_schema=False)
    def static(name: str) -> FileResponse:
        if name not in STATIC:
            raise HTTPException(404, "not found")
        return FileResponse(HERE / "static" / name, media_type=STATIC[name])

    return router
