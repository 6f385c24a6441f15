"""Renderings of a corpus report and a corpus diff: JSON (the contract) and the terminal (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from judge.model.corpus import CorpusDiff, CorpusReport
from judge.render import style
from judge.render.fingerprint import judge_label
from judge.render.json_text import json_chunks


def to_json(model: CorpusReport | CorpusDiff) -> str:
    return "".join(json_chunks(model))  # (written in pieces: judge.render.json_text)


def _interval(lower: float | None, upper: float | None) -> str:
    return "n/a" if lower is None or upper is None else f"[{lower:.1%}, {upper:.1%}]"


def render_terminal(report: CorpusReport, console: Console) -> None:
    """The rates table, then the failing sample (run, trace, first divergence)."""
    judge = judge_label(report.judge.model_dump(mode="json") if report.judge else None)
    console.print(Text.assemble(("corpus ", "bold"), f"{report.graded}/{report.runs} traces graded against "
                                f"{report.policy}  judge: {judge}"))
    table = style.table("key", "sensitivity", "violated/runs", "rate", "95% interval", "corrected")
    for k in report.keys:
        colour = "bold red" if k.violated and k.sensitivity == "safety-critical" else ""
        table.add_row(style.cell(k.key), k.sensitivity, Text(f"{k.violated}/{k.runs}", colour), f"{k.rate:.1%}",
                      _interval(k.interval.lower, k.interval.upper), "yes" if k.corrected else "no")
    style.render(console, table)
    outcomes = ", ".join(f"{n} {o}" for o, n in report.outcomes.items())
    console.print(f"outcomes: {outcomes}; {report.errors} unreadable", highlight=False)
    for run in report.failing_sample:
        d = run.first_divergence
        where = f"turn {d.turn} {d.key} at {d.event}" if d else "-"
        console.print(Text.assemble(("  fail ", "red"), f"{run.run_id}  {run.trace}  {where}  slice "
                                    f"{', '.join(run.slice) or '-'}"), soft_wrap=True)
    for warning in report.warnings:
        console.print(Text.assemble(("warning: ", "yellow"), warning), soft_wrap=True)


def render_diff(diff: CorpusDiff, console: Console) -> None:
    """Every key both corpora rate, moved ones marked; then why the diff fails, if it does."""
    table = style.table("key", "sensitivity", "old", "new", "p (Holm)", "moved")
    for c in diff.changes:
        mark = Text(c.direction, "bold red" if c.direction == "rose" else "green") if c.moved else Text("no")
        table.add_row(style.cell(c.key), c.sensitivity, f"{c.old} ({c.old_rate:.1%})", f"{c.new} ({c.new_rate:.1%})",
                      f"{c.p_holm:.3g}", mark)
    style.render(console, table)
    for label, keys in (("only in the old corpus", diff.only_old), ("only in the new corpus", diff.only_new)):
        if keys:
            console.print(f"{label}: {', '.join(keys)}", highlight=False)
    for warning in diff.warnings:
        console.print(Text.assemble(("warning: ", "yellow"), warning), soft_wrap=True)
    for reason in diff.reasons:
        console.print(Text.assemble(("FAIL ", "bold white on red"), " ", reason), soft_wrap=True)
    if not diff.failed:
        console.print(Text(f"no safety-critical rate rose significantly (alpha {diff.alpha})", "green"))
