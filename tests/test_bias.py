"""The bias battery (`judge bias`): each perturbation changes what it says and nothing a rule reads
(the bundled examples grade to the same deterministic findings once perturbed), the candidate's
model name never reaches a judge, an order-biased LLM judge is caught and refused certification
through the scripted server while a consistent one passes, and `--record` makes the record's
certification need both gates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import TraceBuilder
from llm_server import llm_server  # noqa: F401
from trust_data import HEADER_MODEL, consistent_judge, order_biased_judge, write_project
from typer.testing import CliRunner

from judge.cli import app
from judge.grade.bias.perturb import (
    DISTRACTOR,
    NEUTRAL,
    insert_distractor,
    name_model,
    pad_events,
    pad_text,
    paraphrase,
    reorder_events,
    swappable,
)
from judge.grade.run import grade_trace
from judge.ledger import load_ledger
from judge.text import cues
from judge.trace import read_trace

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p for p in (REPO / "examples").glob("*/*.jsonl") if (p.parent / "scenario.yaml").exists())
runner = CliRunner()


def _events(lines: list[dict], tmp_path: Path, name: str = "t.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return read_trace(path)[1]


# ---------------------------------------------------------------- the perturbations themselves


def test_only_order_free_neighbours_swap(tmp_path):
    t = TraceBuilder()
    t.user(1, "go")
    t.say(1, "ok")
    t.write(1, "k", "done")
    t.write(1, "j", "x")
    t.call(2, "a")
    t.call(2, "b")
    events = _events(t.lines, tmp_path)
    by_id = {e.id: e for e in events}
    assert swappable(by_id["e2"], by_id["e3"])  # assistant / state-write
    assert swappable(by_id["e3"], by_id["e4"])  # state-writes of two keys
    assert not swappable(by_id["e1"], by_id["e2"])  # a user message is never moved
    assert not swappable(by_id["e5"], by_id["e6"])  # a call and its result
    assert not swappable(by_id["e6"], by_id["e7"])  # a result and the next call
    assert [e.id for e in reorder_events(events)] == ["e1", "e3", "e2", "e4", "e5", "e6", "e7", "e8"]


def test_results_of_parallel_calls_to_different_tools_swap(tmp_path):
    lines = TraceBuilder().lines + [
        {"id": "a", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "search", "args": {}},
        {"id": "b", "turn": 1, "kind": "tool-call", "call_id": "c2", "tool": "lookup", "args": {}},
        {"id": "c", "turn": 1, "kind": "tool-result", "call_id": "c1", "tool": "search", "status": "ok"},
        {"id": "d", "turn": 1, "kind": "tool-result", "call_id": "c2", "tool": "lookup", "status": "ok"}]
    assert [e.id for e in reorder_events(_events(lines, tmp_path))] == ["a", "b", "d", "c"]
    same_tool = [dict(line, tool="search") if line.get("kind") in ("tool-call", "tool-result") else line
                 for line in lines]
    assert reorder_events(_events(same_tool, tmp_path, "same.jsonl")) is None


def test_padding_doubles_the_words_with_words_that_carry_no_cue():
    text = "I ran the tests and they pass."
    padded = pad_text(text)
    assert padded.startswith(text) and len(padded.split()) == 2 * len(text.split())
    neutral = " ".join(NEUTRAL + DISTRACTOR.split())
    assert not cues.families_of(neutral), cues.families_of(neutral)
    assert not cues.has_negation(neutral) and not cues.claims_completion(neutral)
    from judge.summaries import cues as summary_cues

    assert not summary_cues.has_restriction(neutral) and not summary_cues.done_word(neutral)


def test_paraphrase_rewords_ledger_phrasing_and_leaves_identifiers():
    assert paraphrase("Do not deploy to production") == "Never deploy to prod"
    assert paraphrase("Only edit tests/checkout.spec.ts") == "Solely modify tests/checkout.spec.ts"
    assert paraphrase("edit_file on src/edit.ts, web-07, use_case") == "edit_file on src/edit.ts, web-07, use_case"


def test_the_distractor_never_separates_a_call_from_its_result(tmp_path):
    t = TraceBuilder()
    t.call(1, "a")
    t.call(1, "b")
    events = _events(t.lines, tmp_path)  # e1 call, e2 result, e3 call, e4 result
    out = insert_distractor(events)
    assert [e.id for e in out] == ["e1", "e2", "x-distractor", "e3", "e4"]
    assert out[2].kind == "assistant" and out[2].text == DISTRACTOR and out[2].turn == 1


def test_a_named_model_is_masked_before_any_judge_sees_it(tmp_path):
    t = TraceBuilder()
    t.say(1, "Starting.")
    events = _events(t.lines, tmp_path)
    [named] = name_model(events, ("bot", "1.0", HEADER_MODEL))
    assert HEADER_MODEL not in named.text and "[model]" in named.text
    [default] = name_model(events, ())
    assert "gpt-4o" not in default.text and "[model]" in default.text
    assert pad_events(events)[0].text != events[0].text and name_model([], ()) is None


def _verdicts(scenario: Path, events, header, tmp_path: Path) -> list[tuple]:
    path = tmp_path / "perturbed.jsonl"
    lines = [header.model_dump(mode="json", exclude_none=True)]
    lines += [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in events]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = grade_trace(load_ledger(scenario), path)
    return [(cp.after_turn, f.key, f.verdict, f.source) for cp in report.checkpoints for f in cp.findings]


@pytest.mark.parametrize("trace", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_perturbed_examples_grade_to_the_same_deterministic_findings(trace, tmp_path):
    scenario = trace.parent / "scenario.yaml"
    header, events, _ = read_trace(trace)
    before = _verdicts(scenario, events, header, tmp_path)
    for perturb in (reorder_events, pad_events, insert_distractor):
        changed = perturb(events)
        if changed is not None:
            assert _verdicts(scenario, changed, header, tmp_path) == before, perturb.__name__


def test_event_order_applies_to_the_bundled_examples():
    swapped = [p for p in EXAMPLES if reorder_events(read_trace(p)[1]) is not None]
    assert len(swapped) >= 4, swapped  # assistant messages and state-writes side by side


# ---------------------------------------------------------------- through the scripted LLM server


@pytest.fixture
def project(llm_server, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("TRUST_TEST_KEY", "sk-test-not-a-secret")
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    write_project(tmp_path, llm_server.api_base, "TRUST_TEST_KEY")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _bias(*args: str):
    return runner.invoke(app, ["bias", "--judge", "gpt", "--json", "bias.json", *args])


def test_an_order_biased_judge_is_caught_and_not_certified(project, llm_server):  # noqa: F811
    llm_server.default = order_biased_judge
    result = _bias()
    assert result.exit_code == 1, result.output
    gate = json.loads((project / "bias.json").read_text())
    rates = {p["name"]: p for p in gate["perturbations"]}
    assert rates["ledger-order"]["flip_rate"]["value"] > 0.5 and rates["ledger-order"]["passed"] is False
    assert rates["ledger-order"]["mcnemar"]["method"] == "exact"
    for name in ("padding", "distractor", "model-name", "paraphrase", "event-order"):
        assert rates[name]["flipped"] == 0 and rates[name]["n"] > 0, name
    assert not gate["certified"] and "ledger-order" in gate["reason"]
    assert "Bias gate failed" in result.output


def test_a_consistent_judge_passes_and_names_never_reach_it(project, llm_server):  # noqa: F811
    llm_server.default = consistent_judge
    result = _bias()
    assert result.exit_code == 0, result.output
    gate = json.loads((project / "bias.json").read_text())
    assert gate["certified"] and gate["n_cases"] == 36
    assert all(p["flipped"] == 0 and p["n"] > 0 for p in gate["perturbations"])
    sent = json.dumps(llm_server.bodies)
    assert HEADER_MODEL not in sent and "notesbot" not in sent and "[model]" in sent
    assert "Never deploy to prod" in sent and "office plants" in sent  # the perturbed requests were asked


@pytest.mark.slow
def test_record_adds_the_bias_gate_and_certified_needs_both(project, llm_server):  # noqa: F811
    llm_server.default = order_biased_judge
    refused = _bias("--record")
    assert refused.exit_code == 2 and "judge calibrate --judge gpt" in refused.output
    out = project / "calibration" / "records"
    calibrated = runner.invoke(app, ["calibrate", "--judge", "gpt", "--out", str(out), "--n-boot", "50",
                                     "--floor", "0.5"])
    assert calibrated.exit_code == 0, calibrated.output
    assert "The bias gate was not run." in calibrated.output
    record = json.loads((out / "gpt.json").read_text())
    assert record["bias"] is None
    recorded = _bias("--record", "--out", str(out))
    assert recorded.exit_code == 1, recorded.output
    record = json.loads((out / "gpt.json").read_text())
    assert record["bias"]["certified"] is False and record["certified"] is False
    assert record["rates_certified"] == (record["tpr"]["lower"] >= 0.5 and record["tnr"]["lower"] >= 0.5)
    assert "Bias gate failed" in record["certification_reason"]


def test_only_some_perturbations_and_an_unknown_one(project, llm_server):  # noqa: F811
    llm_server.default = consistent_judge
    result = _bias("--perturbation", "padding", "--split", "test")
    assert result.exit_code == 0, result.output
    gate = json.loads((project / "bias.json").read_text())
    assert [p["name"] for p in gate["perturbations"]] == ["padding"] and gate["n_cases"] == 18
    bad = _bias("--perturbation", "shouting")
    assert bad.exit_code == 2 and "unknown perturbation 'shouting'" in bad.output


@pytest.mark.slow
def test_the_local_judge_runs_the_battery(tmp_path):
    labels = tmp_path / "labels.jsonl"
    rows = [json.loads(line) for line in (REPO / "labels" / "reference-a.jsonl").read_text().splitlines()]
    rows = [dict(r, trace=str((REPO / "labels" / r["trace"]).resolve())) for r in rows
            if r["scenario"] == "checkout-firefox" and r["after_turn"] == 3]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from judge.config import load_judge_config
    from judge.grade.bias import run_battery
    from judge.judges.factory import make_judge

    run = run_battery(labels, make_judge(load_judge_config("local")), perturbations=["ledger-order", "padding"])
    assert run.cases == len(rows) and not run.base_errors
    assert [p.name for p in run.gate.perturbations] == ["ledger-order", "padding"]
    assert all(p.n == len(rows) and p.judge_errors == 0 for p in run.gate.perturbations)
