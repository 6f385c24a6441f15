"""`judge grade | lint | ledger | schema`: grade runs, check and show a scenario, print the formats."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from judge.cli.common import (
    OnJudgeError,
    console,
    distinct_outputs,
    refuse_overwriting_inputs,
    user_errors,
    write_output,
)

POLICY_HELP = ("A policy instead of a scenario: a bundled name (`agent-safety`), the name of a policy in the "
               "project's policies/ folder, or a policy file. Every TRACE is graded against it, whatever "
               "scenario its header names (or none).")


def split_files(scenario: Path, traces: list[Path] | None, policy: str | None
                ) -> tuple[Path | None, list[Path]]:
    """(the scenario, the traces) of `judge grade`'s files: with --policy every file is a trace."""
    from judge.errors import UsageError

    if policy is not None:
        return None, [scenario, *(traces or [])]
    if not traces:
        raise UsageError("give a scenario file and at least one trace (or --policy POLICY and the traces)",
                         field="TRACE")
    return scenario, list(traces)


@user_errors
def grade(
    scenario: Path = typer.Argument(..., help="Scenario file (YAML or JSON): the reviewed ledger. With --policy, "
                                    "the first trace: every file is then a trace."),
    traces: list[Path] | None = typer.Argument(None, help="One or more JSONL traces of runs of that scenario."),
    policy: str | None = typer.Option(None, "--policy", help=POLICY_HELP),
    judge: str | None = typer.Option(None, "--judge", help="Judge for semantic keys: `none` "
                                        "(deterministic checks only) or a judge name from "
                                        "[tool.judge.judges]; default: [tool.judge].default, else the "
                                        "embedded offline judge `local`."),
    config: Path | None = typer.Option(None, "--config", help="A TOML file holding a [tool.judge] "
                                          "table (default: $JUDGE_CONFIG, else the nearest pyproject.toml)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the JSON report here."),
    junit: Path | None = typer.Option(None, "--junit", help="Write a JUnit XML report here."),
    md: Path | None = typer.Option(None, "--md", help="Write a Markdown report here (for a PR)."),
    html: Path | None = typer.Option(None, "--html", help="Write a self-contained HTML page of the runs "
                                        "here: outcome, veto, first divergence, findings pinned to the trace."),
    floor: float = typer.Option(1.0, "--floor", min=0.0, max=1.0, help="Below 1.0, runs whose only "
                                "violations are non-safety ones pass while their quality score is >= floor."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report and no progress on stderr; "
                               "the exit code, and one line per `flagged` finding (what the judge read and why)."),
    on_judge_error: OnJudgeError | None = typer.Option(
        None, "--on-judge-error", case_sensitive=False, help="`inconclusive` (default: a key only a judge "
        "could decide that got no verdict makes the run inconclusive, exit 3) or `ignore`; default: "
        "[tool.judge].on_judge_error."),
    allow_draft: bool = typer.Option(False, "--allow-draft", help="Grade a scenario still marked `draft: true` "
                                     "(one `judge draft` proposed and no one has reviewed)."),
    no_log: bool = typer.Option(False, "--no-log", help="Do not keep this grade in the run log (.judge/runs/, "
                                "[tool.judge] log_dir; `judge runs list`)."),
    tools: Path | None = typer.Option(None, "--tools", help="OpenAI function schemas (JSON: a list, or "
                                         "{\"tools\": [...]}) of the tools the agent was given, e.g. `--tools "
                                         "docs/toolkit/tools.json`: the toolkit of `allowed-tools` rules for every "
                                         "run (default: each trace header's `tools`)."),
    engine: str | None = typer.Option(None, "--engine", help="A corpus only: `local` (default: --jobs worker "
                                         "processes here) or `ray[:ADDRESS]`, the tasks of a Ray cluster "
                                         "(docs/cluster.md); the report is the same."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", min=1, help="A corpus only: worker processes "
                                       "(default: one per core)."),
    sample: int = typer.Option(20, "--sample", min=0, help="A corpus only: how many failing runs the report "
                               "shows (drawn uniformly with --seed)."),
    seed: int = typer.Option(0, "--seed", help="A corpus only: the seed of the failing sample and of the "
                             "bootstrap intervals."),
    no_cache: bool = typer.Option(False, "--no-cache", help="A corpus only: grade every trace, neither reading "
                                  "nor keeping each trace's result in the run's cache (by default a trace "
                                  "whose bytes, policy, judge and judge's code are unchanged is not graded "
                                  "again: docs/cluster.md)."),
) -> None:
    """Grade TRACE(s) against SCENARIO, or against a policy (--policy) with no scenario at all. With --policy, a
    folder or a JSONL file of many traces is a corpus: its report (--json, --html) gives each policy key's
    violation rate with a 95% interval (corrected by the judge's calibration record where the judge decided)
    and a sample of failing runs; compare two with `judge corpus diff`. Exit 0: all passed (a corpus: its
    report written); 1: a veto or a failing run; 2: bad input, usage or configuration; 3: no run failed but
    one is inconclusive; 4: internal error."""
    from judge import render
    from judge.api import GradeSession, read_toolkit
    from judge.cli.progress import Activity

    scenario, traces = split_files(scenario, traces, policy)  # type: ignore[assignment]  # with --policy: None
    if policy is not None:
        from judge.api import is_corpus

        if is_corpus(traces):
            from judge.cli.corpus import grade_corpus_files

            grade_corpus_files(traces, policy, judge=judge, config=config, json_path=json_path, html=html,
                               others={"--junit": junit, "--md": md}, quiet=quiet, engine=engine, jobs=jobs,
                               sample=sample, seed=seed, tools=tools,
                               on_judge_error=on_judge_error.value if on_judge_error else None,
                               allow_draft=allow_draft, cache=not no_cache)
    if engine is not None or jobs is not None or no_cache:
        from judge.errors import UsageError

        raise UsageError("grades a corpus only (--policy and a folder or a JSONL of many traces)",
                         field="--engine" if engine is not None else "--jobs" if jobs is not None else "--no-cache")
    policy_file = Path(policy) if policy is not None and Path(policy).is_file() else None
    inputs = [scenario, policy_file, *traces, *([tools] if tools else [])]
    if scenario is not None:
        refuse_swapped(scenario, traces)
    distinct_outputs({"--json": json_path, "--junit": junit, "--md": md, "--html": html})
    refuse_overwriting_inputs([json_path, junit, md, html], inputs)
    toolkit = read_toolkit(tools) if tools is not None else None
    with Activity(not quiet) as activity:
        session = GradeSession.open(judge, config_file=config,
                                    on_judge_error=on_judge_error.value if on_judge_error else None, toolkit=toolkit)
        result = session.grade_files(scenario, traces, floor=floor, allow_draft=allow_draft, progress=activity,
                                     policy=policy)
    # Each rendering is loaded only when asked for (rich tables, XML, the page's templates).
    for path, writer in ((json_path, "json_chunks"), (junit, "report_to_junit"), (md, "report_to_markdown"),
                         (html, "grade_page")):
        if path:
            write_output(path, getattr(render, writer)(result), inputs)
    if not quiet:
        render.render_report(result, console())
    elif render.flagged_lines(result):  # a flag still says what the judge read and why: exit 3 alone does not
        render.render_flagged(result, console())
    if not no_log:
        from judge.cli.runs import log_run

        log_run(result, config, quiet=quiet)
    raise typer.Exit(session.exit_code(result))


@user_errors
def lint_cmd(scenario: Path | None = typer.Argument(None, help="Scenario file to check (with --policy: a trace, "
                                                      "if any)."),
             traces: list[Path] | None = typer.Argument(None, help="Traces of the scenario (optional): also "
                                                           "warn for each rule whose tool or argument no trace "
                                                           "calls (with the nearest name), and when a confirm "
                                                           "phrase of an `authorised` rule sits in the user message "
                                                           "that states its key."),
             policy: str | None = typer.Option(None, "--policy", help="Check a policy instead of a scenario: a "
                                                  "bundled name (`agent-safety`), a project policy's name or a "
                                                  "policy file."),
             tools: Path | None = typer.Option(None, "--tools", help="OpenAI function schemas (JSON) of the tools "
                                                  "the agent was given, e.g. `--tools docs/toolkit/tools.json`: also "
                                                  "warn for each rule whose tool or argument they do not declare "
                                                  "(with the nearest name).")
             ) -> None:
    """Report every format and fixture error of a scenario or a policy (exit 2) and warn about what would guard
    silently: safety-critical
    keys no rule guards (or only summary rules), rules that stop at a session's end and, given traces or
    --tools, rules whose tool or argument matches nothing there (with the nearest name), rules whose tool the
    scenario's own script toolkit lacks or that name a tool its fixtures or `tools` lists declare but for case or
    spelling, and confirm phrases in the message that states a guarded key; on a draft (`draft: true`),
    list what its reviewer should check."""
    from judge.api import lint_file
    from judge.draft import review_notes
    from judge.errors import FixtureError, UsageError
    from judge.ledger import resolve_policy

    out = console()
    files = [p for p in (scenario, *(traces or [])) if p is not None]
    if policy is None and not files:
        raise UsageError("give a scenario file (or --policy POLICY)", field="SCENARIO")
    scenario = resolve_policy(policy) if policy is not None else files.pop(0)
    issues = lint_file(scenario, files, tools=tools, policy=policy is not None)
    errors = [i for i in issues if i.level == "error"]
    if policy is None:
        try:
            issues += review_notes(scenario)  # none unless the file is an unreviewed draft
        except FixtureError:
            pass  # a file that breaks its format: the errors above come first
    from rich.text import Text

    for issue in issues:
        colour = {"error": "red", "warning": "yellow"}.get(issue.level, "cyan")
        out.print(Text.assemble((f"{issue.level}: ", colour), issue.render(str(scenario))), soft_wrap=True)
    if not issues:
        out.print(f"{scenario}: ok")
    raise typer.Exit(2 if errors else 0)


@user_errors
def ledger(
    scenario: Path = typer.Argument(..., help="Scenario file."),
    turn: int | None = typer.Option(None, "--turn", min=0, help="Show only the ledger after this turn."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
) -> None:
    """Print the expected ledger after each turn that changes it, with that turn's delta."""
    from judge.api import load_ledger
    from judge.render import ledger_json, render_ledger

    expected = load_ledger(scenario, allow_draft=True)  # showing a draft is part of reviewing it
    if as_json:
        console().print_json(json.dumps(ledger_json(expected, turn)))
    else:
        render_ledger(expected, turn, console())


@user_errors
def schema(name: str | None = typer.Argument(None, help="Format name; omit to list them.")) -> None:
    """Print the JSON Schema of a file format (scenario, event, run-header, grade-report, ...)."""
    from judge.api import format_schemas
    from judge.model import json_schema

    formats = format_schemas()
    if name is None:
        out = console()
        for n in formats:
            out.print(n)
        return
    sys.stdout.write(json.dumps(json_schema(name, formats), indent=2) + "\n")


def _is_trace(path: Path) -> bool:
    """Does the file start with a trace's run header (`{"kind": "run", ...}`)?"""
    import json

    try:
        with path.open("rb") as handle:
            head = handle.read(65536)
    except OSError:
        return False
    first = next((line for line in head.split(b"\n") if line.strip()), b"")
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("kind") == "run"


def refuse_swapped(scenario: Path, traces: list[Path]) -> None:
    """`judge grade TRACE SCENARIO`: a usage error that names the order, not a YAML error."""
    from judge.errors import UsageError

    if _is_trace(scenario):
        also = next((t for t in traces if t.suffix.lower() in (".yaml", ".yml", ".json") and not _is_trace(t)), None)
        hint = f" and {also} looks like the scenario" if also else ""
        raise UsageError(f"is a trace (its first line is a run header){hint}: the arguments are swapped; "
                         "judge grade takes the SCENARIO first, then TRACE...", file=str(scenario))


def register(app: typer.Typer) -> None:
    """Add `grade`, `lint`, `ledger` and `schema` to the `judge` typer app."""
    app.command()(grade)
    app.command("lint")(lint_cmd)
    app.command()(ledger)
    app.command()(schema)
