"""Terminal views of `judge bias` (flip rates per perturbation and the bias gate) and `judge align`
(the examples chosen, or for the local judge the thresholds refitted, and both versions on the test
split)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from judge.render import style


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _mcnemar(test: Any) -> str:
    if test is None:
        return "-"
    how = "exact" if test.method == "exact" else f"chi2 {test.statistic:.2f}"
    return f"p {test.p_value:.3f} ({how}; {test.positive} lost {test.lost}, gained {test.gained})"


def render_bias(run: Any, console: Console) -> None:
    """The flip rate of each perturbation, its interval and McNemar's test, then the gate."""
    gate = run.gate
    t = style.table("perturbation", "cases", "flipped", "flip rate", f"{gate.level:.0%} interval", "gate",
                    title=f"bias battery ({run.cases} labelled cases, split {run.split}; max_flip {gate.max_flip:.2f})",
                    note="McNemar (unperturbed vs perturbed) / not measured")
    for column in t.columns[1:4]:
        column.justify = "right"
    for r in gate.perturbations:
        rate = r.flip_rate
        interval = "-" if rate is None else f"[{rate.lower:.3f}, {rate.upper:.3f}] {gate.interval}"
        mark = {True: ("pass", "green"), False: ("FAIL", "bold red"), None: ("-", "dim")}[r.passed]
        note = _mcnemar(r.mcnemar)
        skipped = [f"{r.not_applicable} not applicable"] if r.not_applicable else []
        skipped += [f"{r.judge_errors} judge errors"] if r.judge_errors else []
        t.add_row(style.cell(r.name), str(r.n), str(r.flipped), _num(rate.value if rate else None),
                  style.cell(interval), style.cell(mark[0], mark[1]),
                  style.cell("; ".join([note, *skipped]) if skipped else note))
    style.render(console, t)
    if run.missing:
        console.print(f"{len(run.missing)} labelled cases have no judge request (their checkpoint asks no judge): "
                      f"{escape(', '.join(run.missing[:5]))}")
    if run.base_errors:
        console.print(f"{len(run.base_errors)} cases got no unperturbed verdict (judge errors, left out): "
                      f"{escape(', '.join(run.base_errors[:5]))}")
    colour = "green" if gate.certified else "yellow"
    console.print(f"[{colour}]{escape(gate.reason)}[/{colour}]")


def _rate(stat: Any) -> str:
    return "-" if stat is None else f"{stat.value:.3f} ({stat.k}/{stat.n}) [{stat.lower:.3f}, {stat.upper:.3f}]"


def render_align(result: Any, console: Console) -> None:
    """The examples chosen, the version written, and old vs new on the test split."""
    console.print(f"judge {escape(result.judge)} ({escape(result.old_ref)}): {result.dev_cases} dev cases, "
                  f"{result.test_cases} test cases (split by {escape(result.split_source)}); "
                  f"{result.disagreements} disagreements on dev")
    if result.leaking:
        console.print(f"[yellow]scenarios in both splits (what dev teaches may leak into test): "
                      f"{escape(', '.join(result.leaking))}[/yellow]")
    if not result.examples:
        console.print("no disagreement on the dev split: nothing to learn from, no new version written")
        return
    t = style.table("example", "case", "kind", "label", title="few-shot examples (dev split)",
                    note="the judge had answered")
    for i, e in enumerate(result.examples, 1):
        t.add_row(str(i), style.cell(e.case.case), style.cell(e.kind), style.cell(e.case.label),
                  style.cell(e.verdict + (f" ({e.evidence})" if e.evidence else "")))
    style.render(console, t)
    console.print(f"wrote {escape(str(result.path))} ({escape(result.new_ref)}, locked in prompts.lock)")
    _render_test(result, console, "no example came from these cases", f'prompt = "{result.new_ref}"')


def _render_test(result: Any, console: Console, untouched: str, adopt: str) -> None:
    """Both versions side by side on the test split, and whether the new one scores no worse."""
    c = result.comparison
    old, new = result.old_ref, result.new_ref
    rows = [("cases", str(c.n), str(c.n), f"{c.ties_excluded} ties excluded; {untouched}"),
            ("accuracy", f"{c.accuracy_a:.3f}", f"{c.accuracy_b:.3f}", ""),
            ("Cohen's kappa", _num(c.kappa_a), _num(c.kappa_b), ""),
            ("TPR (violated)", _rate(result.rates[old][0]), _rate(result.rates[new][0]), "95% exact interval"),
            ("TNR", _rate(result.rates[old][1]), _rate(result.rates[new][1]), "95% exact interval"),
            ("McNemar", "", "", f"exact p {c.mcnemar.p_value:.4f}: only old right {c.mcnemar.only_a_right}, "
                                f"only new right {c.mcnemar.only_b_right}")]
    t = style.table("metric", old, new, title="test split (held out)", note="note")
    for metric, before, after, note in rows:
        t.add_row(style.cell(metric), style.cell(before), style.cell(after), style.cell(note))
    style.render(console, t)
    if result.no_worse:
        console.print(f"[green]{escape(new)} scores no worse than {escape(old)} on the test split: point the judge "
                      f"at it ({escape(adopt)}) and calibrate it again[/green]")
    else:
        console.print(f"[yellow]{escape(new)} scores worse than {escape(old)} on the test split: keep the judge on "
                      f"{escape(old)} (the new version stays, as every locked version does)[/yellow]")


def render_align_local(result: Any, console: Console) -> None:
    """The local judge's thresholds before and after the fit (dev figures), then both on test."""
    console.print(f"judge {escape(result.judge)} ({escape(result.old_ref)}): {result.dev_cases} dev cases, "
                  f"{result.test_cases} test cases (split by {escape(result.split_source)}); "
                  f"{result.disagreements} disagreements on dev")
    if result.leaking:
        console.print(f"[yellow]scenarios in both splits (what dev teaches may leak into test): "
                      f"{escape(', '.join(result.leaking))}[/yellow]")
    t = style.table("threshold", result.old_ref, result.new_ref or "fitted", "dev's best range",
                    title=f"decision thresholds fitted on the dev split ({result.points} points scored)",
                    note="note")
    for name, old in result.old.items():
        low, high = result.best_range.get(name, (None, None))
        span = "-" if low is None else f"{low:g}-{high:g}"
        note = "no value changes a dev verdict: kept" if name in result.undetermined else \
            ("moved" if result.new[name] != old else "kept")
        t.add_row(style.cell(name), f"{old:g}", f"{result.new[name]:g}", style.cell(span), style.cell(note))
    style.render(console, t)
    before, after = result.dev["before"], result.dev["after"]
    console.print(f"dev (fitted on; in-sample): kappa {_num(before.cohen_kappa)} -> {_num(after.cohen_kappa)}, "
                  f"balanced accuracy {_num(before.balanced_accuracy)} -> {_num(after.balanced_accuracy)}, "
                  f"TPR {_num(before.tpr)} -> {_num(after.tpr)}, TNR {_num(before.tnr)} -> {_num(after.tnr)}")
    if result.new_ref is None:
        console.print("the dev split prefers the current thresholds: nothing to learn, no new version written")
        return
    console.print(f"wrote {escape(str(result.path))} ({escape(result.new_ref)}, locked in params.lock)")
    _render_test(result, console, "the fit read none of these cases", f'params = "{result.new_ref}"')
