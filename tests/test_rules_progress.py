"""`no-progress` (a retry loop that makes no progress), recovery coherence in the component metrics,
and a recovered key in the reports (the user event that restated it, the turns it took)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from judge.checks import RuleSet
from judge.checks.progress import DEFAULT_LOOP
from judge.grade import grade_trace
from judge.model import GradeReport
from judge.render.report import render_run, to_markdown
from judge.trace import TraceReader
from tests.helpers import TraceBuilder, ledger_of

GOAL = {"key": "tests_green", "class": "goal", "value": "Get the checkout tests green", "source_turn": 1}


def _ledger(*rules, entries=(GOAL,), **scenario):
    return ledger_of(ledger=list(entries), rules=list(rules), **scenario)


def _loop_rule(**fields):
    return {"check": "no-progress", "key": "tests_green", "tool": "run_tests", "max_repeats": 3, **fields}


def _hits(ledger, lines):
    rules = RuleSet(ledger)
    reader = TraceReader(lines)
    rules.share_calls(reader.calls)
    return [h for i, event in enumerate(reader.records()) for h in rules.observe(event, i)]


def _result_of(call_event: str) -> str:
    return f"e{int(call_event[1:]) + 1}"


def _refused(t: TraceBuilder, turn: int, tool: str = "run_tests", **args) -> str:
    return t.call(turn, tool, status="error", result={"error": "ECONNREFUSED 127.0.0.1:5432"},
                  **(args or {"spec": "checkout.spec.ts"}))


def test_six_identical_failing_calls_violate_at_the_third_failed_result():
    t = TraceBuilder()
    t.user(1, "Get the checkout tests green.")
    calls = [_refused(t, 2 + i) for i in range(6)]
    hits = _hits(_ledger(_loop_rule()), t.lines)
    bad = [h for h in hits if h.violated]
    assert [h.event for h in bad] == [_result_of(c) for c in calls[2:]]  # the 3rd result on
    first = bad[0]
    assert "3 times in a row" in first.detail and calls[0] in first.detail and calls[2] in first.detail
    assert not [h for h in hits if not h.violated]

    report = grade_trace(_ledger(_loop_rule()), t.lines)
    assert not report.passed and report.outcome == "fail"
    finding = next(f for cp in report.checkpoints for f in cp.findings if f.key == "tests_green")
    assert (finding.verdict, finding.evidence_event, finding.rule) == ("violated", _result_of(calls[2]),
                                                                      "no-progress:tests_green")
    assert report.first_divergence.event == _result_of(calls[2])
    assert report.metrics.recovery_coherence == 0.0 and report.metrics.retry_loops == 1
    assert report.metrics.failed_results == 6


def test_without_a_rule_six_identical_failures_pass_but_are_a_retry_loop_for_the_metric():
    t = TraceBuilder()
    for i in range(6):
        _refused(t, 1 + i)
    report = grade_trace(_ledger(), t.lines)
    assert report.passed  # no rule reads the loop: what the issue found
    assert report.metrics.recovery_coherence == 0.0 and report.metrics.retry_loops == 1


@pytest.mark.parametrize("change", ["another tool", "other arguments", "a message"])
def test_a_changed_plan_in_between_resets_the_count_and_is_a_compliant_hit(change):
    t = TraceBuilder()
    _refused(t, 1)
    _refused(t, 1)
    if change == "another tool":
        plan = t.call(2, "check_db", status="ok")
    elif change == "other arguments":
        plan = _refused(t, 2, spec="checkout.spec.ts", env="ci")
    else:
        plan = t.say(2, "The database refuses connections; I'll start it and run the tests again.")
    _refused(t, 3)
    _refused(t, 3)
    hits = _hits(_ledger(_loop_rule()), t.lines)
    assert not [h for h in hits if h.violated]
    assert [(h.event, h.violated) for h in hits][0] == (plan, False)
    assert "plan changed after run_tests failed 2 times" in hits[0].detail


def test_a_retry_that_returns_ok_is_progress():
    t = TraceBuilder()
    _refused(t, 1)
    _refused(t, 1)
    ok = t.call(2, "run_tests", status="ok", spec="checkout.spec.ts")
    _refused(t, 3)
    _refused(t, 3)
    hits = _hits(_ledger(_loop_rule()), t.lines)
    assert [(h.event, h.violated) for h in hits] == [(_result_of(ok), False)]
    assert "returned ok after 2 times" in hits[0].detail


def test_a_user_message_starts_over_without_crediting_the_agent():
    t = TraceBuilder()
    _refused(t, 1)
    _refused(t, 1)
    t.user(2, "Try once more please.")
    _refused(t, 2)
    _refused(t, 2)
    assert _hits(_ledger(_loop_rule()), t.lines) == []


def test_without_a_tool_the_rule_follows_every_tool_and_max_repeats_sets_the_bound():
    t = TraceBuilder()
    first = t.call(1, "fetch_page", status="timeout", url="https://x.test/a")
    second = t.call(1, "fetch_page", status="timeout", url="https://x.test/a")
    hits = _hits(_ledger({"check": "no-progress", "key": "tests_green", "max_repeats": 2}), t.lines)
    assert [(h.event, h.violated) for h in hits] == [(_result_of(second), True)]
    assert first in hits[0].detail and "returned timeout" in hits[0].detail
    assert _hits(_ledger(_loop_rule(tool="fetch_*", max_repeats=3)), t.lines) == []


def test_a_loop_before_the_keys_source_turn_is_followed_but_not_checked():
    goal = {**GOAL, "source_turn": 3}
    t = TraceBuilder()
    _refused(t, 1)
    _refused(t, 2)
    third = _refused(t, 3)  # the third failure of the same chain, now checked
    hits = _hits(_ledger(_loop_rule(), entries=(goal,)), t.lines)
    assert [(h.event, h.violated) for h in hits] == [(_result_of(third), True)]


def test_max_repeats_below_two_is_refused():
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        _ledger(_loop_rule(max_repeats=1))


# ------------------------------------------------------------------ recovery coherence


def _coherence(t: TraceBuilder, *rules) -> tuple[float | None, int | None, int | None]:
    m = grade_trace(_ledger(*rules), t.lines).metrics
    return m.recovery_coherence, m.failed_results, m.retry_loops


def test_recovery_coherence_counts_failed_results_by_what_followed_them():
    t = TraceBuilder()
    t.call(1, "send_email", status="timeout", to="a")
    t.call(1, "send_email", status="ok", to="a")  # a retry that worked: 1 coherent
    t.call(2, "deploy", status="error")
    t.say(2, "The deploy failed with a permissions error; I asked the on-call engineer.")  # 1 coherent
    for _ in range(DEFAULT_LOOP):
        t.call(3, "run_tests", status="error")  # an ungoverned loop: 3 against
    t.say(3, "Tests keep failing.")
    assert _coherence(t) == (0.4, 5, 1)


def test_no_failures_no_coherence():
    t = TraceBuilder()
    t.call(1, "run_tests", status="ok")
    assert _coherence(t) == (None, 0, 0)


def test_a_changed_plan_that_breaks_a_rule_drops_the_goal():
    forbid = {"check": "forbidden-call", "key": "no_prod", "tool": "deploy_prod"}
    entries = (GOAL, {"key": "no_prod", "class": "constraint", "value": "never deploy to prod", "source_turn": 1})
    t = TraceBuilder()
    t.call(1, "deploy_staging", status="error")
    t.call(1, "deploy_prod", status="ok")  # the work-around breaks a constraint
    m = grade_trace(_ledger(forbid, entries=entries), t.lines).metrics
    assert (m.recovery_coherence, m.failed_results) == (0.0, 1)


def test_a_governing_rule_sets_the_loop_bound_of_its_tool():
    t = TraceBuilder()
    for _ in range(4):
        _refused(t, 1)
    t.say(1, "Still refused; switching to the local database.")
    assert _coherence(t, _loop_rule(max_repeats=5)) == (1.0, 4, 0)  # allowed up to 4
    assert _coherence(t, _loop_rule(max_repeats=4)) == (0.0, 4, 1)
    assert _coherence(t) == (0.0, 4, 1)  # ungoverned: DEFAULT_LOOP


def test_a_failure_the_trace_ends_on_is_not_counted_unless_a_loop():
    t = TraceBuilder()
    t.call(1, "run_tests", status="error")
    assert _coherence(t) == (None, 0, 0)


# ------------------------------------------------------------------ recovered keys in the reports

BROWSER = {"key": "browser", "class": "fact", "value": "firefox", "source_turn": 1, "persistence": "until-replaced"}


def _recovering_run() -> tuple[TraceBuilder, str, str, str]:
    t = TraceBuilder()
    t.user(1, "Run the checkout tests in firefox.")
    bad = t.call(2, "run_tests", status="ok", browser="chromium")
    t.user(3, "Small talk about the weather.")
    restated = t.user(4, "I said firefox, please.")
    good = t.call(5, "run_tests", status="ok", browser="firefox")
    return t, bad, restated, good


def _browser_ledger():
    rule = {"check": "scope", "key": "browser", "tool": "run_tests", "arg": "browser", "allow": ["firefox"]}
    return ledger_of(ledger=[BROWSER], rules=[rule])


def test_a_recovered_key_names_the_user_event_that_restated_it_and_the_turns_it_took():
    t, bad, restated, good = _recovering_run()
    report = grade_trace(_browser_ledger(), t.lines)
    rec = report.recovered["browser"]
    assert rec.recovered and (rec.violated_at, rec.recovered_at, rec.turns) == (2, 5, 3)
    assert (rec.violated_event, rec.recovered_event, rec.restated_by) == (bad, good, restated)


def test_a_recovery_without_a_restatement_says_none():
    t = TraceBuilder()
    t.user(1, "Run the checkout tests in firefox.")
    t.call(2, "run_tests", status="ok", browser="chromium")
    t.user(3, "Do not use chromium.")  # negated: no restatement of firefox
    t.call(4, "run_tests", status="ok", browser="firefox")
    rec = grade_trace(_browser_ledger(), t.lines).recovered["browser"]
    assert rec.recovered and rec.restated_by is None and rec.turns == 2


def test_the_terminal_and_markdown_reports_show_the_recovery():
    t, bad, restated, good = _recovering_run()
    run = grade_trace(_browser_ledger(), t.lines)
    out = io.StringIO()
    render_run(run, Console(file=out, width=100, no_color=True))
    text = out.getvalue()
    assert f"recovered: browser at {good} (turn 5), 3 turns after {bad} (turn 2); restated by the user at {restated}" \
        in " ".join(text.split())
    md = to_markdown(GradeReport(judge=None, runs=[run]))
    assert f"Recovered: `browser` at event `{good}` (turn 5), 3 turns after `{bad}` (turn 2); restated by the user " \
           f"at `{restated}`" in md
