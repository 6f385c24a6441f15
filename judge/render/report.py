"""Renderings of a GradeReport: JSON (the contract), terminal (rich), JUnit XML and Markdown."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

from rich.console import Console
from rich.table import Table
from rich.text import Text

from judge.model import Finding, GradeReport, RunReport

VERDICT_STYLE = {"violated": "bold red", "upheld": "green", "not-exercised": "dim",
                 "unassessed": "yellow", "judge-error": "magenta"}


def to_json(report: GradeReport) -> str:
    return json.dumps(report.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False) + "\n"


def run_status(run: RunReport) -> str:
    if not run.eligible_for_release:
        return "VETO"
    return "PASS" if run.passed else "FAIL"


def _is_divergence(run: RunReport, after_turn: int, f: Finding) -> bool:
    d = run.first_divergence
    return d is not None and f.verdict == "violated" and f.key == d.key and f.evidence_event == d.event


def _finding_note(f: Finding, *, brief: bool = False) -> str:
    quiet = brief and f.verdict in ("upheld", "not-exercised", "unassessed") and not (
        f.disagreement or f.unguarded)
    parts = [] if quiet else [f.detail or ""]
    if f.judge_verdict and f.source == "deterministic" and (f.disagreement or not brief):
        parts.append(f"judge said {f.judge_verdict}" + (" (overridden)" if f.overridden else ""))
    if f.rationale and f.source == "judge" and not quiet:
        parts.append(f.rationale)
    if f.unguarded:
        parts.append("unguarded: no rule, judge alone")
    return "; ".join(p for p in parts if p)


def render_run(run: RunReport, console: Console) -> None:
    status = run_status(run)
    style = {"PASS": "bold green", "FAIL": "bold red", "VETO": "bold white on red"}[status]
    head = Text.assemble((f" {status} ", style), f"  {run.scenario} / {run.run_id}",
                         f"  quality {run.quality_score if run.quality_score is not None else 'n/a'}",
                         f"  events {run.events}")
    console.print(head)
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for col in ("after", "key", "verdict", "source", "event", "turn", "rule"):
        table.add_column(col, no_wrap=True)
    table.add_column("note", overflow="fold", ratio=1)
    for cp in run.checkpoints:
        label = f"{cp.after_turn}{'*' if cp.implicit else ''}"
        for f in cp.findings:
            row_style = "on dark_red" if _is_divergence(run, cp.after_turn, f) else None
            conf = f" {f.confidence:.2f}" if f.confidence is not None and f.source == "judge" else ""
            table.add_row(label, f.key, Text(f.verdict + conf, VERDICT_STYLE.get(f.verdict, "")),
                          {"deterministic": "rule"}.get(f.source or "", f.source or "-"), f.evidence_event or "-", str(f.turn if f.turn is not None else "-"),
                          f.rule or "-", _finding_note(f, brief=True), style=row_style)
            label = ""
    console.print(table)
    d = run.first_divergence
    if d is not None:
        console.print(Text.assemble(("  first divergence: ", "bold"),
                                    f"turn {d.turn}, key {d.key} ({d.class_}, {d.sensitivity}), event {d.event}",
                                    f"; slice {_span(run.slice)}"))
    unrecovered = [k for k, r in run.recovered.items() if not r.recovered]
    if unrecovered:
        console.print(f"  not recovered: {', '.join(unrecovered)}")
    if run.redactions:
        console.print("  redacted: " + ", ".join(f"{k} x{v}" for k, v in run.redactions.items()))
    if run.cost.judge_calls or run.cost.cache_hits or run.cost.judge_errors:
        c = run.cost
        console.print(f"  judge: {c.judge_calls} calls, {c.cache_hits} cache hits, {c.judge_errors} errors, "
                      f"{c.input_tokens}+{c.output_tokens} tokens"
                      + (f", ${c.cost_usd:.4f}" if c.cost_usd is not None else ""))
    for w in run.warnings:
        console.print(f"  [yellow]warning:[/] {w}")


def _span(ids: list[str]) -> str:
    if not ids:
        return "-"
    return ids[0] if len(ids) == 1 else f"{ids[0]}..{ids[-1]} ({len(ids)} events)"


def render_terminal(report: GradeReport, console: Console) -> None:
    judge = report.judge
    console.print(f"[dim]judge: {_judge_label(judge)}[/]")
    for run in report.runs:
        render_run(run, console)
        console.print()
    passed = sum(r.passed for r in report.runs)
    console.print(f"[bold]{passed}/{len(report.runs)} runs passed[/]")


def _judge_label(judge: dict | None) -> str:
    if not judge:
        return "none (deterministic checks only)"
    bits = [str(judge.get(k)) for k in ("name", "backend", "model") if judge.get(k)]
    if judge.get("prompt"):
        bits.append(str(judge["prompt"]))
    return " ".join(bits)


def to_junit(report: GradeReport) -> str:
    """One testsuite per scenario; one testcase per run and one per checkpoint of each run."""
    suites = ET.Element("testsuites", name="judge")
    by_scenario: dict[str, list[RunReport]] = {}
    for run in report.runs:
        by_scenario.setdefault(run.scenario, []).append(run)
    for scenario, runs in by_scenario.items():
        suite = ET.SubElement(suites, "testsuite", name=scenario)
        cases = failures = 0
        for run in runs:
            case = ET.SubElement(suite, "testcase", classname=f"{scenario}.{run.run_id}", name="run")
            cases += 1
            if not run.passed:
                failures += 1
                d = run.first_divergence
                msg = f"{run_status(run)}: " + (f"first divergence {d.key} at {d.event} (turn {d.turn}, "
                                                 f"rule {d.rule or 'judge'})" if d else "run failed")
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
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def to_markdown(report: GradeReport) -> str:
    lines = [f"### judge: {sum(r.passed for r in report.runs)}/{len(report.runs)} runs passed",
             "", f"Judge: {_judge_label(report.judge)}", ""]
    for run in report.runs:
        d = run.first_divergence
        lines.append(f"#### {run_status(run)} `{run.scenario}` / `{run.run_id}` "
                     f"(quality {run.quality_score if run.quality_score is not None else 'n/a'})")
        if d:
            lines.append(f"First divergence: turn {d.turn}, key `{d.key}` ({d.class_}, {d.sensitivity}), "
                         f"event `{d.event}`; slice {_span(run.slice)}")
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
