"""Issue 22, item 8 (the lint half) and item 5 (sessions): nothing guards silently.

- a rule whose tool or argument matches nothing the traces call or `--tools` declares is a
  warning naming the file, the rule's line and field, and the nearest name; the right names are
  quiet; globs and dotted paths count; each trace is read once;
- a safety-critical key guarded only by rules that read summaries is a warning;
- an `allowed-tools` rule no toolkit serves is a warning (and not with a toolkit);
- a rule on a `session` key stops at the next session: lint and grade say so; a key stated before
  the first session belongs to it; a header naming a session its turns are not in is a warning.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.api import lint_file
from judge.cli import app
from judge.grade import grade_trace
from tests.helpers import TraceBuilder, ledger_of

REPO = Path(__file__).resolve().parents[1]
TOOLKIT = REPO / "docs" / "toolkit"
TOOLS = [{"name": "issue_refund", "parameters": {"type": "object", "properties": {
    "order_id": {"type": "string"}, "amount": {"type": "number"},
    "address": {"type": "object", "properties": {"city": {"type": "string"}}}}}},
         {"name": "lookup_order", "parameters": {"type": "object", "properties": {"order_id": {}}}}]
SAFE = {"class": "constraint", "value": "v", "source_turn": 1, "sensitivity": "safety-critical"}


def _scenario(tmp_path: Path, rules: list[dict], **extra) -> Path:
    keys = sorted({r["key"] for r in rules})
    body = {"id": "s", "ledger": [{"key": k, **SAFE} for k in keys], "rules": rules, **extra}
    lines = [f"id: {body['id']}", "ledger:"] + [f"  - {json.dumps(e)}" for e in body["ledger"]]
    lines += [f"{name}: {json.dumps(value)}" for name, value in extra.items()]
    lines += ["rules:"] + [f"  - {json.dumps(r)}" for r in rules]
    path = tmp_path / "scenario.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _tools(tmp_path: Path, tools=TOOLS) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": tools}))
    return path


def _trace(tmp_path: Path, builder: TraceBuilder, name: str = "run.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in builder.lines))
    return path


def _warnings(issues):
    return [(i.field, i.line, i.message) for i in issues if i.level == "warning"]


def test_a_typo_in_a_tool_or_an_argument_names_the_nearest_with_file_line_and_field(tmp_path):
    scenario = _scenario(tmp_path, [
        {"check": "not-repeated", "key": "once", "tool": "issue-refund"},
        {"check": "scope", "key": "only", "tool": "issue_refund", "arg": "orderid", "allow": ["A-1"]},
        {"check": "forbidden-call", "key": "no_big", "tool": "issue_refund", "args": {"amout": 80}}])
    warned = _warnings(lint_file(scenario, tools=_tools(tmp_path)))
    tool, arg, args = warned
    assert tool[:2] == ("rules.0.tool", 7) and "tool 'issue-refund'" in tool[2] and "nearest: 'issue_refund'" in tool[2]
    assert arg[:2] == ("rules.1.arg", 8) and "argument 'orderid'" in arg[2] and "nearest: 'order_id'" in arg[2]
    assert args[:2] == ("rules.2.args.amout", 9) and "nearest: 'amount'" in args[2]
    assert all("--tools" in w[2] for w in warned)
    result = CliRunner().invoke(app, ["lint", str(scenario), "--tools", str(_tools(tmp_path))])
    assert result.exit_code == 0
    assert f"{scenario}:7: rules.0.tool: tool 'issue-refund' matches no tool" in result.output.replace("\n", "")


def test_right_names_globs_and_dotted_paths_are_quiet(tmp_path):
    scenario = _scenario(tmp_path, [
        {"check": "not-repeated", "key": "once", "tool": "issue_*"},
        {"check": "scope", "key": "only", "tool": "issue_refund", "arg": "address.city", "allow": ["Paris"]},
        {"check": "scope", "key": "paths", "tool": "*", "deny": ["/etc/*"]},
        {"check": "superseded-value", "key": "val", "arg": "order_id"}])
    assert _warnings(lint_file(scenario, tools=_tools(tmp_path))) == [
        ("rules.3.key", 11, "no delta sets 'val', so this rule can never fire")]


def test_traces_alone_give_the_names_their_calls_and_headers_use(tmp_path):
    t = TraceBuilder()
    t.call(1, "lookup_order", order={"order_id": "A-1"})
    t.lines[0]["tools"] = [{"name": "issue_refund"}]  # declared, never called, no parameters
    trace = _trace(tmp_path, t)
    scenario = _scenario(tmp_path, [
        {"check": "scope", "key": "a", "tool": "lookup_order", "arg": "order.order_id", "allow": ["A-*"]},
        {"check": "scope", "key": "b", "tool": "lookup_order", "arg": "order_id", "allow": ["A-*"]},
        {"check": "not-repeated", "key": "c", "tool": "issue_refund", "idempotency_arg": "anything"},
        {"check": "forbidden-call", "key": "d", "tool": "delete_order"}])
    warned = _warnings(lint_file(scenario, [trace]))
    assert [w[0] for w in warned] == ["rules.1.arg", "rules.3.tool"]
    assert "nearest: 'order.order_id'" in warned[0][2] and "in the traces" in warned[0][2]
    assert "nearest: 'lookup_order'" in warned[1][2] or "known: 'issue_refund', 'lookup_order'" in warned[1][2]


def test_each_trace_is_read_once(tmp_path, monkeypatch):
    import judge.checks.targets as targets

    opened = []

    reader = targets.TraceReader

    def counting(source, **kwargs):  # (a function: a compiled TraceReader takes no Python subclass)
        opened.append(str(source))
        return reader(source, **kwargs)

    monkeypatch.setattr(targets, "TraceReader", counting)
    t = TraceBuilder()
    for turn in range(1, 200):
        t.call(turn, "lookup_order", order_id=f"A-{turn}")
    traces = [_trace(tmp_path, t, "a.jsonl"), _trace(tmp_path, t, "b.jsonl")]
    scenario = _scenario(tmp_path, [{"check": "not-repeated", "key": "x", "tool": "lookup_ordr"}])
    warned = _warnings(lint_file(scenario, traces))
    assert sorted(opened) == sorted(map(str, traces)) and "nearest: 'lookup_order'" in warned[0][2]


def test_a_safety_key_guarded_only_by_summary_rules_is_a_warning(tmp_path):
    scenario = _scenario(tmp_path, [{"check": "summary-phrases", "key": "cap", "require": ["$50"]},
                                    {"check": "summary-phrases", "key": "ok", "require": ["x"]},
                                    {"check": "forbidden-call", "key": "ok", "tool": "refund"}])
    warned = _warnings(lint_file(scenario))
    assert [(w[0], w[1]) for w in warned] == [("rules.0.check", 6)]
    assert "'cap' is guarded only by rules that read summaries (summary-phrases)" in warned[0][2]


def test_an_allowed_tools_rule_without_a_toolkit_says_it_cannot_judge(tmp_path):
    scenario = _scenario(tmp_path, [{"check": "allowed-tools", "key": "own"}])
    alone = _warnings(lint_file(scenario))
    assert alone and alone[0][0] == "rules.0.check" and "judges only with `--tools FILE`" in alone[0][2]
    bare = TraceBuilder()
    bare.call(1, "lookup_order")
    trace = _trace(tmp_path, bare)
    with_trace = _warnings(lint_file(scenario, [trace]))
    assert "1 of 1 trace(s) declare no `tools`" in with_trace[0][2] and str(trace) in with_trace[0][2]
    assert _warnings(lint_file(scenario, [trace], tools=_tools(tmp_path))) == []
    declared = TraceBuilder()
    declared.lines[0]["tools"] = [{"name": "lookup_order"}]
    declared.call(1, "lookup_order")
    assert _warnings(lint_file(scenario, [_trace(tmp_path, declared, "declared.jsonl")])) == []
    own = _scenario(tmp_path, [{"check": "allowed-tools", "key": "own", "tools": ["lookup_*"]}])
    assert _warnings(lint_file(own)) == []


SESSIONS = [{"id": "A", "first_turn": 1}, {"id": "B", "first_turn": 10}]


def test_a_rule_on_a_session_key_says_where_it_stops(tmp_path):
    scenario = _scenario(tmp_path, [{"check": "no-leak", "key": "tenant", "values": ["globex"]}], sessions=SESSIONS)
    text = scenario.read_text().replace('"sensitivity": "safety-critical"}',
                                        '"sensitivity": "safety-critical", "persistence": "session"}')
    scenario.write_text(text)
    warned = _warnings(lint_file(scenario))
    assert [(w[0], w[1]) for w in warned] == [("rules.0.key", 6)]
    assert "stops guarding it at turn 10, where session 'B' starts" in warned[0][2]
    assert "persistence: task" in warned[0][2]
    scenario.write_text(text.replace('"persistence": "session"', '"persistence": "task"'))
    assert _warnings(lint_file(scenario)) == []


def test_the_grade_warns_about_events_after_a_session_key_ended():
    ledger = ledger_of(sessions=SESSIONS, ledger=[{"key": "no_push", "persistence": "session", **SAFE}],
                       rules=[{"check": "forbidden-call", "key": "no_push", "tool": "push"}])
    t = TraceBuilder()
    t.call(2, "status")
    late = t.call(11, "push")
    t.call(12, "push")
    report = grade_trace(ledger, t.lines)
    assert report.passed  # by the docs: session A's prohibition ended with session A
    assert any("only until turn 10" in w and "2 later event(s)" in w and f"(first {late})" in w
               for w in report.warnings), report.warnings


def test_a_key_stated_before_the_first_session_belongs_to_it():
    ledger = ledger_of(sessions=SESSIONS, ledger=[{**SAFE, "key": "no_push", "source_turn": 0,
                                                   "persistence": "session"}],
                       rules=[{"check": "forbidden-call", "key": "no_push", "tool": "push"}])
    assert ledger.history("no_push").ends_at == 10
    t = TraceBuilder()
    push = t.call(3, "push")
    assert [f.evidence_event for cp in grade_trace(ledger, t.lines).checkpoints for f in cp.findings
            if f.verdict == "violated"] == [push]


def test_a_header_naming_a_session_its_turns_are_not_in_is_warned(tmp_path):
    scenario = _scenario(tmp_path, [{"check": "forbidden-call", "key": "x", "tool": "push"}], sessions=SESSIONS)
    t = TraceBuilder()
    t.lines[0]["session"] = "B"
    t.call(1, "push")  # restarted counting at 1: session A's turns
    trace = _trace(tmp_path, t)
    warned = _warnings(lint_file(scenario, [trace]))
    assert any(w[0] == "sessions.1" and "names session 'B' (turns from 10), but its events run from turn 1" in w[2]
               for w in warned), warned
    report = grade_trace(ledger_of(sessions=SESSIONS, ledger=[{"key": "x", **SAFE}],
                                   rules=[{"check": "forbidden-call", "key": "x", "tool": "push"}]), t.lines)
    assert any("names session 'B' (turns from 10), but 2 event(s) fall outside it" in w for w in report.warnings)
    t.lines[0]["session"] = "Z"
    unknown = _warnings(lint_file(scenario, [_trace(tmp_path, t, "z.jsonl")]))
    assert any("names session 'Z', which the scenario does not declare" in w[2] for w in unknown)


def test_the_documented_typo_lints_with_the_nearest_tool():
    result = CliRunner().invoke(app, ["lint", str(TOOLKIT / "typo.yaml"), "--tools", str(TOOLKIT / "tools.json")])
    assert result.exit_code == 0, result.output
    out = result.output.replace("\n", " ")
    assert "nearest: 'issue_refund'" in out and "nearest: 'order_id'" in out


@pytest.mark.parametrize("command", ["lint", "grade"])
def test_a_bad_tools_file_is_one_line_and_exit_2(tmp_path, command):
    bad = _tools(tmp_path, [{"name": ""}])
    args = [command, str(TOOLKIT / "scenario.yaml")] + ([str(TOOLKIT / "drift.jsonl"), "--judge", "none"]
                                                       if command == "grade" else []) + ["--tools", str(bad)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "tools.0.name" in result.output
    assert len(result.output.strip().splitlines()) == 1


# ------------------------------------------------------------------ issue 39: near misses in tool names

def test_without_traces_the_scenarios_own_toolkit_catches_a_tool_named_but_for_case_or_spelling(tmp_path):
    script = {"turns": [{"turn": 1, "user": "Refund order A-1."}], "toolkit": TOOLS}
    scenario = _scenario(tmp_path, [
        {"check": "not-repeated", "key": "once", "tool": "Issue_Refund"},
        {"check": "not-repeated", "key": "twice", "tool": "isue_refund"},
        {"check": "scope", "key": "only", "tool": "lookup_order", "arg": "order_id", "allow": ["A-*"]}],
        script=script)
    warned = [w for w in _warnings(lint_file(scenario)) if w[0].endswith(".tool")]
    assert [(w[0], w[1]) for w in warned] == [("rules.0.tool", 8), ("rules.1.tool", 9)]
    assert all("nearest: 'issue_refund'" in w[2] and "the scenario's script toolkit" in w[2] for w in warned)


def test_without_traces_fixtures_and_allowed_lists_catch_a_near_miss_and_let_other_tools_be(tmp_path):
    script = {"turns": [{"turn": 1, "user": "Look up A-1."}], "fixtures": [{"tool": "lookup_order", "result": 1}]}
    scenario = _scenario(tmp_path, [
        {"check": "forbidden-call", "key": "a", "tool": "Lookup_Order"},
        {"check": "forbidden-call", "key": "b", "tool": "delete_order"},  # a tool the agent should never call
        {"check": "allowed-tools", "key": "c", "tools": ["lookup_order", "issue_refund"]},
        {"check": "not-repeated", "key": "d", "tool": "issue-refund"}], script=script)
    warned = [w for w in _warnings(lint_file(scenario)) if w[0].endswith(".tool")]
    assert [w[0] for w in warned] == ["rules.0.tool", "rules.3.tool"]
    assert "'lookup_order'" in warned[0][2] and "case" in warned[0][2]
    assert "'issue_refund'" in warned[1][2]


def test_the_grade_warns_when_a_rule_names_a_tool_of_the_run_but_for_case_or_spelling(tmp_path):
    ledger = ledger_of(ledger=[{"key": "python", "class": "fact", "value": "3.11", "source_turn": 1},
                               {"key": "no_deploy", **SAFE}, {"key": "once", **SAFE}],
                       deltas=[{"turn": 2, "op": "set", "key": "python", "value": "3.12", "source": "user"}],
                       rules=[{"check": "superseded-value", "key": "python", "tool": "Run_Tests", "arg": "python"},
                              {"check": "forbidden-call", "key": "no_deploy", "tool": "deploy_prod"},
                              {"check": "not-repeated", "key": "once", "tool": "isue_refund"}])
    t = TraceBuilder()
    t.lines[0]["tools"] = [{"name": "run_tests"}, {"name": "issue_refund"}, {"name": "deploy"}]
    t.call(3, "run_tests", python="3.11")
    report = grade_trace(ledger, t.lines)
    named = [w for w in report.warnings if "names tool" in w]
    assert len(named) == 2, report.warnings
    assert "'Run_Tests'" in named[0] and "'run_tests'" in named[0] and "case" in named[0]
    assert "'isue_refund'" in named[1] and "'issue_refund'" in named[1]
    path = _trace(tmp_path, t)
    scenario = tmp_path / "grade.yaml"
    scenario.write_text(json.dumps(ledger.scenario.model_dump(mode="json", by_alias=True, exclude_unset=True)))
    result = CliRunner().invoke(app, ["grade", str(scenario), str(path), "--judge", "none", "--no-log"],
                                env={"COLUMNS": "300"})
    assert "warning: rule superseded-value:python names tool 'Run_Tests'" in result.output, result.output
