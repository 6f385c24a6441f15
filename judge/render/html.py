"""A graded run as one self-contained HTML page: `judge grade --html`, `judge suite --html` and the
pages `judge view` serves.

Per run: the outcome, the veto's cause, the first divergence, each checkpoint's findings (with the
judge's rationale, raw and calibrated confidence and why it was binding or advisory) and the trace as
a timeline (judge.review.timeline: read through the redacting reader, bounded), each finding pinned
to its evidence event and the slice highlighted.

Trace text is hostile: the Jinja2 templates (package data beside this module) autoescape every
value; the page's only style and script are our own files, inlined and allowed by their sha256 in a
Content-Security-Policy meta tag that allows nothing else (no network, no inline handlers, no
frames, no forms). Event ids never become HTML ids: anchors are built from positions.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.model import GradeReport, RunReport
from judge.render.fingerprint import JudgeFields, judge_label
from judge.render.report import divergence_text, run_status, veto_text
from judge.review.timeline import EventView, Limits, Timeline, run_timeline

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
REDACTED = re.compile(r"\[REDACTED:[A-Za-z_]+(?:#\d+)?\]")
SOURCE = {"deterministic": "rule", "judge": "judge"}
# Beyond this many runs on one page, passing runs are listed without their details.
MAX_DETAILED_RUNS = 200
# Events shown on one page at most, shared by its runs (each gets at least MIN_RUN_EVENTS).
PAGE_EVENTS = 20_000
MIN_RUN_EVENTS = 60


@dataclass
class Pin:
    anchor: str
    key: str
    verdict: str
    rule: str | None


@dataclass
class RunView:
    """What the template shows of one run (a RunReport, or a suite's RunResult without findings)."""

    n: int
    run: Any
    scenario: str
    status: str
    timeline: Timeline | None
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    anchors: dict[str, str] = field(default_factory=dict)   # event id -> anchor of its shown event
    pins: dict[str, list[Pin]] = field(default_factory=dict)  # event id -> findings pinned to it
    detailed: bool = True
    result: Any = None  # a suite's RunResult, beside the full report when there is one
    veto_detail: str | None = None        # what the vetoing finding says broke
    divergence_detail: str | None = None  # what the first divergence's finding says broke

    @property
    def anchor(self) -> str:
        return f"run-{self.n}"


# ---------------------------------------------------------------- the Jinja2 environment


def _redacted(text: Any) -> Any:
    """Escape `text` and mark each redaction marker as redacted."""
    from markupsafe import Markup, escape

    text = "" if text is None else str(text)
    out, last = [], 0
    for m in REDACTED.finditer(text):
        out += [escape(text[last:m.start()]),
                Markup('<span class="redacted" title="redacted when the trace was read">{}</span>').format(m.group())]
        last = m.end()
    out.append(escape(text[last:]))
    return Markup("").join(out)


@functools.cache
def _environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"], default=True),
                      trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined)
    env.filters["redacted"] = _redacted
    env.filters["num"] = lambda v, d=2: "-" if v is None else f"{v:.{d}f}"
    env.filters["pct"] = lambda v: "n/a" if v is None else f"{v:.0%}"
    return env


@functools.cache
def _assets() -> tuple[str, str, str]:
    """(css, js, the Content-Security-Policy allowing exactly them)."""
    css = (TEMPLATES / "page.css").read_text(encoding="utf-8")
    js = (TEMPLATES / "page.js").read_text(encoding="utf-8")
    for name, text, tag in (("page.css", css, "</style"), ("page.js", js, "</script")):
        if tag in text.lower():  # pragma: no cover - our own files
            raise ValueError(f"{name} must not contain {tag}")

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"

    csp = (f"default-src 'none'; style-src {digest(css)}; script-src {digest(js)}; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    return css, js, csp


def content_security_policy() -> str:
    """The policy of every page (also sent as a header by `judge view`)."""
    return _assets()[2]


def _page(template: str, title: str, **context: Any) -> str:
    from markupsafe import Markup

    css, js, csp = _assets()
    return _environment().get_template(template).render(
        title=title, css=Markup(css), js=Markup(js), csp=csp, **context)


# ---------------------------------------------------------------- runs


def _judge_view(judge: JudgeFields | None) -> dict[str, Any]:
    """The judge as every report names it (judge.render.fingerprint); binding or advisory is a tag."""
    if not judge:
        return {"label": judge_label(None), "binding": None, "reason": None, "record": None}
    return {"label": judge_label({k: v for k, v in judge.items() if k != "binding"}), "binding": judge.get("binding"),
            "authority": judge.get("authority"), "reason": judge.get("binding_reason"),
            "record": _relative(judge.get("calibration_record"))}


def _relative(path: str | None) -> str | None:
    """A path under the working directory as relative to it (the page is the same in any clone)."""
    if not path:
        return path
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path


def _checkpoints(view: RunView) -> None:
    previous = -1
    for c, cp in enumerate(getattr(view.run, "checkpoints", None) or []):
        findings = []
        for i, f in enumerate(cp.findings):
            anchor = f"r{view.n}-f{c}-{i}"
            findings.append({"f": f, "anchor": anchor, "source": SOURCE.get(f.source or "", "-"),
                             "divergence": _is(view.run.first_divergence, f), "veto": _is(view.run.veto, f)})
            if f.evidence_event:
                view.pins.setdefault(f.evidence_event, []).append(Pin(anchor, f.key, f.verdict, f.rule))
        bad = sum(f.verdict in ("violated", "flagged", "judge-error") for f in cp.findings)
        view.checkpoints.append({"cp": cp, "from_turn": previous + 1, "findings": findings, "bad": bad,
                                 "window": view.timeline.windows[c] if view.timeline and c < len(view.timeline.windows)
                                 else None})
        previous = cp.after_turn


def _is(marker: Any, f: Any) -> bool:
    return marker is not None and f.verdict == "violated" and f.key in (getattr(marker, "keys", None) or [marker.key]) \
        and f.evidence_event == marker.event


def run_view(n: int, run: Any, *, scenario: str | None = None, places: Sequence[Path] = (),
             limits: Limits = Limits(), detailed: bool = True, check_sha256: bool = False,
             scenario_file: str | None = None) -> RunView:
    """A run as the page shows it; `detailed` False: its summary line only (no trace is read).
    `scenario_file`: where the run's scenario is (a suite report names it), for its no-leak values."""
    status = run_status(run) if isinstance(run, RunReport) else _suite_status(run)
    scenario = scenario or run.scenario
    timeline = run_timeline(run, scenario=scenario, places=places, limits=limits, check_sha256=check_sha256,
                            scenario_file=scenario_file) if detailed else None
    view = RunView(n, run, scenario, status, timeline, detailed=detailed)
    if timeline is not None:
        for w in timeline.windows:
            for item in w.items:
                if isinstance(item, EventView):
                    view.anchors.setdefault(item.id, f"r{n}-e{item.index}")
    _checkpoints(view)
    for c in view.checkpoints:
        for x in c["findings"]:
            said = x["f"].detail or x["f"].rationale
            if x["veto"] and view.veto_detail is None:
                view.veto_detail = said
            if x["divergence"] and view.divergence_detail is None:
                view.divergence_detail = said
    for marker in (run.veto, run.first_divergence):
        if marker is not None and marker.event and marker.event not in view.pins:
            view.pins[marker.event] = []
    return view


def _suite_status(result: Any) -> str:
    return {"passed": "PASS", "vetoed": "VETO", "inconclusive": "INCONCLUSIVE", "error": "ERROR",
            "missing": "MISSING"}.get(result.status, "FAIL")


def _texts(run: Any) -> dict[str, str | None]:
    return {"veto": veto_text(run) if run.veto is not None else None,
            "divergence": divergence_text(run) if run.first_divergence is not None else None}


def _tally(runs: list[Any]) -> str:
    passed = sum(bool(r.passed) for r in runs)
    undecided = sum(getattr(r, "outcome", None) == "inconclusive" for r in runs)
    return f"{passed}/{len(runs)} runs passed" + (f", {undecided} inconclusive" if undecided else "")


def page_limits(limits: Limits, detailed: int) -> Limits:
    """Each run's share of the page's event budget, so that many runs still make a bounded page."""
    share = max(MIN_RUN_EVENTS, PAGE_EVENTS // max(1, detailed))
    return dataclasses.replace(limits, whole=min(limits.whole, share), max_events=min(limits.max_events, share))


def _order(runs: list[Any]) -> list[int]:
    """Run positions, the ones that did not pass first (they get the details when there are many)."""
    return sorted(range(len(runs)), key=lambda i: (bool(runs[i].passed), i))


def grade_page(report: GradeReport, *, places: Sequence[Path] = (), limits: Limits = Limits(),
               check_sha256: bool = False, source: str | None = None, index_href: str | None = None) -> str:
    """The page of a grade report. `places`: folders to look for its traces in (besides the
    working directory); `source`: the report file it came from, shown in the header;
    `index_href`: a link back to the list of reports (`judge view`)."""
    detailed = set(_order(report.runs)[:MAX_DETAILED_RUNS])
    limits = page_limits(limits, len(detailed))
    views = [run_view(n, run, places=places, limits=limits, detailed=n in detailed, check_sha256=check_sha256)
             for n, run in enumerate(report.runs)]
    title = (f"{report.runs[0].scenario} / {report.runs[0].run_id}" if len(report.runs) == 1
             else f"{len(report.runs)} runs")
    return _page("grade.html", f"{title} · judge", report=report, runs=views, judge=_judge_view(report.judge),
                 tally=_tally(report.runs), texts=_texts, source=source, limits=limits, index_href=index_href)


def suite_page(report: Any, run_reports: dict[str, RunReport] | None = None, *, places: Sequence[Path] = (),
               limits: Limits = Limits(), check_sha256: bool = False, source: str | None = None,
               index_href: str | None = None) -> str:
    """The page of a suite report (judge.suite.result.SuiteReport). `run_reports`: the full grade
    report of each run by trace path (`judge suite --html` keeps them), which adds each checkpoint's
    findings; without them (a suite JSON report) a run shows its outcome, veto, first divergence and
    the trace around them."""
    run_reports = run_reports or {}
    flat = [(s, r) for s in report.scenarios for r in s.results]
    detailed = set(_order([r for _, r in flat])[:MAX_DETAILED_RUNS])
    limits = page_limits(limits, len(detailed))
    groups: list[dict[str, Any]] = []
    n = 0
    for s in report.scenarios:
        views = []
        for r in s.results:
            full = run_reports.get(r.trace or "")
            show = n in detailed and r.status not in ("missing", "error")
            view = run_view(n, full or r, scenario=s.id, places=places, limits=limits, detailed=show,
                            check_sha256=check_sha256, scenario_file=getattr(s, "file", None))
            view.result = r
            views.append(view)
            n += 1
        groups.append({"s": s, "runs": views})
    return _page("suite.html", f"suite {report.suite} · judge", report=report, groups=groups,
                 judge=_judge_view(report.judge), texts=_texts, source=source, limits=limits,
                 index_href=index_href)


def index_page(entries: list[dict[str, Any]], folder: str, notes: list[str]) -> str:
    """`judge view`'s index: one row per report file (`href`, `path`, `kind`, `runs`, `passed`,
    `outcome`, `title`)."""
    return _page("index.html", f"reports in {folder} · judge", entries=entries, folder=folder, notes=notes)


def corpus_page(report: Any, *, source: str | None = None, index_href: str | None = None) -> str:
    """The page of a corpus report (judge.model.CorpusReport): each policy key's violation rate with its
    interval and how it was computed, and the sample of failing runs with their first divergence and slice."""
    return _page("corpus.html", f"corpus · {Path(report.policy).stem} · judge", report=report,
                 judge=_judge_view(report.judge.model_dump(mode="json") if report.judge else None),
                 source=source, index_href=index_href)
