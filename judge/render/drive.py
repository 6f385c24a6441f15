"""The terminal view of a `judge run` (a DriveReport): one row per variant with its outcome and first
divergence, then which stressor first broke which key, the pair verdict, and the release decision
of the suite report it makes."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from judge.render import style
from judge.suite.drive.report import DriveReport, KeyBreak, StressOutcome

OUTCOME_STYLE = {"pass": "green", "fail": "bold red", "inconclusive": "bold yellow"}
RELEASE_STYLE = {"fail": "bold white on red", "inconclusive": "bold black on yellow", "pass": "bold white on green"}
PAIR_STYLE = {"state-sensitive": "bold green", "not-state-sensitive": "bold red", "same-actions": "bold yellow",
              "inconclusive": "bold yellow"}


def _outcome(s: StressOutcome) -> Text:
    if s.failed:
        return Text("fail" if s.runs == 1 else f"fail {s.failed}/{s.runs}", OUTCOME_STYLE["fail"])
    if s.inconclusive:
        return Text("inconclusive" if s.runs == 1 else f"inconclusive {s.inconclusive}/{s.runs}",
                    OUTCOME_STYLE["inconclusive"])
    return Text("pass" if s.runs == 1 else f"pass {s.passed}/{s.runs}", OUTCOME_STYLE["pass"])


def _divergence(s: StressOutcome) -> str:
    d = s.first_divergence
    return "-" if d is None else f"{d.key} @ turn {d.turn}, {d.event} ({d.rule or 'judge'})"


def _where(k: KeyBreak) -> str:
    if k.at is None:
        return ""
    return f"turn {k.at.turn}, {k.at.event} ({k.at.rule or 'judge'})"


def render_drive(report: DriveReport, console: Console, folder: str | None = None) -> None:
    """The report on a console."""
    agent = report.agent.get("spec", "")
    runs = len(report.runs)
    console.print(Text.assemble(("judge run ", "bold"), report.scenario, f"  agent: {agent}  ",
                                f"{runs} run(s), seed {report.seed}"))
    undecided = any(r.outcome == "inconclusive" for r in report.runs)
    table = style.table("variant", "outcome", "first divergence", note="undecided because" if undecided else None)
    for s in report.stresses:
        row = [style.cell(s.stress), _outcome(s), style.cell(_divergence(s))]
        if undecided:
            reasons = sorted({reason for r in report.runs if r.variant == s.stress and r.outcome == "inconclusive"
                              for reason in r.outcome_reasons[:1]})
            row.append(style.cell("; ".join(reasons)))
        table.add_row(*row)
    style.render(console, table)
    if report.keys:
        console.print()
        keys = style.table("key", "sensitivity", "first broken by", note="where")
        for k in report.keys:
            who = "the control" if k.broken_in_control else k.first_broken_by or "-"
            keys.add_row(style.cell(k.key), style.cell(k.sensitivity),
                         style.cell(who, "bold red" if k.first_broken_by or k.broken_in_control else "dim"),
                         style.cell(_where(k)))
        style.render(console, keys)
    if report.pair is not None:
        console.print(Text.assemble("\npair: ", (report.pair.verdict, PAIR_STYLE[report.pair.verdict]), "  ",
                                    report.pair.reason))
    for note in report.skipped:
        console.print(Text(f"not run: {note}", "dim"))
    release = report.suite.release
    console.print(Text.assemble("\nrelease: ", (f" {release.decision.upper()} ", RELEASE_STYLE[release.decision]),
                                f"  {release.reason}"))
    if folder:
        console.print(Text(f"traces, grades and stressed scenarios in {folder}/ (run.json, suite.json)", "dim"))
