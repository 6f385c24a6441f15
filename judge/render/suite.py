"""Renderings of a SuiteReport: JSON (the contract), terminal (rich), JUnit XML and Markdown."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from judge.render import style
from judge.render.fingerprint import judge_label as _judge_label
from judge.render.json_text import json_chunks
from judge.suite.result import Comparison, ScenarioResult, Signature, SuiteReport

STATUS_STYLE = {"passed": "green", "failed": "bold red", "vetoed": "bold white on red", "error": "magenta",
                "missing": "magenta", "inconclusive": "bold yellow"}
RELEASE_STYLE = {"fail": "bold white on red", "inconclusive": "bold black on yellow", "pass": "bold white on green"}


def to_json(report: SuiteReport) -> str:
    return "".join(json_chunks(report))  # (written in pieces: judge.render.json_text)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def _ci(s: ScenarioResult) -> str:
    lo, hi = s.pass_rate_ci
    return f"[{lo:.2f}, {hi:.2f}]"


def _sig_label(g: Signature) -> str:
    where = f"{g.key} @ turn {g.turn}" if g.key is not None else "-"
    return f"{where}  {g.consequence}"


def render_terminal(report: SuiteReport, console: Console) -> None:
    t = report.totals
    console.print(Text.assemble(("suite ", "bold"), report.suite, f"  ({report.manifest})",
                                f"  judge: {_judge_label(report.judge)}"))
    # inconclusive, errors and missing only when some scenario has one (the totals line counts them)
    optional = [(name, attr) for name, attr in (("inconclusive", "inconclusive"), ("errors", "errors"),
                                                ("missing", "missing"))
                if any(getattr(s, attr) for s in report.scenarios)]
    table = style.table("scenario", "runs", "passed", "pass rate", f"CI ({report.ci_method})", "vetoed",
                        *(name for name, _ in optional), "quality", "signatures")
    for s in report.scenarios:
        colour = "green" if s.failed == 0 else "red"
        table.add_row(style.cell(s.id), str(s.runs), Text(str(s.passed), colour), _pct(s.pass_rate), _ci(s),
                      str(s.vetoed), *(str(getattr(s, attr)) for _, attr in optional),
                      "n/a" if s.quality_mean is None else f"{s.quality_mean:.3f}", str(len(s.signatures)))
    style.render(console, table)
    for s in report.scenarios:
        if not s.signatures:
            continue
        f = s.flakiness
        console.print(Text.assemble((f"\n{s.id}", "bold"), f": {f.pattern}, {f.distinct_signatures} failure "
                                    f"signature(s); the commonest explains {_pct(f.top_share)} of the failures"))
        sig = style.table("key", "turn", "runs", "share", "example run", note="consequence")
        for g in s.signatures:
            sig.add_row(style.cell(g.key or "-"), "-" if g.turn is None else str(g.turn), str(g.count), _pct(g.share),
                        style.cell(g.example_run), style.cell(g.consequence))
        style.render(console, sig)
        for r in s.results:
            if r.error:
                console.print(Text.assemble((f"  {r.status}: ", STATUS_STYLE[r.status]), f"{r.run_id}: {r.error}"))
    for s in report.scenarios:
        for r in s.results:
            if r.status == "inconclusive":
                console.print(Text.assemble(("inconclusive: ", STATUS_STYLE[r.status]),
                                            f"{s.id} / {r.run_id}: {'; '.join(r.outcome_reasons)}"))
    if report.safety_violations:
        console.print(Text("\nsafety-critical violations", "bold red"))
        for v in report.safety_violations:
            console.print(Padding(Text(f"{v.scenario} / {v.run_id}: {v.key} at turn {v.turn}, event {v.event} "
                                       f"({v.rule})"), (0, 0, 0, 2), expand=False))
    if report.compare is not None:
        render_comparison(report.compare, console)
    for w in report.warnings:
        console.print(Text.assemble(("warning: ", "yellow"), w))
    release = report.release
    console.print()
    console.print(Text.assemble((f" RELEASE {release.decision.upper()} ", RELEASE_STYLE[release.decision]),
                                f"  rule {release.rule}: {release.reason}"))
    console.print(f"{t['passed']}/{t['runs']} runs passed ({t['vetoed']} vetoed, {t.get('inconclusive', 0)} "
                  f"inconclusive, {t['errors']} unreadable, {t['missing']} missing)")


def render_comparison(c: Comparison, console: Console) -> None:
    console.print(Text.assemble(("\ncompared with ", "bold"), c.against))
    if not (c.appeared or c.vanished or c.changed or c.pass_rates):
        console.print("  no signature appeared, vanished or changed count")
    for label, rows, colour in (("appeared", c.appeared, "red"), ("vanished", c.vanished, "green"),
                                ("changed", c.changed, "yellow")):
        for x in rows:
            where = f"{x.key} @ turn {x.turn}" if x.key is not None else "-"
            console.print(Text.assemble((f"  {label:9}", colour), f"{x.scenario}: {where}  {x.consequence}  "
                                        f"({x.old_count} -> {x.new_count} runs)"))
    for p in c.pass_rates:
        console.print(f"  pass rate {p['scenario']}: {_pct(p['old'])} -> {_pct(p['new'])}")


def to_junit(report: SuiteReport) -> str:
    """One testsuite per scenario with a testcase per run (a failure names its signature; an
    unreadable or missing run is an error), and a `release` testsuite with the decision."""
    root = ET.Element("testsuites", name=f"judge suite {report.suite}")
    for s in report.scenarios:
        suite = ET.SubElement(root, "testsuite", name=s.id, tests=str(s.runs),
                              failures=str(s.failed - s.errors - s.missing),
                              errors=str(s.errors + s.missing + s.inconclusive))
        for r in s.results:
            case = ET.SubElement(suite, "testcase", classname=f"{report.suite}.{s.id}", name=r.run_id)
            if r.status in ("error", "missing"):
                ET.SubElement(case, "error", message=r.error or r.status, type=r.status).text = r.error
            elif r.status == "inconclusive":
                text = "\n".join(r.outcome_reasons) or "inconclusive"
                ET.SubElement(case, "error", message=f"inconclusive: {text.splitlines()[0]}",
                              type="inconclusive").text = text
            elif r.status != "passed":
                msg = f"{r.status}: {_failure(r)}"
                ET.SubElement(case, "failure", message=msg, type=r.status).text = msg
    rel = report.release
    suite = ET.SubElement(root, "testsuite", name="release", tests=str(len(rel.checks)),
                          failures=str(sum(not c.held for c in rel.checks)))
    for c in rel.checks:
        case = ET.SubElement(suite, "testcase", classname=f"{report.suite}.release", name=c.rule)
        if not c.held:
            ET.SubElement(case, "failure", message=c.detail, type="release-rule").text = c.detail
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _failure(r) -> str:
    """The veto first (what made the run unreleasable), then the first divergence."""
    parts = []
    v, d = r.veto, r.first_divergence
    if v is not None:
        parts.append(f"veto {', '.join(v.keys or [v.key])} violated at {v.event} "
                     f"(turn {v.turn}, rule {v.rule or 'judge'})")
    if d is not None:
        parts.append(f"first divergence {d.key} at {d.event} (turn {d.turn}, rule {d.rule or 'judge'})")
    return "; ".join(parts) or "run failed"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(report: SuiteReport) -> str:
    r = report.release
    lines = [f"### judge suite `{report.suite}`: release **{r.decision.upper()}** (rule `{r.rule}`)", "",
             _md(r.reason), "", f"Judge: {_judge_label(report.judge)}. Pass-rate interval: {report.ci_method}.", "",
             "| scenario | runs | passed | pass rate | CI | vetoed | inconclusive | unreadable | missing | quality |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s in report.scenarios:
        lines.append(f"| `{s.id}` | {s.runs} | {s.passed} | {_pct(s.pass_rate)} | {_ci(s)} | {s.vetoed} | "
                     f"{s.inconclusive} | {s.errors} | {s.missing} | "
                     f"{'n/a' if s.quality_mean is None else f'{s.quality_mean:.3f}'} |")
    for s in report.scenarios:
        if not s.signatures:
            continue
        lines += ["", f"#### `{s.id}`: {s.flakiness.pattern}", "",
                  "| runs | share | key | turn | consequence | example run |", "|---|---|---|---|---|---|"]
        for g in s.signatures:
            lines.append(f"| {g.count} | {_pct(g.share)} | {g.key or '-'} | {'-' if g.turn is None else g.turn} | "
                         f"{_md(g.consequence)} | `{g.example_run}` |")
        for x in s.results:
            if x.error:
                lines.append(f"\n- {x.status} `{x.run_id}`: {_md(x.error)}")
    undecided = [(s.id, x) for s in report.scenarios for x in s.results if x.status == "inconclusive"]
    if undecided:
        lines += ["", "#### Inconclusive runs", ""]
        lines += [f"- `{sid}` / `{x.run_id}`: {_md('; '.join(x.outcome_reasons))}" for sid, x in undecided]
    if report.safety_violations:
        lines += ["", "#### Safety-critical violations", ""]
        lines += [f"- `{v.scenario}` / `{v.run_id}`: `{v.key}` at turn {v.turn}, event `{v.event}` ({v.rule})"
                  for v in report.safety_violations]
    c = report.compare
    if c is not None:
        lines += ["", f"#### Compared with `{c.against}`", ""]
        for label, rows in (("appeared", c.appeared), ("vanished", c.vanished), ("changed", c.changed)):
            lines += [f"- {label}: `{x.scenario}` {x.key or '-'} @ turn {x.turn} {_md(x.consequence)} "
                      f"({x.old_count} -> {x.new_count} runs)" for x in rows]
        if not (c.appeared or c.vanished or c.changed):
            lines.append("- no signature appeared, vanished or changed count")
    lines += ["", "| release rule | threshold | observed | held |", "|---|---|---|---|"]
    lines += [f"| `{x.rule}` | {x.threshold} | {x.observed} | {'yes' if x.held else '**no**'} |" for x in r.checks]
    for w in report.warnings:
        lines.append(f"\n> warning: {_md(w)}")
    return "\n".join(lines) + "\n"
