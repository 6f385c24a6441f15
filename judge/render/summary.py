"""Terminal renderings of a summary audit (`judge audit-summary`) and of a continuation check
(`judge continue`)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from judge.render import style

STATUS_STYLE = {"preserved": "green", "missing": "red", "distorted": "red", "obsolete-as-current": "red",
                "assumption-promoted": "red", "not-required": "dim", "unassessed": "yellow"}


def _short(text: str | None, limit: int = 70) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def render_audit(audit, out: Console) -> None:
    head = ("INCONCLUSIVE" if audit.inconclusive else "PASS") if audit.passed else ("VETO" if audit.vetoed else "FAIL")
    colour = ("yellow" if audit.inconclusive else "green") if audit.passed else "red"
    where = f"summary {audit.summary_event} ({audit.reason})" if audit.summary_event else "summary"
    out.print(Text.assemble((f" {head} ", f"bold {colour}"),
                            f"  {audit.scenario} / {where}, ledger after turn {audit.turn}; layers: "
                            + ", ".join(audit.layers)))
    table = style.table("key", "class", "sensitivity", "status", "source", *audit.layers, note="evidence / detail")
    for f in audit.findings:
        cells = []
        for layer in audit.layers:
            found = f.layers.get(layer)
            cells.append(Text(found.status or "-", style=STATUS_STYLE.get(found.status or "", "")) if found
                         else Text("-", style="dim"))
        note = f.evidence if f.status not in ("missing", "not-required") and f.evidence else f.detail
        status = Text(f.status + (" *" if f.needs_review else ""), style=STATUS_STYLE[f.status])
        table.add_row(style.cell(f.key), f.class_, f.sensitivity, status, f.source or "-", *cells,
                      style.cell(_short(note)))
    style.render(out, table)
    if audit.lost:
        out.print(f"  lost at turn {audit.turn}: " + ", ".join(audit.lost))
    if any(f.needs_review for f in audit.findings):
        out.print("  * layers disagree: review")
    for warning in audit.warnings:
        out.print(Text(f"  warning: {warning}", style="yellow"))


def render_continuation(report, out: Console) -> None:
    colour = "green" if report.passed else "red"
    out.print(Text.assemble((f" {report.verdict.upper()} ", f"bold {colour}"),
                            f"  {report.scenario} / {report.run_id}: resumed after summary "
                            f"{report.summary_event} (turn {report.summary_turn})"))
    out.print(f"  next user turn: {_short(report.next_user_text) if report.next_user_text else '(none)'}")
    for label, check in (("full history", report.full_history), ("summary alone", report.summary_only)):
        state = "allowed" if check.allowed else "FORBIDDEN"
        out.print(Text.assemble(f"  {label:<14} ", (f"{state:<9}", "green" if check.allowed else "red"),
                                f" {_short(check.action.describe(), 100)}"))
        for hit in check.violations:
            out.print(f"                 {hit.rule}: {_short(hit.detail, 100)}")
    if report.recorded is not None:
        out.print(f"  recorded next  {_short(report.recorded.describe(), 100)}")
