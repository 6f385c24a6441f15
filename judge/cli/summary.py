"""`judge audit-summary`, `judge continue` and `judge summary-eval`: thin commands over judge.summaries.audit,
judge.summaries.continuation and judge.summaries.evaluation.

Exit codes as for grading: 0 every audited summary kept every required entry (continue: the summary
alone leads to an allowed action); 1 a required entry lost, distorted, stale or promoted (continue: a
forbidden action); 2 bad input or usage (one line, no traceback); 3 (audit-summary) inconclusive: the
judge layer failed where no other layer could decide, or no layer assessed any required entry (no
summary-phrases rules with --model none); 4 an internal error.
"""

from __future__ import annotations

from pathlib import Path

import typer

from judge.cli.common import console, distinct_outputs, refuse_overwriting_inputs, user_errors, write_output
from judge.cli.common import offline_env as _offline_env
from judge.errors import UsageError
from judge.render import render_audit, render_continuation


def _consoles():
    return console(160), None


_write = write_output


def audit_summary_command(
    scenario: Path = typer.Argument(..., help="Scenario file (YAML or JSON): the reviewed ledger."),
    summary: Path | None = typer.Option(None, "--summary", help="A summary as a text file (with --after-turn)."),
    after_turn: int | None = typer.Option(None, "--after-turn", min=0, help="The turn the summary was written at."),
    trace: Path | None = typer.Option(None, "--trace", help="A JSONL trace: audit its summary events."),
    event: str | None = typer.Option(None, "--event", help="With --trace: only this summary event."),
    judge: str | None = typer.Option(None, "--judge", help="Add the judge layer: an llm judge from "
                                        "[tool.judge.judges] (default: no judge layer)."),
    config: Path | None = typer.Option(None, "--config", help="A TOML file with a [tool.judge] table."),
    model: str = typer.Option("all-MiniLM-L6-v2", "--model", help="Sentence-transformers model of the "
                              "semantic layer; `none` for the phrase layer only."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the JSON report here."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report; exit code only."),
) -> None:
    """Audit a compaction or handoff summary: one finding per ledger entry, per layer and merged.
    Exit 0: every required entry kept; 1: one lost, distorted, stale or promoted; 2: bad input; 3: the
    judge layer failed where no other layer could decide, or no layer assessed any required entry
    (inconclusive); 4: internal error."""
    from judge import api
    from judge.model import SummaryAuditReport
    from judge.summaries import SummaryAuditor, audit_exit_code, audit_summary_events, read_summary_file

    if (summary is None) == (trace is None):
        raise UsageError("give either --summary FILE --after-turn N or --trace FILE [--event ID]")
    if summary is not None and after_turn is None:
        raise UsageError("--summary needs --after-turn N (the turn the summary was written at)")
    if summary is not None and event is not None:
        raise UsageError("--event selects a summary inside --trace")
    if trace is not None and after_turn is not None:
        raise UsageError("--after-turn goes with --summary; a trace's summary events carry their turns")
    _offline_env()
    ledger = api.load_ledger(scenario)
    judge_impl = None
    if judge is not None and judge != "none":
        from judge.summaries import make_summary_judge

        judge_impl = make_summary_judge(judge, config_file=config)
    chosen = None if model.strip().lower() == "none" else model
    names: tuple = ()
    if trace is not None:
        from judge.trace import TraceReader

        agent = TraceReader(trace, expected_scenario=ledger.scenario.id).header.agent
        names = (agent.name, agent.version, agent.model) if agent is not None else ()
    from judge.cli.progress import Activity

    with Activity(not quiet):  # a spinner while the semantic layer's model loads
        auditor = SummaryAuditor(ledger, model=chosen, judge=judge_impl, names=names)
        if summary is not None:
            assert after_turn is not None  # --summary needs --after-turn: checked above
            audits = [auditor.audit(read_summary_file(summary), after_turn)]
        else:
            from judge.summaries import positioned_summaries

            assert trace is not None  # one of --summary and --trace: checked above
            found, at = positioned_summaries(trace, ledger, event)  # each against the ledger at its event
            audits = audit_summary_events(ledger, found, auditor=auditor, at=at)
    report = SummaryAuditReport(audits=audits, passed=all(a.passed for a in audits))
    if json_path is not None:
        _write(json_path, report.model_dump_json(indent=2, by_alias=True) + "\n",
               [scenario, summary, trace])
    if not quiet:
        out, _ = _consoles()
        for audit in audits:
            render_audit(audit, out)
    raise typer.Exit(audit_exit_code(audits))


def continue_command(
    scenario: Path = typer.Argument(..., help="Scenario file: the reviewed ledger and its rules."),
    trace: Path = typer.Argument(..., help="The JSONL trace holding the summary event."),
    agent: str = typer.Option(..., "--agent", help="Adapter command: reads the JSON messages on stdin, "
                              "prints {\"tool\": ..., \"args\": ...} or {\"text\": ...} on stdout."),
    event: str = typer.Option(..., "--event", help="Id of the summary event to resume from."),
    next_user: str | None = typer.Option(None, "--next-user", help="The next user turn (default: the "
                                            "first user event after the summary, if any)."),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Seconds per agent run."),
    strict: bool = typer.Option(False, "--strict", help="Also fail when both actions are allowed but differ."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the JSON report here."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report; exit code only."),
) -> None:
    """Resume the agent from the full history and from the summary alone; compare both next actions
    with the scenario's rules and with each other. Exit 0: the summary alone leads to an allowed
    action; 1: a forbidden one (or, with --strict, a different one); 2: bad input or a failing agent."""
    from judge import api
    from judge.summaries import continue_from_summary

    ledger = api.load_ledger(scenario)
    report = continue_from_summary(ledger, trace, event, agent, next_user=next_user, timeout=timeout,
                                   strict=strict)
    if json_path is not None:
        _write(json_path, report.model_dump_json(indent=2) + "\n", [scenario, trace])
    if not quiet:
        render_continuation(report, _consoles()[0])
    raise typer.Exit(0 if report.passed else 1)


def summary_eval_command(
    labels: Path = typer.Argument(Path("labels/summaries"), help="Labelled summaries (a JSONL file or folder)."),
    fit: bool = typer.Option(False, "--fit", help="Learn the thresholds on the training split and write them."),
    out_path: Path | None = typer.Option(None, "--out", help="Where --fit writes (default: the packaged "
                                            "judge/summaries/thresholds.json)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the measurements here."),
    model: str = typer.Option("all-MiniLM-L6-v2", "--model", help="Sentence-transformers model of the "
                              "semantic layer; `none` for the phrase layer only (as in audit-summary)."),
) -> None:
    """Measure each layer of the summary audit on labelled summaries (precision and recall per finding
    type, train and held-out test split); with --fit, learn the semantic thresholds first."""
    import json

    from judge.cli.progress import Activity
    from judge.summaries import THRESHOLDS_FILE, evaluate_layers, evaluation_table
    from judge.text import load_embedding_model

    _offline_env()
    distinct_outputs({"--out": out_path, "--json": json_path})
    refuse_overwriting_inputs([out_path, json_path], [labels])
    phrase_only = model.strip().lower() == "none"
    if phrase_only and fit:
        raise UsageError("--fit learns the semantic layer's thresholds: it needs a --model, not `none`")
    with Activity(not phrase_only):
        loaded = None if phrase_only else load_embedding_model(model)
    report = evaluate_layers(labels, loaded, fit=fit, model_name=model, out=out_path or THRESHOLDS_FILE)
    if json_path is not None:
        _write(json_path, json.dumps(report, indent=2) + "\n", [labels])
    out, _ = _consoles()
    out.print(evaluation_table(report), markup=False)


def register(app: typer.Typer) -> None:
    """Add the summary commands to the `judge` typer app."""
    app.command("audit-summary")(user_errors(audit_summary_command))
    app.command("continue")(user_errors(continue_command))
    app.command("summary-eval")(user_errors(summary_eval_command))
