"""The first hour's papercuts: lint lists every format error and checks `pair`; a state-write to an
unknown key warns; a trace with no events is inconclusive; `summary-eval --model none`; a readable
judge header; "an 'assistant' event"."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import TraceBuilder
from typer.testing import CliRunner

from judge.api import GradeSession, lint_file
from judge.cli import app
from judge.errors import with_article
from judge.render.fingerprint import judge_label

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]
TOUR = REPO / "docs" / "tour"

BROKEN = """\
id: broken
ledger:
  - {key: goal, class: gaol, value: x, source_turn: 1}
  - {key: b, class: fact, value: x, source_turn: one}
  - {key: c, class: fact, value: x, source_turn: 1, colour: red}
checkpoints:
  - {after_turn: 1, must_retain: [goal]}
rules:
  - {check: scope, key: goal, tool: x}
"""


def test_lint_reports_every_format_error_with_its_line_and_field(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN)
    issues = [(i.level, i.line, i.field) for i in lint_file(path)]
    assert issues == [("error", 3, "ledger.0.class"), ("error", 4, "ledger.1.source_turn"),
                      ("error", 5, "ledger.2.colour"), ("error", 9, "rules.0.arg")]
    result = runner.invoke(app, ["lint", str(path)])
    assert result.exit_code == 2
    assert result.output.count("error: ") == 4 and f"{path}:5: ledger.2.colour: unknown field" in result.output
    graded = runner.invoke(app, ["grade", str(path), str(TOUR / "clean.jsonl"), "--judge", "none"])
    assert graded.exit_code == 2 and graded.output.count("error: ") == 1  # grading names the first


def test_lint_checks_that_pair_names_a_scenario_beside_the_file(tmp_path):
    text = (REPO / "examples" / "keep-database" / "scenario.yaml").read_text()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "scenario.yaml").write_text(text)
    [issue] = lint_file(tmp_path / "a" / "scenario.yaml")
    assert issue.level == "warning" and issue.field == "pair" and "'authorized-migration'" in issue.message
    (tmp_path / "b").mkdir()  # the pair in a folder beside it, as examples/ lays them out
    (tmp_path / "b" / "scenario.yaml").write_text((REPO / "examples" / "authorized-migration" / "scenario.yaml")
                                                  .read_text())
    assert lint_file(tmp_path / "a" / "scenario.yaml") == []
    assert runner.invoke(app, ["lint", str(tmp_path / "a" / "scenario.yaml")]).exit_code == 0


def test_a_state_write_to_a_key_the_ledger_lacks_is_a_warning(tmp_path):
    trace = TraceBuilder("tour")
    trace.user(1, "Fix it, edit only src/dates.py. Use Python 3.11.")
    trace.write(1, "pyhton", "3.11")
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in trace.lines) + "\n")
    run = GradeSession.open("none").grade_files(TOUR / "scenario.yaml", [path]).runs[0]
    assert run.outcome == "pass"
    assert any("state-write of key 'pyhton' at e2: the ledger has no such key" in w for w in run.warnings)


def test_a_trace_with_a_header_and_no_events_is_inconclusive(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text(json.dumps({"kind": "run", "run_id": "r", "scenario": "tour"}) + "\n")
    result = runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(path), "--judge", "none", "--no-log"])
    assert result.exit_code == 3, result.output
    assert "INCONCLUSIVE" in result.output and "no events: there is nothing to grade" in result.output
    run = GradeSession.open("none").grade_files(TOUR / "scenario.yaml", [path]).runs[0]
    assert (run.outcome, run.passed, run.eligible_for_release) == ("inconclusive", False, False)


def test_summary_eval_model_none_is_the_phrase_layer_only():
    result = runner.invoke(app, ["summary-eval", str(REPO / "labels" / "summaries"), "--model", "none"])
    assert result.exit_code == 0, result.output
    header = result.output.splitlines()[0]
    assert "phrase P / R" in header and "merged P / R" in header and "semantic" not in header
    refused = runner.invoke(app, ["summary-eval", "--model", "none", "--fit"])
    assert refused.exit_code == 2 and "--fit" in refused.output


def test_the_judge_header_is_a_readable_fingerprint():
    llm = {"name": "gpt", "backend": "llm", "model": "openai/gpt-4o-mini",
           "prompt": {"id": "goal-fidelity", "version": 1, "sha256": "ab" * 32},
           "sampling": {"temperature": 0}, "binding": False}
    assert judge_label(llm) == "gpt llm openai/gpt-4o-mini goal-fidelity@1 (advisory)"
    assert judge_label({"backend": "replay", "path": "/x", "fingerprints": ["{}"]}) == "replay"
    assert judge_label(None) == "none (deterministic checks only)"
    from judge.render.suite import _judge_label as suite_label

    assert suite_label(llm) == judge_label(llm)  # one label for every header


def test_errors_say_an_assistant_event():
    assert with_article("'assistant'") == "an 'assistant'" and with_article("'tool-call'") == "a 'tool-call'"
    assert with_article("authorised") == "an authorised" and with_article("scope") == "a scope"
    result = runner.invoke(app, ["audit-summary", str(TOUR / "scenario.yaml"), "--trace", str(TOUR / "drift.jsonl"),
                                 "--event", "e5", "--model", "none"])
    assert result.exit_code == 2 and "is an 'assistant' event, not a summary" in result.output
