"""`judge run`: drive an agent through a scripted scenario (judge.suite.drive): parse, call, render.

Exit codes: as `judge suite`, from the release decision over every run driven: 0 every run passed and
no safety-critical key was violated, 1 a run failed (a stressor broke a key), 3 no run failed but one
was inconclusive (the agent crashed, hung, answered garbage or broke a limit, or a stressor was never
exercised); with --pair 0 state-sensitive, 1 not, 3 same actions or inconclusive; 2 bad input or usage;
4 internal error; 130 interrupted (Ctrl-C: the agent's processes are killed, the runs finished so far
stay in the output folder).
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

from judge.cli.common import console, error_line, user_errors, write_output

PAIR_EXIT = {"state-sensitive": 0, "not-state-sensitive": 1, "same-actions": 3, "inconclusive": 3}
INTERRUPTED = 130


def _folder(out: Path | None, scenario: Path) -> Path:
    if out is not None:
        return out
    return Path(".judge") / "drive" / f"{scenario.stem if scenario.stem != 'scenario' else scenario.parent.name}-" \
                                      f"{time.strftime('%Y%m%d-%H%M%S')}"


@user_errors
def run_command(
    scenario: Path = typer.Argument(..., help="A scenario file with a `script:` (user messages and tool fixtures)."),
    agent: str = typer.Option(..., "--agent", help="The agent: a command (reads the JSON messages on stdin, prints "
                              "its action as JSON on stdout, as for `judge continue`), a Python entry point "
                              "`module:function` or `path/file.py:function`, or an OpenAI-compatible endpoint "
                              "`http://HOST/v1` (with --model)."),
    stress: list[str] | None = typer.Option(None, "--stress", metavar="STRESS", help="A stressor to run, "
                                               "KIND[:ARG] (repeatable; `+` combines): distance:N, distraction, "
                                               "correction:KEY=VALUE, tool-contradiction:TOOL, "
                                               "compaction:TURN[=script], "
                                               "failed-action:TOOL[=timeout|error|partial], handoff:TURN[=script]; "
                                               "`all`: the "
                                               "control and every stressor the scenario supports. Default: the "
                                               "control alone."),
    repeat: int = typer.Option(1, "--repeat", "-n", min=1, max=1000, help="Runs of each variant."),
    out: Path | None = typer.Option(None, "-o", "--out", help="A new or empty folder for the traces, grades and "
                                       "reports (default: .judge/drive/NAME-TIME)."),
    pair: bool = typer.Option(False, "--pair", help="Drive both halves of the scenario's `pair` and report whether "
                              "the agent behaved state-sensitively."),
    model: str | None = typer.Option(None, "--model", metavar="NAME", help="The model an endpoint agent serves."),
    agent_name: str | None = typer.Option(None, "--agent-name", metavar="NAME",
                                          help="The agent's name in the run headers "
                                             "(default: from --agent)."),
    handoff_agent: str | None = typer.Option(None, "--handoff-agent", metavar="COMMAND", help="Who takes over "
                                                "at a handoff (as --agent; default: the same agent, fresh context)."),
    seed: int = typer.Option(0, "--seed", help="Seed of run 1 (run N gets seed + N - 1): JUDGE_RUN_SEED, an "
                             "endpoint's `seed`."),
    max_steps: int = typer.Option(12, "--max-steps", min=1, help="The turn limit: agent actions in one turn "
                                  "without an answer to the user."),
    deadline: float = typer.Option(300.0, "--deadline", min=0.1, help="Seconds of wall clock per run."),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Seconds per agent step."),
    tools: Path | None = typer.Option(None, "--tools", help="OpenAI function schemas (JSON) of the tools the "
                                         "agent is given (default: the script's toolkit)."),
    fixtures: Path | None = typer.Option(None, "--fixtures", help="Answer the tools from this fixtures file "
                                            "(`--record` writes one) instead of the script's fixtures."),
    record: bool = typer.Option(False, "--record", help="Write what the run's tools returned to OUT/fixtures.yaml "
                                "(replay it with --fixtures); the agent is told JUDGE_RUN_MODE=record."),
    judge: str | None = typer.Option(None, "--judge", help="As for `judge grade`: `none` (deterministic "
                                        "checks only) or a judge name; default: [tool.judge].default."),
    config: Path | None = typer.Option(None, "--config", help="A TOML file holding a [tool.judge] table."),
    floor: float = typer.Option(1.0, "--floor", min=0.0, max=1.0, help="As for `judge grade`."),
    junit: Path | None = typer.Option(None, "--junit", help="Write the suite report as JUnit XML here."),
    md: Path | None = typer.Option(None, "--md", help="Write the suite report as Markdown here."),
    allow_draft: bool = typer.Option(False, "--allow-draft", help="Drive a scenario still marked `draft: true`."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report; exit code only."),
) -> None:
    """Drive an agent through SCENARIO's script: the control and each stressor, N times each; record every
    run as a trace, grade it as `judge grade` does and report which stressor first broke which key.
    Exit 0: every run passed; 1: a run failed; 2: bad input; 3: a run inconclusive; 4: internal error.
    Docs: docs/drive.md (test your agent)."""
    from judge.render import render_drive, suite_to_junit, suite_to_markdown
    from judge.suite import DriveLimits, DriveOptions, drive_pair, drive_scenario, exit_code

    folder = _folder(out, scenario)
    options = DriveOptions(agent=agent, model=model, agent_name=agent_name, handoff_agent=handoff_agent,
                           stresses=list(stress or []), repeat=repeat, seed=seed,
                           limits=DriveLimits(max_steps=max_steps, deadline_s=deadline, timeout_s=timeout),
                           judge=judge, config_file=config, tools=tools, fixtures=fixtures, record=record,
                           allow_draft=allow_draft, floor=floor)
    from judge.cli.progress import Activity

    try:
        with Activity(not quiet, label="driving the agent") as activity:
            result = (drive_pair if pair else drive_scenario)(scenario, folder, options,
                                                              progress=lambda done, total, _: activity(done, total))
    except KeyboardInterrupt:
        error_line(f"interrupted: the agent's processes were killed; finished runs are in {folder}/")
        raise typer.Exit(INTERRUPTED) from None
    inputs = [scenario, *([tools] if tools else []), *([fixtures] if fixtures else [])]
    for path, text in ((junit, suite_to_junit), (md, suite_to_markdown)):
        if path:
            write_output(path, text(result.report.suite), inputs)
    if not quiet:
        render_drive(result.report, console(), folder=str(folder))
        if result.recorded is not None:
            console().print(f"tool results recorded in {result.recorded}: replay them with "
                            f"--fixtures {result.recorded}")
    if result.report.pair is not None:
        raise typer.Exit(PAIR_EXIT[result.report.pair.verdict])
    raise typer.Exit(exit_code(result.report.suite))


def register(app: typer.Typer) -> None:
    """Add `run` to the `judge` typer app."""
    app.command("run")(run_command)
