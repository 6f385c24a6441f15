"""`judge calibrate | compare | estimate | agreement`: thin typer commands over `calibration.api`.

Each command renders a compact rich table and, with `--json PATH`, writes its result model as JSON.
Bad input (a `CalibrationInputError`) is one red line on stderr and exit code 2, no traceback.
The calibration package is imported inside the commands so that `judge --help` stays fast.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from judge import render
from judge.cli.common import console as _console
from judge.cli.common import distinct_outputs, refuse_overwriting_inputs, user_errors, write_output
from judge.errors import UsageError, require_extra

LabelsOption = Annotated[Path, typer.Option("--labels", help="Label JSONL file, or a folder of them.")]
JsonOption = Annotated[Path | None, typer.Option("--json", help="Also write the result as JSON here.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap resampling.")]
NBootOption = Annotated[int, typer.Option("--n-boot", help="Bootstrap resamples.")]
PositiveOption = Annotated[str, typer.Option("--positive", help="The class TPR/TNR are about.")]
TwoVerdictsOption = Annotated[list[Path], typer.Option(
    "--verdicts", help="Verdict JSONL; give it twice: judge A, then judge B.")]


def _two(paths: list[Path]) -> tuple[Path, Path]:
    if len(paths) != 2:
        raise UsageError(f"give --verdicts twice (judge A, then judge B); got it {len(paths)} time(s)")
    return paths[0], paths[1]


def _write_json(result: Any, path: Path | None, inputs: Iterable[Path | None] = ()) -> None:
    if path is not None:
        write_output(path, result.model_dump_json(indent=2) + "\n", inputs)


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ci(interval: Any) -> str:
    if interval is None or interval.lower is None:
        return "-"
    return f"[{interval.lower:.3f}, {interval.upper:.3f}]"


def _rate(stat: Any) -> tuple[str, str]:
    if stat is None:
        return "-", "no cases"
    return f"{stat.value:.3f} ({stat.k}/{stat.n})", f"[{stat.lower:.3f}, {stat.upper:.3f}] exact"


def _table(title: str, rows: list[tuple[str, str, str]]) -> Table:
    table = render.table("metric", "value", title=title, note="95% interval / note")
    table.columns[0].style = "bold"
    table.columns[1].justify = "right"
    for metric, value, note in rows:
        table.add_row(render.cell(metric), render.cell(value), render.cell(note))
    return table


@user_errors
def calibrate_command(
    labels: Annotated[Path | None, typer.Option(
        "--labels", help="Label JSONL file, or a folder of them (default: labels/ beside pyproject.toml).")] = None,
    verdicts: Annotated[Path | None, typer.Option(
        "--verdicts", help="A verdict JSONL file of any judge (instead of --judge).")] = None,
    judge: Annotated[str | None, typer.Option(
        "--judge", help="Run this configured judge over the labelled ledger cases (through the cache).")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Folder for NAME.json and NAME.png (default: calibration/records beside the project's "
        "pyproject.toml, created if missing; never the installed package).")] = None,
    name: Annotated[str | None, typer.Option(
        "--name", help="Record name (default: the judge's name).")] = None,
    check: Annotated[bool, typer.Option(
        "--check", help="Exit 1 when the judge's current fingerprint or the label set (the project's "
        "labels/, or --labels) has no matching record (stale), naming what changed.")] = False,
    config: Annotated[Path | None, typer.Option("--config", help="TOML holding [tool.judge].")] = None,
    scenarios: Annotated[list[Path], typer.Option(
        "--scenarios", help="Folders to look for scenario files in (besides each trace's folder).")] = [],  # noqa: B006 (typer's default; never mutated)
    verdicts_out: Annotated[Path | None, typer.Option(
        "--verdicts-out", help="With --judge: also keep the verdicts it produced (JSONL).")] = None,
    target_precision: Annotated[float, typer.Option(
        "--target-precision", help="Precision the review threshold aims at: verdicts whose calibrated "
        "confidence is below it go to human review.")] = 0.95,
    floor: Annotated[float, typer.Option(
        "--floor", help="Certification floor for the 95% lower bounds of TPR and TNR.")] = 0.80,
    seed: SeedOption = 0,
    n_boot: NBootOption = 1000,
    positive: PositiveOption = "violated",
    cv: Annotated[int | None, typer.Option(
        "--cv", metavar="K", help="Also K-fold figures, folds by scenario (of the dev split when the labels "
        "declare one): each fold's calibrator and review threshold fitted on the other folds.")] = None,
    fitted_on: Annotated[str | None, typer.Option(
        "--fitted-on", metavar="PARTS", help="What the judge's own rules, thresholds or examples were "
        "fitted or written on (default: what the judge states; unstated with --verdicts): `all` leaves only "
        "the calibrator's band on test held out.")] = None,
    json_path: JsonOption = None,
) -> None:
    """Measure a judge against human labels and write its calibration record (NAME.json, NAME.png).

    With --verdicts: any judge's recorded verdicts. With --judge: run that judge over the labelled
    ledger cases first. With --check: only say whether the judge's record is still valid. When the
    labels declare `split: dev | test`, the figures and certification are the test split's, the
    calibrator and review threshold are fitted on dev, and both halves are printed."""
    require_extra("calibration", "judge calibrate")
    from calibration.api import calibrate_files
    from judge.config import load_judge_config, project_root
    from judge.grade import check_calibration, labels_dir, output_records_dir, records_dir, refuse_package_output
    from judge.judges import make_judge

    root = project_root()
    labels = labels or ((root / "labels") if root is not None else Path("labels"))
    if check:  # read the project's records (else the built-in ones) against the project's labels
        cfg = load_judge_config(judge, config_file=config)
        out = out or records_dir(root)
        against = labels if labels.exists() else labels_dir(out)
        reasons = check_calibration(make_judge(cfg).fingerprint(), out, name or cfg.name, against)
        console = _console()
        if reasons:
            console.print(f"calibration of judge {escape(cfg.name)} is stale:")
            for reason in reasons:
                console.print(f"  - {escape(reason)}")
            raise typer.Exit(1)
        console.print(f"calibration of judge {escape(cfg.name)} is current ({out})")
        return
    if (verdicts is None) == (judge is None):
        raise UsageError("give exactly one of --verdicts FILE or --judge NAME")
    out = out or output_records_dir(root)  # the project's records, created when missing
    refuse_package_output(out, root)
    record = name or (load_judge_config(judge, config_file=config).name if judge else None)
    if record is not None:
        distinct_outputs({"--json": json_path, f"the record ({record}.json in --out)": out / f"{record}.json",
                          f"the diagram ({record}.png in --out)": out / f"{record}.png",
                          "--verdicts-out": verdicts_out})
    fitted: dict[str, Any] = {}
    if judge is not None:
        cfg = load_judge_config(judge, config_file=config)
        name = name or cfg.name
        judge_object = make_judge(cfg)
        fitted = dict(judge_fitted_on=getattr(judge_object, "fitted_on", None),
                      judge_note=getattr(judge_object, "fitted_note", None))
        verdicts = _run_judge_over_labels(labels, judge_object, scenarios, verdicts_out, out, name)
    if name is None:
        raise UsageError("give --name for a record made from --verdicts")
    if fitted_on is not None:
        if fitted_on not in ("dev", "all", "none"):
            raise UsageError(f"--fitted-on must be dev, all or none; got {fitted_on!r}")
        fitted = dict(judge_fitted_on=fitted_on, judge_note=fitted.get("judge_note")
                      if fitted.get("judge_fitted_on") == fitted_on else None)
    refuse_overwriting_inputs([out / f"{name}.json", out / f"{name}.png", json_path], [labels, verdicts])
    assert verdicts is not None  # given, or written by the judge's run (exactly one of the two: above)
    result = calibrate_files(labels, verdicts, out, name, target_precision=target_precision,
                             floor=floor, seed=seed, n_boot=n_boot, positive=positive, cv=cv, **fitted)
    _write_json(result, json_path, [labels, verdicts])
    r = result.record
    ia = r.inter_annotator
    rows = [
        ("cases", str(r.n), f"{r.ties_excluded} ties excluded, {r.n_unmatched} unmatched"),
        ("accuracy", _num(r.accuracy), _ci(r.accuracy_ci)),
        ("Cohen's kappa", _num(r.cohen_kappa), _ci(r.kappa_ci)),
        (f"TPR ({r.positive})", *_rate(r.tpr)),
        ("TNR", *_rate(r.tnr)),
        ("key agreement", _num(r.key_agreement.value), f"{r.key_agreement.k}/{r.key_agreement.n}"),
        ("evidence agreement", _num(r.evidence_agreement.value),
         f"{r.evidence_agreement.k}/{r.evidence_agreement.n}"),
        ("annotators' alpha", _num(ia.krippendorff_alpha),
         f"pairwise kappa {_num(ia.pairwise_kappa)} on {ia.n_cases} cases"),
        ("ECE", _num(r.ece), "10 equal-width bins"),
        ("Brier", _num(r.brier), ""),
        ("calibrator", r.calibrator.kind if r.calibrator else "-",
         r.calibrator.reason if r.calibrator else "no confidences"),
        ("review threshold", _num(r.review_threshold),
         f"coverage {_num(r.coverage)} at precision >= {r.target_precision}"),
    ]
    console = _console()
    on_test = r.held_out is not None and r.held_out.figures == "test"
    render.render_table(console, _table(f"calibration of {r.name}" + (" (test split)" if on_test else ""), rows))
    per_class = render.table("label", "precision", "recall", "F1", "support")
    for column in per_class.columns[1:]:
        column.justify = "right"
    for label, stats in r.per_class.items():
        per_class.add_row(render.cell(label), _num(stats.precision), _num(stats.recall), _num(stats.f1),
                          str(stats.support))
    render.render_table(console, per_class)
    _render_held_out(console, r)
    colour = "green" if r.certified else "yellow"
    console.print(f"[{colour}]{escape(r.certification_summary)}[/{colour}]")
    console.print(f"wrote {escape(result.json_path)} and {escape(result.png_path)}")


def _render_held_out(console: Console, r: Any) -> None:
    """The dev and test halves, the K folds, and which figures are in-sample."""
    halves = [*(r.splits or {}).values(), *(r.cv.folds + [r.cv.pooled] if r.cv else [])]
    if halves:
        t = render.table("cases", "n", "scenarios", "accuracy", "kappa", "TPR", "TNR", "coverage",
                         title="by split" + (f" and {r.cv.k} folds by scenario ({r.cv.on})" if r.cv else ""))
        for h in halves:
            t.add_row(render.cell(h.split), str(h.n), str(h.groups), _num(h.accuracy), _num(h.cohen_kappa),
                      _rate(h.tpr)[0], _rate(h.tnr)[0], _num(h.coverage))
        render.render_table(console, t)
    held = r.held_out
    if held is None:
        return
    if held.figures == "all":
        console.print("Every figure is in-sample: the labels declare no split (add `split: dev | test` per case).")
    else:
        reads = "read once" if held.test_reads == 1 else f"read {held.test_reads} times"
        console.print(f"The first table is the test split's ({held.test_cases} cases; dev "
                      f"{held.dev_cases}), certified on test only; the test half was {reads} (when: the "
                      "record's held_out.test_first_read_at).")
        unstated = {None: " (if the judge's own parts were not fitted on test cases: unstated)",
                    "dev": " (from what was fitted on dev: the calibrator's band and the judge's fitted parts"
                           + (", as the note below says)" if held.judge_note else ")")}.get(held.judge_fitted_on, "")
        console.print(f"Held out{unstated}: {escape(', '.join(held.held_out) or 'nothing')}.")
    if held.judge_fitted_on == "all":
        note = held.judge_note or "its parts were fitted on all cases"
        console.print(f"In-sample for the judge itself: {escape(note)}.")
    elif held.judge_fitted_on == "dev" and held.judge_note:
        console.print(f"What the judge was fitted on: {escape(held.judge_note)}.")


@user_errors
def compare_command(labels: LabelsOption, verdicts: TwoVerdictsOption, seed: SeedOption = 0,
                    n_boot: NBootOption = 1000, json_path: JsonOption = None) -> None:
    """Compare two judges on the same labels: exact McNemar test, kappa difference, flipped cases."""
    require_extra("calibration", "judge compare")
    from calibration.api import compare_files

    first, second = _two(verdicts)
    result = compare_files(labels, first, second, seed=seed, n_boot=n_boot)
    _write_json(result, json_path, [labels, *verdicts])
    fixed = sum(case.change == "fixed" for case in result.flipped)
    rows = [
        ("cases", str(result.n), f"{result.ties_excluded} ties excluded"),
        ("accuracy A / B", f"{result.accuracy_a:.3f} / {result.accuracy_b:.3f}", ""),
        ("kappa A / B", f"{_num(result.kappa_a)} / {_num(result.kappa_b)}", ""),
        ("kappa B - A", _num(result.kappa_difference), _ci(result.kappa_difference_ci) + " paired bootstrap"),
        ("McNemar exact p", _num(result.mcnemar.p_value, 4),
         f"only A right {result.mcnemar.only_a_right}, only B right {result.mcnemar.only_b_right}"),
        ("flipped cases", str(len(result.flipped)),
         f"{fixed} fixed by B, {len(result.flipped) - fixed} broken"),
    ]
    console = _console()
    render.render_table(console, _table(f"{second} vs {first}", rows))
    for case in result.flipped[:20]:
        console.print(f"  {case.change:6} {escape(case.case)}: reference {escape(case.reference)}, "
                      f"A {escape(case.verdict_a)}, B {escape(case.verdict_b)}")
    if len(result.flipped) > 20:
        console.print(f"  ... {len(result.flipped) - 20} more (see --json)")


@user_errors
def estimate_command(
    labels: LabelsOption,
    verdicts: Annotated[Path, typer.Option("--verdicts", help="The judge's verdicts on the labelled cases.")],
    unlabeled: Annotated[Path, typer.Option(
        "--unlabeled", help="The same judge's verdicts on unlabelled cases.")],
    seed: SeedOption = 0, n_boot: NBootOption = 1000, positive: PositiveOption = "violated",
    json_path: JsonOption = None,
) -> None:
    """Estimate the true violation rate of unlabelled runs (Rogan-Gladen correction)."""
    require_extra("calibration", "judge estimate")
    from calibration.api import estimate_files

    result = estimate_files(labels, verdicts, unlabeled, seed=seed, n_boot=n_boot, positive=positive)
    _write_json(result, json_path, [labels, verdicts, unlabeled])
    rows = [
        (f"corrected '{result.positive}' rate", _num(result.prevalence), _ci(result.interval) + " bootstrap"),
        ("observed rate", _num(result.observed_rate), f"{result.n_unlabeled} unlabelled verdicts"),
        ("TPR", *_rate(result.tpr)),
        ("TNR", *_rate(result.tnr)),
    ]
    render.render_table(_console(), _table("estimated violation rate", rows))


@user_errors
def agreement_command(verdicts: TwoVerdictsOption, json_path: JsonOption = None) -> None:
    """Self-consistency of two verdict sets: Cohen's kappa and percent agreement on shared cases."""
    require_extra("calibration", "judge agreement")
    from calibration.api import agreement_files

    first, second = _two(verdicts)
    result = agreement_files(first, second)
    _write_json(result, json_path, [*verdicts])
    rows = [
        ("shared cases", str(result.n), f"{result.n_only_a} only in A, {result.n_only_b} only in B"),
        ("percent agreement", _num(result.percent_agreement), ""),
        ("Cohen's kappa", _num(result.cohen_kappa), ""),
    ]
    render.render_table(_console(), _table("agreement", rows))


def _run_judge_over_labels(labels: Path, judge: Any, scenarios: list[Path], keep: Path | None,
                           out: Path, name: str) -> Path:
    """Grade every labelled trace with the judge (progress bar) and write its verdict JSONL."""
    import json

    from rich.progress import Progress

    from judge.grade import judge_verdicts_for_labels

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("judging labelled traces", total=None)
        run = judge_verdicts_for_labels(labels, judge, scenarios=scenarios,
                                        progress=lambda done, total: progress.update(task, completed=done,
                                                                                     total=total))
    path = keep or (out / f"{name}.verdicts.jsonl")
    refuse_overwriting_inputs([path], [labels, *scenarios])
    write_output(path, "".join(json.dumps(v) + "\n" for v in run.verdicts))
    console = _console()
    if run.judge_errors:
        console.print(f"{len(run.judge_errors)} judge errors (unscored, left out): "
                      f"{', '.join(run.judge_errors[:5])}")
    if run.missing:
        console.print(f"{len(run.missing)} labelled cases without a judge verdict (not asked, or decided by the "
                      f"rules alone): {', '.join(run.missing[:5])}")
    return path


def register(app: typer.Typer) -> None:
    """Add the calibration commands to the `judge` typer app."""
    app.command("calibrate")(calibrate_command)
    app.command("compare")(compare_command)
    app.command("estimate")(estimate_command)
    app.command("agreement")(agreement_command)
