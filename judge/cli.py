"""The `judge` command line: parse, call the library, render. Errors users cause -> one line, exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.text import Text

from judge.cli_common import err, error_line, user_errors  # noqa: F401  (err, error_line: for callers)
from judge.errors import JudgeInputError

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Grade multi-turn agent runs for state drift against a reviewed ledger.")
# Reports are read in CI logs too: keep a readable width when stdout is not a terminal.
out = Console(highlight=False, soft_wrap=False, emoji=False,
              width=None if sys.stdout.isatty() else 140)


def _refuse_overwriting_inputs(outputs: list[Optional[Path]], inputs: list[Path]) -> None:
    """Nothing the user gave is overwritten: an output path that is an input is a usage error."""
    given = {p.resolve() for p in inputs}
    for path in outputs:
        if path is not None and path.resolve() in given:
            raise JudgeInputError("refusing to write a report over an input file", file=str(path))


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise JudgeInputError(f"cannot write: {exc.strerror}", file=str(path)) from None


@app.command()
@user_errors
def grade(
    scenario: Path = typer.Argument(..., help="Scenario file (YAML or JSON): the reviewed ledger."),
    traces: list[Path] = typer.Argument(..., help="One or more JSONL traces of runs of that scenario."),
    judge: Optional[str] = typer.Option(None, "--judge", help="Judge for semantic keys: `none` "
                                        "(deterministic checks only) or a judge name from "
                                        "[tool.judge.judges]; default: [tool.judge].default, else the "
                                        "embedded offline judge `local`."),
    config: Optional[Path] = typer.Option(None, "--config", help="A TOML file holding a [tool.judge] "
                                          "table (default: $JUDGE_CONFIG, else the nearest pyproject.toml)."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Write the JSON report here."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Write a JUnit XML report here."),
    md: Optional[Path] = typer.Option(None, "--md", help="Write a Markdown report here (for a PR)."),
    floor: float = typer.Option(1.0, "--floor", min=0.0, max=1.0, help="Below 1.0, runs whose only "
                                "violations are non-safety ones pass while their quality score is >= floor."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report; exit code only."),
) -> None:
    """Grade TRACE(s) against SCENARIO. Exit 0: all passed; 1: a veto or a failing run; 2: bad input."""
    from judge import api, report as render

    _refuse_overwriting_inputs([json_path, junit, md], [scenario, *traces])
    judge_impl, judge_name = (None, None) if judge == "none" else _make_judge(judge, config)
    result = api.grade_paths(scenario, traces, judge=judge_impl, floor=floor, judge_name=judge_name)
    stale = api.apply_calibration_policy(result, judge_impl, config) if judge_impl is not None else False
    if json_path:
        _write(json_path, render.to_json(result))
    if junit:
        _write(junit, render.to_junit(result))
    if md:
        _write(md, render.to_markdown(result))
    if not quiet:
        render.render_terminal(result, out)
    raise typer.Exit(1 if stale else api.exit_code(result))


def _make_judge(name: str | None, config_file: Path | None):
    from judge.config import load_judge_config
    from judge.judges.factory import make_judge

    cfg = load_judge_config(name, config_file=config_file)
    return make_judge(cfg), cfg.name


@app.command("lint")
@user_errors
def lint_cmd(scenario: Path = typer.Argument(..., help="Scenario file to check.")) -> None:
    """Report every fixture error (exit 2) and warn about safety-critical keys no rule guards."""
    from judge import api

    issues = api.lint_file(scenario)
    errors = [i for i in issues if i.level == "error"]
    for issue in issues:
        colour = "red" if issue.level == "error" else "yellow"
        out.print(Text.assemble((f"{issue.level}: ", colour), issue.render(str(scenario))), soft_wrap=True)
    if not issues:
        out.print(f"{scenario}: ok")
    raise typer.Exit(2 if errors else 0)


@app.command()
@user_errors
def ledger(
    scenario: Path = typer.Argument(..., help="Scenario file."),
    turn: Optional[int] = typer.Option(None, "--turn", min=0, help="Show only the ledger after this turn."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
) -> None:
    """Print the expected ledger after each turn that changes it, with that turn's delta."""
    from judge import api
    from judge.ledger_view import ledger_json, render_ledger

    expected = api.load_ledger(scenario)
    if as_json:
        out.print_json(json.dumps(ledger_json(expected, turn)))
    else:
        render_ledger(expected, turn, out)


@app.command()
@user_errors
def schema(name: Optional[str] = typer.Argument(None, help="Format name; omit to list them.")) -> None:
    """Print the JSON Schema of a file format (scenario, event, run-header, grade-report, ...)."""
    from judge.schemas import json_schema, schema_names

    if name is None:
        for n in schema_names():
            out.print(n)
        return
    sys.stdout.write(json.dumps(json_schema(name), indent=2) + "\n")


def _register_optional() -> None:
    """Command groups built in their own modules."""
    for module in ("judge.cli_calibration", "judge.cli_prompts", "judge.cli_serve", "judge.cli_suite",
                   "judge.cli_import", "judge.cli_summary"):
        try:
            mod = __import__(module, fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        mod.register(app)


_register_optional()


def main() -> None:
    app()
