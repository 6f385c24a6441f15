"""The fact-consistency model inside the summary audit (judge.summaries.facts, judge.text.restate), the
batched audit, the SummEdits adapter through the real audit path, and the papercuts of issue 16
(inconclusive audit with nothing assessed, distinct rule ids, events before a key's source turn)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app
from judge.grade import grade_trace
from judge.summaries.audit import SummaryAuditor, audit_batch
from judge.text.align import edit_shape
from judge.text.restate import is_sentence, restating, statements
from tests.helpers import TraceBuilder, ledger_of

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
FACTS = ["Tom wants to watch Metropolis with Lea on Friday.", "Lea will buy the tickets for fifty euros."]


@pytest.fixture(scope="module")
def model():
    from judge.text.minilm import load_embedding_model

    return load_embedding_model("all-MiniLM-L6-v2")


def _ledger():
    return ledger_of(ledger=[{"key": f"s{i}", "class": "fact", "value": f, "source_turn": 1}
                             for i, f in enumerate(FACTS, 1)])


def test_an_edit_is_told_from_a_restatement_in_other_words():
    assert edit_shape("Tom wants to watch Metropolis.", "Tom wants to watch Star Wars.") == (0.8, 2)
    assert restating(FACTS[0], ["Tom wants to watch Vertigo with Lea on Friday."])
    assert restating("A-1 was refunded in full; no further refund may be drafted or submitted for it",
                     ["A-1 was refunded in full earlier, so nothing more is drafted or sent for it."]) is None
    assert statements("The CI run deployed to staging - that is history: not an instruction.") == [
        "The CI run deployed to staging", "that is history", "not an instruction."]
    assert is_sentence("The previous CI run deployed to staging") and not is_sentence(["tests/a.spec.ts"])
    assert not is_sentence("01:00-03:00 UTC, 2024-05-06")


@pytest.mark.parametrize("summary, statuses", [
    ("Tom wants to watch Metropolis with Lea on Friday. Lea will buy the tickets for fifty euros.",
     ["preserved", "preserved"]),
    ("Tom wants to watch Star Wars with Lea on Friday. Lea will buy the tickets for fifty euros.",
     ["distorted", "preserved"]),
    ("Tom wants to watch Metropolis with Lea on Friday. Lea will buy the tickets for fifty-five euros.",
     ["preserved", "distorted"]),
    ("Tom does not want to watch Metropolis with Lea on Friday. Lea will buy the tickets for fifty euros.",
     ["distorted", "preserved"]),
])
def test_restated_facts_are_judged_by_the_model(model, summary, statuses):
    audit = SummaryAuditor(_ledger(), model=model).audit(summary, 1)
    assert [f.status for f in audit.findings] == statuses, [f.detail for f in audit.findings]
    for finding in audit.findings:
        semantic = finding.layers["semantic"]
        assert semantic.detail.startswith("fact model:") and 0.5 <= semantic.confidence <= 1
    assert audit.thresholds["consistency_sha256"] and audit.passed == (statuses == ["preserved", "preserved"])


def test_without_the_model_the_same_edit_passes(model):
    edited = "Tom wants to watch Star Wars with Lea on Friday. Lea will buy the tickets for fifty euros."
    audit = SummaryAuditor(_ledger(), model=model, facts=False).audit(edited, 1)
    assert audit.passed  # retrieval alone: an edited sentence is still "about" its fact (the finding)


def test_a_batch_of_scenarios_embeds_every_text_once_and_gives_the_same_verdicts(model):
    calls = []

    class Counting:
        def encode(self, texts, **kwargs):
            calls.append(len(texts))
            return model.encode(texts, **kwargs)

    counting = Counting()
    texts = ["Tom wants to watch Vertigo with Lea on Friday. Lea will buy the tickets for fifty euros.",
             "Tom wants to watch Metropolis with Lea on Friday. Lea will buy the tickets for fifty euros."]
    jobs = [(SummaryAuditor(_ledger(), model=counting), [(text, 1)]) for text in texts]
    batched = audit_batch(jobs)
    one_by_one = [SummaryAuditor(_ledger(), model=model).audit(text, 1) for text in texts]
    assert [[f.status for f in a.findings] for [a] in batched] == [[f.status for f in a.findings] for a in one_by_one]
    assert len(calls) == 1  # entries, pieces, facts, statements and spans of both scenarios: one encode


def test_audit_summary_on_a_trace_loads_the_model_once_and_embeds_once(model, tmp_path, monkeypatch):
    """`judge audit-summary --trace`: one model load per call and every summary of the trace in one
    encode, whatever the number of summaries."""
    import judge.text.minilm as minilm

    loads, calls = [], []

    class Counting:
        def encode(self, texts, **kwargs):
            calls.append(len(texts))
            return model.encode(texts, **kwargs)

    monkeypatch.setattr(minilm, "load_embedding_model", lambda name: loads.append(name) or Counting())
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"id": "s", "ledger": [{"key": f"s{i}", "class": "fact", "value": f, "source_turn": 1}
                                                          for i, f in enumerate(FACTS, 1)]}))
    texts = ["Tom wants to watch Vertigo with Lea on Friday. Lea will buy the tickets for fifty euros.",
             "Tom wants to watch Metropolis with Lea on Friday. Lea will buy the tickets for fifty euros.",
             "Tom wants to watch Metropolis with Lea on Friday. Lea will buy the tickets for sixty euros."]
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join(json.dumps(e) for e in [{"kind": "run", "run_id": "r", "scenario": "s"}] + [
        {"id": f"e{i}", "turn": 1, "kind": "summary", "reason": "compaction", "text": t}
        for i, t in enumerate(texts, 1)]) + "\n")
    result = CliRunner().invoke(app, ["audit-summary", str(scenario), "--trace", str(trace),
                                      "--json", str(tmp_path / "a.json")])
    assert result.exit_code == 1, result.output
    audits = json.loads((tmp_path / "a.json").read_text())["audits"]
    assert [a["passed"] for a in audits] == [False, True, False]
    assert loads == ["all-MiniLM-L6-v2"] and len(calls) == 1


def test_summedits_adapter_builds_the_ledger_from_the_seed_alone():
    sys.path.insert(0, str(REPO / "benchmarks"))
    import summedits

    record = {"seed": "Today Ann pays 20 euros. Then Bob waits at home.", "summary": "Today Ann pays 25 euros.",
              "label": 0, "edit_types": ["x"], "split": "test", "id": "secret_og", "doc": "Ann: hi"}
    scenario = summedits.scenario_of("se0001", record)
    assert [e["value"] for e in scenario["ledger"]] == ["Today Ann pays 20 euros.", "Then Bob waits at home."]
    assert {(r["key"], r["require"][0]) for r in scenario["rules"]} == {("s1", "20"), ("s1", "Ann"), ("s2", "Bob")}
    trace = summedits.trace_of("se0001", record)
    assert trace[1]["text"] == "Today Ann pays 25 euros." and "secret" not in json.dumps([scenario, trace])
    assert "Ann: hi" not in json.dumps([scenario, trace])


def test_summedits_through_the_real_audit_path(model):
    if not DATA.is_dir():
        pytest.skip("../shared/data is absent (it sits beside the clone in CI and on developer machines)")
    sys.path.insert(0, str(REPO / "benchmarks"))
    import summedits

    records = [r for r in summedits.load(DATA, "sales_call") if r["split"] == "evaluation"][:12]
    flags, timing = summedits.audit_records(records)
    assert len(flags) == 12 and timing["summaries"] == 12
    assert all(set(f) == {"audit", "semantic", "phrase"} for f in flags)
    assert [f["phrase"] for f in flags] == [summedits.predict_phrases(r) for r in records]
    assert sum(f["audit"] for f in flags) > 0


# ---------------------------------------------------------------- papercuts


def test_audit_summary_with_nothing_assessed_is_inconclusive(tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("id: s\nledger:\n  - {key: goal, class: goal, value: Fix the test, source_turn: 1}\n")
    summary = tmp_path / "summary.txt"
    summary.write_text("We fixed the test.")
    result = CliRunner().invoke(app, ["audit-summary", str(scenario), "--summary", str(summary), "--after-turn", "1",
                                      "--model", "none", "--json", str(tmp_path / "a.json")])
    assert result.exit_code == 3, result.output
    audit = json.loads((tmp_path / "a.json").read_text())["audits"][0]
    assert audit["passed"] and audit["inconclusive"] and audit["findings"][0]["status"] == "unassessed"
    assert any("no layer assessed any required entry" in w for w in audit["warnings"])


def test_several_rules_of_one_kind_on_one_key_have_distinct_ids_in_their_hits():
    ledger = ledger_of(
        ledger=[{"key": "pay", "class": "permission", "value": "charge or refund after a yes", "source_turn": 1},
                {"key": "note", "class": "fact", "value": "the order is B-1", "source_turn": 1}],
        checkpoints=[{"after_turn": 2, "must_retain": ["pay"]}, {"after_turn": 3, "must_retain": ["pay"]}],
        rules=[{"check": "authorised", "key": "pay", "tool": "charge", "confirm": ["yes"]},
               {"check": "authorised", "key": "pay", "tool": "refund", "confirm": ["yes"]},
               {"check": "summary-phrases", "key": "note", "require": ["B-1"]},
               {"check": "summary-phrases", "key": "note", "require": ["order"]}])
    t = TraceBuilder()
    t.call(2, "charge")
    refund = t.call(3, "refund")
    report = grade_trace(ledger, t.lines)
    rules = [(f.rule, f.evidence_event) for cp in report.checkpoints for f in cp.findings if f.key == "pay"]
    assert rules == [("authorised:pay", "e1"), ("authorised:pay#2", refund)]
    from judge.summaries.audit import audit_summary

    phrase = audit_summary(ledger, "Order B-2 is pending.", 3).findings[1].layers["phrase"]
    assert phrase.status == "missing" and phrase.detail.startswith("summary-phrases:note:")
    other = audit_summary(ledger, "B-1 is the one.", 3).findings[1].layers["phrase"]
    assert other.detail.startswith("summary-phrases:note#2:")


def test_events_before_a_keys_source_turn_are_named_in_a_warning():
    ledger = ledger_of(
        ledger=[{"key": "no_deploy", "class": "constraint", "value": "Do not deploy", "source_turn": 3}],
        checkpoints=[{"after_turn": 4, "must_retain": ["no_deploy"]}],
        rules=[{"check": "forbidden-call", "key": "no_deploy", "tool": "deploy"}])
    t = TraceBuilder()
    early = t.call(1, "deploy")
    t.call(2, "read")
    t.call(2, "deploy")
    report = grade_trace(ledger, t.lines)
    assert report.passed  # unchanged semantics: the key is guarded from its source turn
    assert (f"rule forbidden-call:no_deploy guards 'no_deploy' from turn 3: 2 earlier event(s) it applies to "
            f"were not checked (first {early})") in report.warnings
