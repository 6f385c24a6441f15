"""`judge bias` and `judge align`: how far a judge's verdicts survive perturbations that must not
change them (the bias gate), and a better prompt version from its disagreements with labels.

`judge bias` exits 0 when the bias gate passes, 1 when a perturbation's flip rate exceeds
`--max-flip`; with `--record` it adds the gate to the judge's calibration record, whose `certified`
then requires both gates. `judge align` (a new prompt version for an llm judge, new decision
thresholds for the local judge) exits 0 when the new version scores no worse than the old on the
test split (or when there was nothing to learn), 1 when it scores worse.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judge.cli.common import console as _console
from judge.cli.common import user_errors, write_output
from judge.errors import ConfigError, require_extra

JudgeOption = Annotated[str | None, typer.Option(
    "--judge", help="A configured judge (default: the configured default).")]
LabelsOption = Annotated[Path | None, typer.Option(
    "--labels", help="Label JSONL file, or a folder of them (default: labels/ beside pyproject.toml).")]
ConfigOption = Annotated[Path | None, typer.Option("--config", help="TOML holding [tool.judge].")]
ScenariosOption = Annotated[list[Path], typer.Option(
    "--scenarios", help="Folders to look for scenario files in (besides each trace's folder).")]
SeedOption = Annotated[int, typer.Option(
    "--seed", help="Seed of the split by scenario, used when the labels give none.")]
JsonOption = Annotated[Path | None, typer.Option("--json", help="Also write the result as JSON here.")]


def _labels(labels: Path | None) -> Path:
    from judge.config import project_root

    root = project_root()
    return labels or ((root / "labels") if root is not None else Path("labels"))


@user_errors
def bias_command(
    judge: JudgeOption = None, labels: LabelsOption = None, config: ConfigOption = None,
    scenarios: ScenariosOption = [],  # noqa: B006 (typer's default; never mutated)
    perturbation: Annotated[list[str], typer.Option(
        "--perturbation", help="Run only this perturbation (repeatable): ledger-order, event-order, padding, "
        "model-name, paraphrase, distractor (default: all).")] = [],  # noqa: B006 (typer's default; never mutated)
    max_flip: Annotated[float, typer.Option(
        "--max-flip", help="The bias gate: a flip rate above this on any perturbation fails it.")] = 0.05,
    interval: Annotated[str, typer.Option(
        "--interval", help="The 95% interval of a flip rate: exact (Clopper-Pearson) or wilson.")] = "exact",
    split: Annotated[str, typer.Option("--split", help="Which labelled cases: all, dev or test.")] = "all",
    record: Annotated[bool, typer.Option(
        "--record", help="Add the bias gate to the judge's calibration record (certified then needs both "
        "gates); the record must be current for this judge and labels.")] = False,
    out: Annotated[Path | None, typer.Option(
        "--out", help="With --record: the records folder (default: calibration/records).")] = None,
    name: Annotated[str | None, typer.Option(
        "--name", help="With --record: the record's name (default: the judge's).")] = None,
    seed: SeedOption = 0, json_path: JsonOption = None,
) -> None:
    """Re-ask a judge on controlled perturbations of labelled cases (ledger and event order, padding,
    a model name, a paraphrased ledger value, a distractor event): flip rate with a 95% interval and
    McNemar's test per perturbation, and the bias gate (every flip rate at most --max-flip).
    Exit 0: the gate passed; 1: it failed; 2: bad input."""
    require_extra("calibration", "judge bias")
    from judge.cli.progress import Activity
    from judge.config import load_judge_config, project_root
    from judge.grade import records_dir, run_battery
    from judge.judges import make_judge
    from judge.render import render_bias

    labels = _labels(labels)
    cfg = load_judge_config(judge, config_file=config)
    with Activity(True):
        run = run_battery(labels, make_judge(cfg), scenarios=scenarios, perturbations=perturbation,
                          split=split, max_flip=max_flip, interval=interval, seed=seed)
    console = _console()
    render_bias(run, console)
    if json_path is not None:
        write_output(json_path, run.gate.model_dump_json(indent=2) + "\n", [labels])
    if record:
        from calibration import CalibrationInputError, add_bias_file

        folder = out or records_dir(project_root())
        try:
            written = add_bias_file(folder, name or cfg.name, run.gate)
        except CalibrationInputError as exc:
            raise ConfigError(f"{exc} (run `judge calibrate --judge {cfg.name}` first)") from None
        console.print(f"added the bias gate to {written.json_path}: {written.record.certification_summary}")
    raise typer.Exit(0 if run.gate.certified else 1)


@user_errors
def align_command(
    judge: JudgeOption = None, labels: LabelsOption = None, config: ConfigOption = None,
    scenarios: ScenariosOption = [],  # noqa: B006 (typer's default; never mutated)
    max_examples: Annotated[int, typer.Option(
        "--max-examples", help="Most few-shot examples the new version holds (llm judges).")] = 6,
    seed: SeedOption = 0, json_path: JsonOption = None,
) -> None:
    """Improve a judge from the dev split of the labels and measure old and new on the held-out test split.

    An llm judge: a new locked prompt version, its prompt plus few-shot examples chosen from its dev
    disagreements (each cited by case id). The local judge (backend embedding): its decision
    thresholds refitted on the dev cases by a coordinate-wise grid search maximising Cohen's kappa,
    written as a new locked parameters version (params/local/vN.json). Either is written beside the
    old version; a locked version and the judge's configuration are never edited. Exit 0: the new
    version scores no worse on test (or there was nothing to learn); 1: worse; 2: bad input."""
    require_extra("calibration", "judge align")
    from judge.cli.progress import Activity
    from judge.config import load_judge_config
    from judge.grade import align_judge, align_local_judge
    from judge.judges import backend_spec, require_prompted
    from judge.render import render_align, render_align_local

    labels = _labels(labels)
    cfg = load_judge_config(judge, config_file=config)
    if cfg.backend == "embedding":
        with Activity(True):
            local = align_local_judge(cfg, labels, scenarios=scenarios, seed=seed)
        render_align_local(local, _console())
        if json_path is not None:
            write_output(json_path, _align_local_json(local) + "\n", [labels])
        raise typer.Exit(0 if local.no_worse else 1)
    if not backend_spec(cfg.backend).prompted:
        require_prompted(cfg, "judge align")
    with Activity(True):
        result = align_judge(cfg, labels, scenarios=scenarios, max_examples=max_examples, seed=seed)
    render_align(result, _console())
    if json_path is not None:
        write_output(json_path, _align_json(result) + "\n", [labels])
    raise typer.Exit(0 if result.no_worse else 1)


def _test_rates(result) -> dict:
    return {ref: {"tpr": tpr.model_dump(mode="json") if tpr is not None else None,
                  "tnr": tnr.model_dump(mode="json") if tnr is not None else None}
            for ref, (tpr, tnr) in result.rates.items()}


def _align_json(result) -> str:
    import json

    c = result.comparison
    return json.dumps({
        "judge": result.judge, "old": result.old_ref, "new": result.new_ref,
        "path": str(result.path) if result.path else None, "split": result.split_source,
        "dev_cases": result.dev_cases, "test_cases": result.test_cases, "disagreements": result.disagreements,
        "examples": [{"case": e.case.case, "kind": e.kind, "label": e.case.label, "verdict": e.verdict}
                     for e in result.examples],
        "test": c.model_dump(mode="json") if c is not None else None, "test_rates": _test_rates(result),
        "no_worse": result.no_worse, "leaking": result.leaking}, indent=2)


def _align_local_json(result) -> str:
    import json

    c = result.comparison
    return json.dumps({
        "judge": result.judge, "old": result.old_ref, "new": result.new_ref,
        "path": str(result.path) if result.path else None, "split": result.split_source,
        "dev_cases": result.dev_cases, "test_cases": result.test_cases, "disagreements": result.disagreements,
        "thresholds": {"old": result.old, "new": result.new, "undetermined": result.undetermined,
                       "best_range": result.best_range, "points": result.points},
        "dev": {k: v.model_dump(mode="json") for k, v in result.dev.items()},
        "test": c.model_dump(mode="json") if c is not None else None, "test_rates": _test_rates(result),
        "no_worse": result.no_worse, "leaking": result.leaking}, indent=2)


def register(app: typer.Typer) -> None:
    """Add `judge bias` and `judge align` to the `judge` typer app."""
    app.command("bias")(bias_command)
    app.command("align")(align_command)
