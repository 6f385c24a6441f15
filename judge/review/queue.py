"""The review queue: findings of saved grade reports that a person should look at.

A finding is queued when it is marked `needs_review` or `disagreement`, or its verdict is
`judge-error` or `flagged` (a judge that is not binding said violated where no rule ruled). Reports are the files
`judge grade --json` writes (every `*.json` under a folder). For
each queued finding the queue shows what it can find, and says what it could not:

- the trace slice: the events of the checkpoint's window (the turns after the previous checkpoint up
  to this one), read from the trace file the run's `trace` field names (as given to the CLI: tried as
  is, from the working directory, and from the report's folder and its parent), redacted as it is read;
- the ledger entry: from the scenario file with the run's scenario id, looked for in the `scenarios`
  folders, beside the trace and in the trace's parent folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError

MAX_EVENTS = 400  # events shown per item; the evidence events are always shown
MAX_TEXT = 2000


@dataclass
class SliceEvent:
    id: str
    turn: int
    kind: str
    text: str


@dataclass
class ReviewItem:
    case: str  # scenario/run_id/after_turn/key: the label's case id
    scenario: str
    run_id: str
    after_turn: int
    from_turn: int
    key: str
    reasons: list[str]
    finding: dict[str, Any]
    report_file: str
    trace: str | None  # as the report names it
    trace_path: Path | None = None
    events: list[SliceEvent] = field(default_factory=list)
    events_note: str | None = None
    entry: dict[str, Any] | None = None
    entry_note: str | None = None
    scenario_file: Path | None = None
    run: dict[str, Any] | None = field(default=None, repr=False)  # the report's run (provenance, redactions)

    @property
    def event_ids(self) -> list[str]:
        return [e.id for e in self.events]

    @property
    def deterministic(self) -> dict[str, Any] | None:
        """The rules' result on this key, where a rule guards it."""
        f = self.finding
        if f.get("source") == "deterministic":
            return {"verdict": f.get("verdict"), "rule": f.get("rule"), "detail": f.get("detail"),
                    "evidence_event": f.get("evidence_event")}
        detail = f.get("detail") or ""
        if f.get("source") == "judge" and detail.startswith("rule said "):
            verdict, _, rest = detail[len("rule said "):].partition(": ")
            return {"verdict": verdict, "rule": None, "detail": rest, "evidence_event": None}
        return None


def reasons_of(finding: dict[str, Any]) -> list[str]:
    reasons = []
    if finding.get("verdict") == "judge-error":
        reasons.append("judge error")
    if finding.get("verdict") == "flagged":
        reasons.append("flagged by an advisory judge")
    if finding.get("disagreement"):
        reasons.append("disagreement")
    if finding.get("needs_review") and not reasons:  # implied by the other two
        reasons.append("needs review")
    return reasons


def report_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json") if p.is_file())


def _load_report(path: Path) -> dict[str, Any] | None:
    from judge.model.limits import DepthError, loads_json, read_capped

    try:
        data = loads_json(read_capped(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, DepthError):  # a file that is no report: left out
        return None
    return data if isinstance(data, dict) and isinstance(data.get("runs"), list) else None


def build_queue(reports_dir: Path, *, scenarios: Iterable[Path] = ()) -> tuple[list[ReviewItem], list[str]]:
    """Every queued finding of the reports under `reports_dir` (one item per case: a case found in
    several reports comes from the newest file), and notes on files that are not grade reports."""
    notes: list[str] = []
    by_case: dict[str, ReviewItem] = {}
    files = sorted(report_files(reports_dir), key=lambda p: p.stat().st_mtime_ns)
    for path in files:
        report = _load_report(path)
        if report is None:
            notes.append(f"{path.name}: not a grade report (judge grade --json), skipped")
            continue
        for run in report["runs"]:
            for item in _run_items(run, path):
                by_case[item.case] = item
    items = sorted(by_case.values(), key=lambda i: (i.scenario, i.run_id, i.after_turn, i.key))
    finder = _ScenarioFinder(list(scenarios))
    for item in items:
        _attach_trace(item, reports_dir, finder)
        _attach_entry(item, finder)
    return items, notes


def _run_items(run: dict[str, Any], path: Path) -> list[ReviewItem]:
    items = []
    previous = -1
    for cp in run.get("checkpoints", []):
        after = cp.get("after_turn", 0)
        for finding in cp.get("findings", []):
            reasons = reasons_of(finding)
            if reasons:
                case = f"{run.get('scenario')}/{run.get('run_id')}/{after}/{finding.get('key')}"
                items.append(ReviewItem(
                    case=case, scenario=str(run.get("scenario")), run_id=str(run.get("run_id")),
                    after_turn=after, from_turn=previous + 1, key=str(finding.get("key")),
                    reasons=reasons, finding=finding, report_file=str(path), trace=run.get("trace"), run=run))
        previous = after
    return items


def resolve_trace(trace: str | None, report_file: Path, reports_dir: Path) -> Path | None:
    if not trace:
        return None
    given = Path(trace)
    places = [given] if given.is_absolute() else [
        Path.cwd() / given, report_file.parent / given, reports_dir / given, report_file.parent.parent / given]
    return next((p.resolve() for p in places if p.is_file()), None)


def _attach_trace(item: ReviewItem, reports_dir: Path, finder: _ScenarioFinder | None = None) -> None:
    from judge.review.hidden import run_hidden
    from judge.trace import TraceReader

    item.trace_path = resolve_trace(item.trace, Path(item.report_file), reports_dir)
    if item.trace_path is None:
        item.events_note = f"trace file {item.trace!r} not found: showing what the report holds"
        return
    places = [Path(item.report_file).parent, reports_dir, item.trace_path.parent, item.trace_path.parent.parent]
    hidden, withheld = run_hidden(item.run or {"scenario": item.scenario}, places,
                                  (lambda sid: finder.find(sid, item.trace_path)) if finder else None)
    if withheld is not None:
        item.events_note = withheld
        return
    evidence = {item.finding.get("evidence_event"), (item.deterministic or {}).get("evidence_event")} - {None}
    total = 0
    try:
        reader = TraceReader(item.trace_path, expected_scenario=item.scenario, hidden=hidden)
        for event in reader:
            if event.turn < item.from_turn:
                continue
            if event.turn > item.after_turn:
                break
            total += 1
            if len(item.events) < MAX_EVENTS or event.id in evidence:
                item.events.append(SliceEvent(event.id, event.turn, event.kind, event_text(event)))
    except JudgeInputError as exc:
        item.events_note = f"cannot read the trace: {exc}"
        return
    if total > len(item.events):
        item.events_note = f"the window holds {total} events; showing {len(item.events)} (the first " \
                           f"{MAX_EVENTS} and the evidence)"


def event_text(event: Any) -> str:
    """One readable line of an event (already redacted)."""
    kind = event.kind
    if kind in ("user", "assistant"):
        text = event.text
    elif kind == "tool-call":
        text = f"{event.tool}({_compact(event.args)})"
    elif kind == "tool-result":
        text = f"{event.tool or event.call_id} -> {event.status}: {_compact(event.result)}"
    elif kind == "state-write":
        text = f"{event.key} = {_compact(event.value)}"
    elif kind == "summary":
        text = f"[{event.reason}{' to ' + event.to if event.to else ''}] {event.text}"
    elif kind == "snapshot":
        text = f"{event.phase or ''} {event.ref} {_compact(event.state) if event.state else ''}".strip()
    else:  # pragma: no cover - the model knows every kind
        text = kind
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


class _ScenarioFinder:
    """Scenario files by id, each folder read once per queue build."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders
        self._ids: dict[Path, dict[str, Path]] = {}
        self._ledgers: dict[Path, Any] = {}

    def _index(self, folder: Path) -> dict[str, Path]:
        if folder not in self._ids:
            from judge.ledger.fixture import read_structured

            found: dict[str, Path] = {}
            files = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml"), *folder.glob("*.json")]) \
                if folder.is_dir() else []
            for candidate in files:
                try:
                    data, _ = read_structured(candidate)
                except JudgeInputError:
                    continue
                if isinstance(data, dict) and isinstance(data.get("id"), str) and "ledger" in data:
                    found.setdefault(data["id"], candidate)
            self._ids[folder] = found
        return self._ids[folder]

    def find(self, scenario_id: str, trace: Path | None) -> Path | None:
        folders = [*self.folders, *((trace.parent, trace.parent.parent) if trace else ())]
        for folder in folders:
            hit = self._index(folder.resolve()).get(scenario_id)
            if hit is not None:
                return hit
        return None

    def ledger(self, path: Path):
        if path not in self._ledgers:
            from judge.ledger import load_ledger

            self._ledgers[path] = load_ledger(path)
        return self._ledgers[path]


def _attach_entry(item: ReviewItem, finder: _ScenarioFinder) -> None:
    path = finder.find(item.scenario, item.trace_path)
    if path is None:
        item.entry_note = (f"no scenario file with id {item.scenario!r} beside the trace "
                           "(judge serve --scenarios DIR): showing what the report holds")
        return
    try:
        ledger = finder.ledger(path)
    except JudgeInputError as exc:
        item.entry_note = f"cannot read the scenario: {exc}"
        return
    item.scenario_file = path
    entry = next((e for e in ledger.expected_ledger_at(item.after_turn) if e.key == item.key), None)
    if entry is None:
        item.entry_note = f"{path.name} has no entry {item.key!r} at turn {item.after_turn}"
        return
    item.entry = {"key": entry.key, "class": entry.class_, "value": entry.value, "status": entry.status,
                  "sensitivity": entry.sensitivity, "persistence": entry.persistence,
                  "source_turn": entry.source_turn, "description": entry.description,
                  "superseded": [{"value": v, "replaced_at": t} for v, t in entry.superseded]}


def relative_trace(item: ReviewItem, labels_file: Path) -> str | None:
    """The trace path as a label names it: relative to the labels file's folder (`../runs/x.jsonl`
    from a project's labels/), as the label format has it, so the labels move with the project;
    never absolute (only a trace on another drive, on Windows, cannot be named so)."""
    if item.trace_path is None:
        return item.trace
    folder = labels_file.resolve().parent
    try:
        return Path(os.path.relpath(item.trace_path, folder)).as_posix()
    except ValueError:  # another drive (Windows)
        return str(item.trace_path)
