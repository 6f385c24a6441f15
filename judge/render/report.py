"""Renderings of a GradeReport: JSON (the contract), terminal (rich), JUnit XML and Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree as ET

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from judge.model import Cost, Finding, GradeReport, Recovery, RunReport
from judge.render import style
from judge.render.fingerprint import judge_label as _judge_label
from judge.render.fingerprint import judge_trust as _judge_trust
from judge.render.flagged import flagged_lines
from judge.render.json_text import json_chunks
from judge.render.style import STATUS_STYLE, VERDICT_STYLE


def to_json(report: GradeReport) -> str:
    return "".join(json_chunks(report))  # (written in pieces: judge.render.json_text)


def run_status(run: RunReport) -> str:
    if run.veto is not None:
        return "VETO"
    return {"pass": "PASS", "inconclusive": "INCONCLUSIVE"}.get(run.outcome, "FAIL")


def veto_text(run: RunReport) -> str | None:
    """`editable_paths, no_app_code violated at e12 (turn 6, rule scope:editable_paths)`."""
    v = run.veto
    if v is None:
        return None
    where = f"at {v.event} (turn {v.turn}, " if v.event else f"after turn {v.turn} ("
    return f"{', '.join(v.keys or [v.key])} violated {where}rule {v.rule or 'judge'})"


def divergence_text(run: RunReport) -> str | None:
    d = run.first_divergence
    return None if d is None else f"{d.key} at {d.event} (turn {d.turn}, rule {d.rule or 'judge'})"


def _is_divergence(run: RunReport, after_turn: int, f: Finding) -> bool:
    d = run.first_divergence
    return d is not None and f.verdict == "violated" and f.key == d.key and f.evidence_event == d.event


def _finding_note(f: Finding, *, brief: bool = False) -> str:
    abstained = f.judge_verdict == "unassessed"  # the judge's reason is shown: what it read and could not tell
    quiet = brief and f.verdict in ("upheld", "not-exercised", "unassessed") and not (
        f.disagreement or f.unguarded or abstained)
    parts = [] if quiet else [f.detail or ""]
    if abstained and f.source != "judge" and f.rationale:
        parts.append(f"judge {f.rationale}")
    if f.judge_verdict and not abstained and f.source == "deterministic" and (f.disagreement or not brief):
        said = f"judge said {f.judge_verdict}" + (" (overridden)" if f.overridden else "")
        if f.disagreement and f.rationale:  # what a reviewer of the disagreement needs first
            said += f": {f.rationale}"
        parts.append(said)
    if f.rationale and f.source == "judge" and not quiet:
        parts.append(f.rationale)
    if f.unguarded:
        parts.append("unguarded: no rule, judge alone")
    return "; ".join(p for p in parts if p)


_COLUMNS = ("after", "key", "verdict", "source", "event", "turn", "rule")


def _after(cp) -> str:
    return f"{cp.after_turn}{'*' if cp.implicit else ''}"


def _cells(f: Finding) -> tuple[str, ...]:
    """The fixed cells of a finding (after the checkpoint column): key .. rule."""
    conf = f" {f.confidence:.2f}" if f.confidence is not None and f.source == "judge" else ""
    return ("", f.key, f.verdict + conf, {"deterministic": "rule"}.get(f.source or "", f.source or "-"),
            f.evidence_event or "-", str(f.turn if f.turn is not None else "-"), f.rule or "-")


def _findings_table(run: RunReport, rows: list) -> Table:
    table = style.table(*_COLUMNS, note="note")
    label, current = "", None
    for cp, f, cells in rows:
        label, current = (_after(cp), cp) if cp is not current else ("", current)
        row_style = "on dark_red" if _is_divergence(run, cp.after_turn, f) else None
        table.add_row(label, style.cell(f.key), Text(cells[2], VERDICT_STYLE.get(f.verdict, "")), cells[3],
                      style.cell(cells[4]), cells[5], style.cell(cells[6]), style.cell(_finding_note(f, brief=True)),
                      style=row_style)
    return table


def _findings_stacked(run: RunReport, rows: list, width: int) -> Table:
    """One block per finding under its checkpoint: the key, then its verdict and evidence, then
    (wrapped, on the lines below) the note."""
    table = style.table("key", show_header=False, note="finding")
    table.columns[0].max_width = max(12, width // 3)
    table.columns[0].overflow = "fold"
    table.columns[0].no_wrap = False
    current = None
    pad = max((len(cells[2]) for _, _, cells in rows), default=0)
    for cp, f, cells in rows:
        if cp is not current:
            current = cp
            table.add_row(Text(f"after turn {_after(cp)}", style.HEADER_STYLE), "")
        if f.source is None:  # nothing decided it: a rule that saw no matching event is still named
            where = [f"rule {f.rule}"] if f.rule else []
        else:
            where = [f"{cells[3]} {f.rule}" if f.rule else cells[3]]
        if f.evidence_event:
            where.append(f"at {f.evidence_event} (turn {cells[5]})")
        finding = Text.assemble((cells[2], VERDICT_STYLE.get(f.verdict, "")))
        if where:
            finding.append(" " * (pad - len(cells[2]) + 2) + " ".join(where))
        note = _finding_note(f, brief=True)
        if note:
            finding.append("\n" + note)
        table.add_row(style.cell(f"  {f.key}"), finding,
                      style="on dark_red" if _is_divergence(run, cp.after_turn, f) else None)
    return table


def render_run(run: RunReport, console: Console) -> None:
    """One run: its status line, its findings (a table on a wide console, else one block per
    finding: the note saying why a key was violated is never dropped), then why it failed."""
    status = run_status(run)
    head = Text.assemble((f" {status} ", STATUS_STYLE[status]), f"  {run.scenario} / {run.run_id}",
                         f"  quality {run.quality_score if run.quality_score is not None else 'n/a'}",
                         f"  events {run.events}")
    console.print(head)
    rows = [(cp, f, _cells(f)) for cp in run.checkpoints for f in cp.findings]
    widths = [max([len(col), *(len(c[i]) for _, _, c in rows)]) for i, col in enumerate(_COLUMNS)]
    widths[0] = max([widths[0], *(len(_after(cp)) for cp, _, _ in rows)])
    if style.fits(console, widths):
        console.print(_findings_table(run, rows))
    else:
        console.print(_findings_stacked(run, rows, console.width))
    d = run.first_divergence
    if d is not None:
        _said(console, ("first divergence: ", "bold"),
              f"turn {d.turn}, key {d.key} ({d.class_}, {d.sensitivity}), event {d.event}; slice {_span(run.slice)}")
    if run.veto is not None:
        _said(console, ("veto: ", "bold red"), veto_text(run))
    if run.outcome == "inconclusive":
        for reason in run.outcome_reasons:
            _said(console, ("inconclusive: ", "bold yellow"), reason)
    for key, rec in run.recovered.items():
        if rec.recovered:
            _said(console, ("recovered: ", "bold green"), recovery_text(key, rec))
    unrecovered = [k for k, r in run.recovered.items() if not r.recovered]
    if unrecovered:
        _said(console, f"not recovered: {', '.join(unrecovered)}")
    if coherence_text(run):
        _said(console, coherence_text(run))
    if run.redactions:
        _said(console, "redacted: " + ", ".join(f"{k} x{v}" for k, v in run.redactions.items()))
    if run.cost.judge_calls or run.cost.cache_hits or run.cost.judge_errors:
        c = run.cost
        _said(console, f"judge: {c.judge_calls} calls, {c.cache_hits} cache hits, {c.judge_errors} errors, "
                       f"{c.input_tokens}+{c.output_tokens} tokens"
                       + (f", ${c.cost_usd:.4f}" if c.cost_usd is not None else "") + forms_text(c))
    for w in run.warnings:
        _said(console, ("warning: ", "yellow"), w)


def forms_text(cost: Cost) -> str:
    """`, form F` (the forms the judge's requests were asked in) and `(refused: G, H)`, when the
    endpoint refused one; empty when no request says (cached, or an older report)."""
    forms = list(dict.fromkeys(r.form for r in cost.requests if r.form))
    refused = list(dict.fromkeys(f.split(":", 1)[0] for r in cost.requests for f in r.refused_forms))
    if not forms:
        return ""
    return f", form {', '.join(forms)}" + (f" (refused: {', '.join(refused)})" if refused else "")


def recovery_text(key: str, rec: Recovery, code: str = "") -> str:
    """`KEY at EVENT (turn T), N turns after EVENT (turn V); restated by the user at EVENT` (each
    name wrapped in `code`, a backquote for Markdown)."""
    def c(name: str | None) -> str:
        return f"{code}{name}{code}"

    turns = rec.turns if rec.turns is not None else (rec.recovered_at or 0) - rec.violated_at
    violated_turn = (rec.recovered_at or 0) - turns
    after = "in the same turn as" if turns == 0 else f"{turns} turn{'s' if turns != 1 else ''} after"
    text = f"{c(key)} at {'event ' if code else ''}{c(rec.recovered_event)} (turn {rec.recovered_at}), {after} " \
           f"{c(rec.violated_event)} (turn {violated_turn})"
    return text + (f"; restated by the user at {c(rec.restated_by)}" if rec.restated_by
                   else "; no user message restated it")


def coherence_text(run: RunReport) -> str | None:
    """`recovery coherence 0.4: 5 failed tool results, 1 retry loop`, when the run had failures."""
    m = run.metrics
    if not m.failed_results:
        return None
    loops = m.retry_loops or 0
    return (f"recovery coherence {m.recovery_coherence}: {m.failed_results} failed tool result"
            f"{'s' if m.failed_results != 1 else ''}, {loops} retry loop{'s' if loops != 1 else ''}")


def _said(console: Console, *parts, look: str = "") -> None:
    """A line under a run, indented by two; wrapped lines keep the indent (the text is never markup)."""
    console.print(Padding(Text.assemble(*parts, style=look), (0, 0, 0, 2), expand=False))


def _span(ids: Sequence[str]) -> str:
    if not ids:
        return "-"
    return ids[0] if len(ids) == 1 else f"{ids[0]}..{ids[-1]} ({len(ids)} events)"


def render_terminal(report: GradeReport, console: Console) -> None:
    judge = report.judge
    console.print(Text(f"judge: {_judge_label(judge)}", "dim"))
    if _judge_trust(judge):
        _said(console, _judge_trust(judge), look="dim")
    for run in report.runs:
        render_run(run, console)
        console.print()
    console.print(f"[bold]{_tally(report)}[/]")


def render_flagged(report: GradeReport, console: Console) -> None:
    """`flagged_lines`, wrapped to the console (the text is never markup)."""
    for line in flagged_lines(report):
        console.print(Text(line))


def _tally(report: GradeReport) -> str:
    passed = sum(r.passed for r in report.runs)
    undecided = sum(r.outcome == "inconclusive" for r in report.runs)
    return f"{passed}/{len(report.runs)} runs passed" + (f", {undecided} inconclusive" if undecided else "")


def to_junit(report: GradeReport) -> str:
    """One testsuite per scenario; one testcase per run and one per checkpoint of each run."""
    suites = ET.Element("testsuites", name="judge")
    by_scenario: dict[str, list[RunReport]] = {}
    for run in report.runs:
        by_scenario.setdefault(run.scenario, []).append(run)
    for scenario, runs in by_scenario.items():
        suite = ET.SubElement(suites, "testsuite", name=scenario)
        cases = failures = errors = 0
        for run in runs:
            case = ET.SubElement(suite, "testcase", classname=f"{scenario}.{run.run_id}", name="run")
            cases += 1
            if run.outcome == "inconclusive":
                errors += 1
                text = "\n".join(run.outcome_reasons) or "inconclusive"
                ET.SubElement(case, "error", message=f"INCONCLUSIVE: {text.splitlines()[0]}",
                              type="INCONCLUSIVE").text = text
            elif not run.passed:
                failures += 1
                msg = _failure_message(run)
                ET.SubElement(case, "failure", message=msg, type=run_status(run)).text = msg
            for cp in run.checkpoints:
                cp_case = ET.SubElement(suite, "testcase", classname=f"{scenario}.{run.run_id}",
                                        name=f"after turn {cp.after_turn}")
                cases += 1
                bad = [f for f in cp.findings if f.verdict == "violated"]
                if bad:
                    failures += 1
                    text = "\n".join(f"{f.key} violated at {f.evidence_event} by rule "
                                     f"{f.rule or 'judge'}: {f.detail or f.rationale or ''}" for f in bad)
                    ET.SubElement(cp_case, "failure", message=text.splitlines()[0], type="violated").text = text
        suite.set("tests", str(cases))
        suite.set("failures", str(failures))
        if errors:
            suite.set("errors", str(errors))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _failure_message(run: RunReport) -> str:
    """The run's failure in one line: the veto first (what made the run unreleasable), then the
    first divergence (where it started going wrong)."""
    parts = [f"{veto_text(run)}"] if run.veto is not None else []
    if run.first_divergence is not None:
        parts.append(f"first divergence {divergence_text(run)}")
    if not parts:
        parts = run.outcome_reasons[:1] or ["run failed"]
    return f"{run_status(run)}: " + "; ".join(parts)


def to_markdown(report: GradeReport) -> str:
    trust = _judge_trust(report.judge)
    lines = [f"### judge: {_tally(report)}", "", f"Judge: {_judge_label(report.judge)}"
             + (f". {trust}" if trust else ""), ""]
    for run in report.runs:
        d = run.first_divergence
        lines.append(f"#### {run_status(run)} `{run.scenario}` / `{run.run_id}` "
                     f"(quality {run.quality_score if run.quality_score is not None else 'n/a'})")
        notes = []
        if run.veto is not None:
            v = run.veto
            keys = ", ".join(f"`{k}`" for k in v.keys or [v.key])
            notes.append(f"Veto: {keys} (safety-critical) violated at event `{v.event or '-'}`, turn {v.turn}, "
                         f"rule `{v.rule or 'judge'}`")
        if d:
            notes.append(f"First divergence: turn {d.turn}, key `{d.key}` ({d.class_}, {d.sensitivity}), "
                         f"event `{d.event}`; slice {_span(run.slice)}")
        if run.outcome == "inconclusive":
            notes += [f"Inconclusive: {r}".replace("|", "\\|") for r in run.outcome_reasons]
        notes += [f"Recovered: {recovery_text(k, r, '`')}" for k, r in run.recovered.items() if r.recovered]
        unrecovered = [f"`{k}`" for k, r in run.recovered.items() if not r.recovered]
        if unrecovered:
            notes.append(f"Not recovered: {', '.join(unrecovered)}")
        if coherence := coherence_text(run):
            notes.append(coherence.capitalize())
        lines += [line for note in notes for line in ("", note)]
        lines += ["", "| after turn | key | verdict | source | event | rule | note |",
                  "|---|---|---|---|---|---|---|"]
        for cp in run.checkpoints:
            for f in cp.findings:
                verdict = f"**{f.verdict}**" if f.verdict == "violated" else f.verdict
                note = _finding_note(f).replace("|", "\\|")
                lines.append(f"| {cp.after_turn} | `{f.key}` | {verdict} | {f.source or '-'} | "
                             f"{f.evidence_event or '-'} | {f.rule or '-'} | {note} |")
        lines.append("")
    return "\n".join(lines)
