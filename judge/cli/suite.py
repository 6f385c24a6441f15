"""`judge suite` and `judge slice`: thin typer commands over judge.suite and judge.grade.slice.

Exit codes: `suite` (and `suite merge`: judge.cli.suite_merge) 0 when the release rules pass, 1 when
they fail, 3 when no rule failed but a run was inconclusive (a shard, `--shard K/N`: 0 once its part is
written), 130 when interrupted (Ctrl-C: the workers are terminated, one line on stderr); `slice` 0 when re-grading the
slice reproduces the first divergence (or it came
from the judge), 1 when it does not; both 2 on bad input or configuration (one line on stderr, no
traceback) and 4 on an internal error.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from judge.cli.common import OnJudgeError, distinct_outputs, user_errors
from judge.cli.common import console as _out
from judge.cli.common import write_output as _write
from judge.model import read_json_file


def _default_judge(judge: str | None, config: Path | None) -> str | None:
    """`none` -> no judge; no option -> `[tool.judge].default` (as `judge grade`), else `local`."""
    if judge == "none":
        return None
    if judge is not None:
        return judge
    from judge.config import configured_judges

    return configured_judges(config_file=config)[1]


ENGINE_HELP = ("Where the runs are graded: `local` (default: --jobs worker processes here) or `ray[:ADDRESS]`, the "
               "tasks of a Ray cluster (ADDRESS as ray.init takes it, e.g. 127.0.0.1:6379; none: RAY_ADDRESS, else a "
               "new Ray instance here); the report is the same. Needs `pip install 'judge-drift[ray]'`; "
               "docs/cluster.md.")


@user_errors
def suite_command(
    manifest: Path = typer.Argument(..., help="Suite manifest (YAML or JSON): suites, releaseRules, scenarios."),
    suite: str | None = typer.Option(None, "--suite", help="Suite to run (may be omitted when there is one)."),
    judge: str | None = typer.Option(None, "--judge", help="`none` (deterministic checks only) or a judge "
                                        "name; default: [tool.judge].default, as for `judge grade`."),
    config: Path | None = typer.Option(None, "--config", help="A TOML file holding a [tool.judge] table."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the JSON report here."),
    junit: Path | None = typer.Option(None, "--junit", help="Write a JUnit XML report here."),
    md: Path | None = typer.Option(None, "--md", help="Write a Markdown report here."),
    html: Path | None = typer.Option(None, "--html", help="Write a self-contained HTML page of the suite "
                                        "here: the release, each run's outcome and findings on its trace."),
    compare: Path | None = typer.Option(None, "--compare", help="An older suite JSON report: show the "
                                           "failure signatures that appeared or vanished since."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", min=1, help=(
        "Processes grading runs (default: one per core). With --judge none and every trace at most 1 MB "
        "the suite's own process is one of them (one worker fewer is forked).")),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar (shown only on a terminal) "
                               "and no terminal report."),
    on_judge_error: OnJudgeError | None = typer.Option(
        None, "--on-judge-error", case_sensitive=False, help="`inconclusive` or `ignore`, as for `judge grade`; "
        "default: [tool.judge].on_judge_error."),
    allow_draft: bool = typer.Option(False, "--allow-draft", help="Grade scenarios still marked `draft: true`."),
    shard: str | None = typer.Option(None, "--shard", help="K/N: grade only shard K of N (run i, in manifest "
                                        "order from 0, is shard (i mod N) + 1) into a part; see `judge suite merge`."),
    out: Path | None = typer.Option(None, "--out", help="With --shard: write the shard's part (JSON) here."),
    tools: Path | None = typer.Option(None, "--tools", help="OpenAI function schemas (JSON) of the tools the "
                                         "agent was given, e.g. `--tools docs/toolkit/tools.json`: the toolkit of "
                                         "`allowed-tools` rules for every run (default: each trace header's `tools`)."),
    policy: str | None = typer.Option(None, "--policy", help="A policy (a bundled name such as `agent-safety`, a "
                                         "project policy's name or a file) for every scenario without a `policy` of "
                                         "its own: merged into its scenario's keys, or graded alone for an entry "
                                         "with no `file`."),
    engine: str | None = typer.Option(None, "--engine", help=ENGINE_HELP),
) -> None:
    """Grade every run of a suite and decide the release. Exit 0: the release rules pass; 1: they fail;
    2: bad input or configuration; 3: no rule failed but a run was inconclusive; 4: internal error;
    130: interrupted (Ctrl-C stops the workers at once; no report is written)."""
    try:
        _suite(manifest, suite, judge, config, json_path, junit, md, html, compare, jobs, quiet, on_judge_error,
               allow_draft, shard, out, tools, policy, engine)
    except KeyboardInterrupt:  # the workers are stopped already (judge.suite.pool); nothing was written
        from judge.cli.common import err

        err.print(Text.assemble(("interrupted: ", "yellow"), "the suite's workers were stopped; no report was written"))
        raise typer.Exit(EXIT_INTERRUPTED) from None


EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C


def _suite(manifest: Path, suite: str | None, judge: str | None, config: Path | None,
           json_path: Path | None, junit: Path | None, md: Path | None, html: Path | None,
           compare: Path | None, jobs: int | None, quiet: bool, on_judge_error: OnJudgeError | None,
           allow_draft: bool, shard: str | None, out: Path | None, tools: Path | None,
           policy: str | None = None, engine: str | None = None) -> None:
    from judge.api import parse_engine
    from judge.render import json_chunks, render_suite, suite_to_junit, suite_to_markdown
    from judge.suite import compare_reports, exit_code, grade_suite

    if shard is not None or out is not None:  # one shard of the suite, into a part (judge.cli.suite_merge)
        from judge.cli.suite_merge import grade_shard

        grade_shard(manifest, shard, out,
                    {"--json": json_path, "--junit": junit, "--md": md, "--html": html, "--compare": compare},
                    quiet, suite=suite, judge_name=_default_judge(judge, config), config_file=config, jobs=jobs,
                    on_judge_error=on_judge_error.value if on_judge_error else None, allow_draft=allow_draft,
                    tools=tools, policy=policy, engine=parse_engine(engine))
    distinct_outputs({"--json": json_path, "--junit": junit, "--md": md, "--html": html})
    old = None
    if compare is not None:
        old = read_json_file(compare, "a JSON suite report")
    from judge.cli.progress import Activity

    with Activity(not quiet) as bar:  # on a terminal only: no bar in CI logs
        run = grade_suite(manifest, suite, judge_name=_default_judge(judge, config), config_file=config,
                          jobs=jobs, progress=bar, on_judge_error=on_judge_error.value if on_judge_error else None,
                          allow_draft=allow_draft, keep_reports=html is not None, tools=tools, policy=policy,
                          engine=parse_engine(engine))
    report = run.report
    if old is not None:
        report.compare = compare_reports(report, old, str(compare))
    inputs = [manifest, *([compare] if compare else []), *([tools] if tools else [])]
    inputs += [Path(s.file) for s in report.scenarios] + [Path(r.trace) for s in report.scenarios
                                                           for r in s.results if r.trace]
    if json_path:
        _write(json_path, json_chunks(report), inputs)  # (written in pieces)
    if junit:
        _write(junit, suite_to_junit(report), inputs)
    if md:
        _write(md, suite_to_markdown(report), inputs)
    if html:
        from judge.render import suite_page

        _write(html, suite_page(report, run.run_reports), inputs)
    if not quiet:
        render_suite(report, _out())
    raise typer.Exit(exit_code(report))


@user_errors
def slice_command(
    report: Path = typer.Argument(..., help="A grade report (`judge grade --json`) or suite report "
                                            "(`judge suite --json`)."),
    run: str = typer.Option(..., "--run", help="Run id of the failing run."),
    out: Path = typer.Option(..., "-o", "--out",
                             help="Folder to write scenario.yaml, trace.jsonl and slice.json into."),
    scenario: Path | None = typer.Option(None, "--scenario", help="The run's scenario file (default: the "
                                            "one the report names, else a file with its id beside the trace)."),
    trace: Path | None = typer.Option(None, "--trace", help="The run's trace file (default: the one the "
                                         "report names, found from the current folder or the report's); it must "
                                         "hold what was graded (the report's sha256)."),
) -> None:
    """Cut the minimal failing slice of a run (last passing checkpoint through first divergence) into a
    standalone scenario and trace that re-grade to the same first divergence."""
    from judge.api import write_slice

    result = write_slice(report, run, out, scenario=scenario, trace=trace)
    console = _out()
    d = result.divergence
    console.print(f"slice of {run}: {len(result.events)} event(s) ({', '.join(result.events[:6])}"
                  f"{' ...' if len(result.events) > 6 else ''}), {len(result.keys)} ledger key(s)"
                  + (f", context {', '.join(result.context)}" if result.context else ""))
    console.print(f"first divergence: turn {d.turn}, key {d.key}, event {d.event}, rule {d.rule or 'judge'}")
    style = {True: "green", False: "bold red", None: "yellow"}[result.verified]
    console.print(Text(result.note, style))
    console.print(f"re-grade: judge grade {result.scenario} {result.trace} --judge none")
    raise typer.Exit(1 if result.verified is False else 0)


SUITE_EPILOG = ("Example:\n"
                "judge suite examples/suite/suite.yaml --suite nightly --judge none --html suite.html\n"
                "judge suite examples/suite/suite.yaml --judge none --shard 1/2 --out part-1.json\n"
                "judge suite merge part-1.json part-2.json --junit suite.xml")


def register(app: typer.Typer) -> None:
    """Add `suite` and `slice` to the `judge` typer app."""
    from judge.cli.suite_merge import SuiteCommand

    app.command("suite", cls=SuiteCommand, epilog=SUITE_EPILOG)(suite_command)
    app.command("slice")(slice_command)
