"""Terminal renderings of the run log (`judge runs list`) and of what changed between two grades
(`judge runs diff`), from the models of judge.grade.history."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from judge.grade.history import LoggedRun, RunChange, RunsDiff
from judge.render import style

OUTCOME_STYLE = {"pass": "green", "fail": "bold red", "inconclusive": "bold yellow"}


def _quality(values: list[float | None]) -> str:
    shown = ["n/a" if q is None else f"{q:g}" for q in values]
    if len(shown) <= 3:
        return ", ".join(shown) or "-"
    known = [q for q in values if q is not None]
    return f"{min(known):g}..{max(known):g}" if known else "n/a"


def _judge(judge: dict | None) -> str:
    """The judge's configured name (or backend), and whether it was binding: the list's short form."""
    if not judge:
        return "none"
    name = str(judge.get("name") or judge.get("backend") or "judge")
    return name + (f" ({'binding' if judge['binding'] else 'advisory'})" if "binding" in judge else "")


def render_runs(runs: list[LoggedRun], directory: str, console: Console) -> None:
    """Newest first: when, id, outcome, passed, quality, judge, scenario(s) (the column that wraps)."""
    if not runs:
        console.print(f"no runs logged in {directory} yet (every `judge grade` adds one)", markup=False)
        return
    table = style.table("when (UTC)", "id", "outcome", "passed", "quality", "judge", note="scenario")
    for run in runs:
        when = run.when.strftime("%Y-%m-%d %H:%M") if run.when else "-"
        if run.error:
            table.add_row(when, style.cell(run.id), "-", "-", "-", "-", style.cell(run.error, "magenta"))
            continue
        outcome = style.cell(run.outcome or "-", OUTCOME_STYLE.get(run.outcome or "", ""))
        table.add_row(when, style.cell(run.id), outcome, f"{run.passed}/{run.runs}", _quality(run.quality),
                      style.cell(_judge(run.judge)), style.cell(", ".join(run.scenarios)))
    style.render(console, table)
    console.print(Text(f"{len(runs)} run(s) in {directory}", "dim"))


def _change_head(change: RunChange) -> Text:
    runs = change.run_a if change.run_a == change.run_b else f"{change.run_a} -> {change.run_b}"
    head = Text.assemble((change.scenario, "bold"), f" / {runs}: outcome ",
                         (change.outcome_a, OUTCOME_STYLE.get(change.outcome_a, "")), " -> ",
                         (change.outcome_b, OUTCOME_STYLE.get(change.outcome_b, "")),
                         f", quality {change.quality_a if change.quality_a is not None else 'n/a'} -> "
                         f"{change.quality_b if change.quality_b is not None else 'n/a'}")
    if change.regression:
        head.append("  REGRESSION", "bold red")
    return head


def render_diff(diff: RunsDiff, console: Console) -> None:
    """Per paired run: outcome and quality, the keys that newly fail and those fixed."""
    console.print(Text(f"A: {diff.a}\nB: {diff.b}", "dim"))
    for change in diff.runs:
        console.print(_change_head(change))
        for title, items, look in (("newly failing", change.new_failures, "red"), ("fixed", change.fixed, "green")):
            if not items:
                continue
            console.print(Text(f"  {title}:", look))
            table = style.table("key", "event", "after turn", note="rule")
            for item in items:
                table.add_row(style.cell(item.key), style.cell(item.event or "-"), str(item.after_turn),
                              style.cell(item.rule or "judge"))
            style.render(console, table)
        if not change.new_failures and not change.fixed:
            console.print("  same violations in both", markup=False)
    for label, runs in (("only in A", diff.only_in_a), ("only in B", diff.only_in_b)):
        if runs:
            console.print(f"{label} (not compared): {', '.join(runs)}", markup=False)
    if not diff.runs:
        console.print("no scenario was graded in both reports: nothing to compare", markup=False)
    regressions = sum(c.regression for c in diff.runs)
    console.print(Text(f"{regressions} regression(s) in {len(diff.runs)} compared run(s)",
                       "bold red" if regressions else "bold green"))
