"""`judge audit-summary`, `judge continue` and `judge summary-eval`: thin commands over judge.summary,
judge.continuation and judge.summary_eval.

Exit codes as for grading: 0 every audited summary kept every required entry (continue: the summary
alone leads to an allowed action); 1 a required entry lost, distorted, stale or promoted (continue: a
forbidden action); 2 bad input or usage (one line, no traceback).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from judge.cli_common import user_errors
from judge.errors import JudgeInputError, UsageError

STATUS_STYLE = {"preserved": "green", "missing": "red", "distorted": "red", "obsolete-as-current": "red",
                "assumption-promoted": "red", "not-required": "dim", "unassessed": "yellow"}


def _consoles():
    from rich.console import Console

    out = Console(highlight=False, soft_wrap=False, emoji=False, width=None if sys.stdout.isatty() else 160)
    return out, Console(stderr=True, highlight=False, emoji=False, soft_wrap=True)


_user_errors = user_errors  # one line, exit 2: judge.cli_common


def _offline_env() -> None:
    for key, value in (("HF_HUB_OFFLINE", "1"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                       ("TOKENIZERS_PARALLELISM", "false"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")):
        os.environ.setdefault(key, value)


def _write(path: Path, text: str, inputs: list[Path]) -> None:
    if path.resolve() in {p.resolve() for p in inputs if p is not None}:
        raise JudgeInputError("refusing to write a report over an input file", file=str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise JudgeInputError(f"cannot write: {exc.strerror}", file=str(path)) from None


def _short(text: str | None, limit: int = 70) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def render_audit(audit, out) -> None:
    from rich.table import Table
    from rich.text import Text

    head = "PASS" if audit.passed else ("VETO" if audit.vetoed else "FAIL")
    colour = "green" if audit.passed else "red"
    where = f"summary {audit.summary_event} ({audit.reason})" if audit.summary_event else "summary"
    out.print(Text.assemble((f" {head} ", f"bold {colour}"),
                            f"  {audit.scenario} / {where}, ledger after turn {audit.turn}; layers: "
                            + ", ".join(audit.layers)))
    table = Table("key", "class", "sensitivity", "status", "source", *audit.layers, "evidence / detail",
                  show_lines=False, pad_edge=False)
    for f in audit.findings:
        cells = []
        for layer in audit.layers:
            found = f.layers.get(layer)
            cells.append(Text(found.status or "-", style=STATUS_STYLE.get(found.status or "", "")) if found
                         else Text("-", style="dim"))
        note = f.evidence if f.status not in ("missing", "not-required") and f.evidence else f.detail
        status = Text(f.status + (" *" if f.needs_review else ""), style=STATUS_STYLE[f.status])
        table.add_row(f.key, f.class_, f.sensitivity, status, f.source or "-", *cells, Text(_short(note)))
    out.print(table)
    if audit.lost:
        out.print(f"  lost at turn {audit.turn}: " + ", ".join(audit.lost))
    if any(f.needs_review for f in audit.findings):
        out.print("  * layers disagree: review")
    for warning in audit.warnings:
        out.print(Text(f"  warning: {warning}", style="yellow"))


def audit_summary_command(
    scenario: Path = typer.Argument(..., help="Scenario file (YAML or JSON): the reviewed ledger."),
    summary: Optional[Path] = typer.Option(None, "--summary", help="A summary as a text file (with --after-turn)."),
    after_turn: Optional[int] = typer.Option(None, "--after-turn", min=0, help="The turn the summary was written at."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="A JSONL trace: audit its summary events."),
    event: Optional[str] = typer.Option(None, "--event", help="With --trace: only this summary event."),
    judge: Optional[str] = typer.Option(None, "--judge", help="Add the judge layer: an llm judge from "
                                        "[tool.judge.judges] (default: no judge layer)."),
    config: Optional[Path] = typer.Option(None, "--config", help="A TOML file with a [tool.judge] table."),
    model: str = typer.Option("all-MiniLM-L6-v2", "--model", help="Sentence-transformers model of the "
                              "semantic layer; `none` for the phrase layer only."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Write the JSON report here."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report; exit code only."),
) -> None:
    """Audit a compaction or handoff summary: one finding per ledger entry, per layer and merged.
    Exit 0: every required entry kept; 1: one lost, distorted, stale or promoted; 2: bad input."""
    from judge import api, summary as audit_lib

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
        from judge.summary_judge import make_summary_judge

        judge_impl = make_summary_judge(judge, config_file=config)
    chosen = None if model.strip().lower() == "none" else model
    names: tuple = ()
    if trace is not None:
        from judge.trace import TraceReader

        agent = TraceReader(trace, expected_scenario=ledger.scenario.id).header.agent
        names = (agent.name, agent.version, agent.model) if agent is not None else ()
    auditor = audit_lib.SummaryAuditor(ledger, model=chosen, judge=judge_impl, names=names)
    if summary is not None:
        audits = [auditor.audit(audit_lib.read_summary_file(summary), after_turn)]
    else:
        audits = audit_lib.audit_summary_events(ledger, audit_lib.summary_events_of(trace, ledger, event),
                                                auditor=auditor)
    report = audit_lib.SummaryAuditReport(audits=audits, passed=all(a.passed for a in audits))
    if json_path is not None:
        _write(json_path, report.model_dump_json(indent=2, by_alias=True) + "\n",
               [scenario, summary, trace])
    if not quiet:
        out, _ = _consoles()
        for audit in audits:
            render_audit(audit, out)
    raise typer.Exit(audit_lib.exit_code(audits))


def continue_command(
    scenario: Path = typer.Argument(..., help="Scenario file: the reviewed ledger and its rules."),
    trace: Path = typer.Argument(..., help="The JSONL trace holding the summary event."),
    agent: str = typer.Option(..., "--agent", help="Adapter command: reads the JSON messages on stdin, "
                              "prints {\"tool\": ..., \"args\": ...} or {\"text\": ...} on stdout."),
    event: str = typer.Option(..., "--event", help="Id of the summary event to resume from."),
    next_user: Optional[str] = typer.Option(None, "--next-user", help="The next user turn (default: the "
                                            "first user event after the summary, if any)."),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Seconds per agent run."),
    strict: bool = typer.Option(False, "--strict", help="Also fail when both actions are allowed but differ."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Write the JSON report here."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No terminal report; exit code only."),
) -> None:
    """Resume the agent from the full history and from the summary alone; compare both next actions
    with the scenario's rules and with each other. Exit 0: the summary alone leads to an allowed
    action; 1: a forbidden one (or, with --strict, a different one); 2: bad input or a failing agent."""
    from rich.text import Text

    from judge import api
    from judge.continuation import continue_from_summary

    ledger = api.load_ledger(scenario)
    report = continue_from_summary(ledger, trace, event, agent, next_user=next_user, timeout=timeout,
                                   strict=strict)
    if json_path is not None:
        _write(json_path, report.model_dump_json(indent=2) + "\n", [scenario, trace])
    if not quiet:
        out, _ = _consoles()
        colour = "green" if report.passed else "red"
        out.print(Text.assemble((f" {report.verdict.upper()} ", f"bold {colour}"),
                                f"  {report.scenario} / {report.run_id}: resumed after summary "
                                f"{report.summary_event} (turn {report.summary_turn})"))
        out.print(f"  next user turn: {_short(report.next_user_text) if report.next_user_text else '(none)'}")
        for label, check in (("full history", report.full_history), ("summary alone", report.summary_only)):
            state = "allowed" if check.allowed else "FORBIDDEN"
            out.print(Text.assemble(f"  {label:<14} ", (f"{state:<9}", "green" if check.allowed else "red"),
                                    f" {_short(check.action.describe(), 100)}"))
            for hit in check.violations:
                out.print(f"                 {hit.rule}: {_short(hit.detail, 100)}")
        if report.recorded is not None:
            out.print(f"  recorded next  {_short(report.recorded.describe(), 100)}")
    raise typer.Exit(0 if report.passed else 1)


def summary_eval_command(
    labels: Path = typer.Argument(Path("labels/summaries"), help="Labelled summaries (a JSONL file or folder)."),
    fit: bool = typer.Option(False, "--fit", help="Learn the thresholds on the training split and write them."),
    out_path: Optional[Path] = typer.Option(None, "--out", help="Where --fit writes (default: the packaged "
                                            "judge/summary_thresholds.json)."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Write the measurements here."),
    model: str = typer.Option("all-MiniLM-L6-v2", "--model", help="Sentence-transformers model."),
) -> None:
    """Measure each layer of the summary audit on labelled summaries (precision and recall per finding
    type, train and held-out test split); with --fit, learn the semantic thresholds first."""
    import json

    from judge import summary_eval
    from judge.judges.minilm import load_embedding_model
    from judge.summary_semantic import THRESHOLDS_FILE

    _offline_env()
    report = summary_eval.evaluate(labels, load_embedding_model(model), fit=fit, model_name=model,
                                   out=out_path or THRESHOLDS_FILE)
    if json_path is not None:
        _write(json_path, json.dumps(report, indent=2) + "\n", [labels])
    out, _ = _consoles()
    out.print(summary_eval.markdown_table(report), markup=False)


def register(app: typer.Typer) -> None:
    """Add the summary commands to the `judge` typer app."""
    app.command("audit-summary")(_user_errors(audit_summary_command))
    app.command("continue")(_user_errors(continue_command))
    app.command("summary-eval")(_user_errors(summary_eval_command))
