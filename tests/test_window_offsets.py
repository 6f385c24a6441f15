"""Memory by construction (issue 26): a long window of a trace file is kept as where it is in the file
and read again when the slice or a judge needs it. Grading a window read again must give the report
that grading it in memory gives, field for field, with and without a judge."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import msgspec
import pytest

import judge.grade.windows as windows
from judge import render
from judge.checks import RuleSet
from judge.errors import TraceError
from judge.grade import grade_trace
from judge.grade.windows import RunAccumulator, close_paths, stream_windows
from judge.judges.base import JudgeRequest, JudgeResult
from judge.ledger import load_ledger
from judge.model import GradeReport, JudgeFinding, JudgeVerdict
from judge.model.event_ids import EventIds
from judge.render.json_text import json_chunks
from judge.trace import TraceReader

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A 3,000-event benchmark trace (redacted lines, summaries, all six rule kinds) with one
    checkpoint over the whole run, and with 20."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_trace import generate

    out = tmp_path_factory.mktemp("gen")
    trace, one = generate(3000, 1, 7, out)
    _, twenty = generate(3000, 20, 7, out)
    return trace, one, twenty


class CitingJudge:
    """Says the first asked key was violated at the last event it was shown (so the divergence and
    the finding's turn come from the judge's evidence), and records what it was shown."""

    def __init__(self) -> None:
        self.shown: list[list[dict]] = []

    def fingerprint(self):
        return {"name": "citing", "backend": "test", "model": "citing"}

    async def judge_checkpoint(self, request: JudgeRequest) -> JudgeResult:
        self.shown.append([e.model_dump(mode="json") for e in request.events])
        last = request.events[-1]
        findings = [JudgeFinding(key=k, verdict="violated" if i == 0 else "upheld", confidence=0.8,
                                 evidence_event=last.id if i == 0 else None) for i, k in enumerate(request.keys)]
        return JudgeResult(verdict=JudgeVerdict(findings=findings), calls=1)


def _graded(ledger, trace, spill, monkeypatch, judge=None):
    monkeypatch.setattr(windows, "SPILL_EVENTS", spill)
    report = grade_trace(ledger, trace, judge=judge).model_dump(mode="json")
    report.pop("provenance")
    return report


@pytest.mark.parametrize("plan,numbering", [("one", "in a row"), ("twenty", "in a row"), ("one", "broken")])
def test_a_window_read_again_grades_as_one_held_in_memory(generated, monkeypatch, tmp_path, plan, numbering):
    """Ids numbered in a row are foretold (IdRun); a run that breaks is read again from the file."""
    trace, one, twenty = generated
    if numbering == "broken":
        broken = tmp_path / "broken.jsonl"
        broken.write_text(trace.read_text().replace('{"id":"e40",', '{"id":"x40",', 1))
        trace = broken
    ledger = load_ledger(one if plan == "one" else twenty)
    held = _graded(ledger, trace, 1 << 30, monkeypatch)
    reread = _graded(ledger, trace, 7, monkeypatch)
    assert held["first_divergence"] is not None and len(held["slice"]) > 7
    assert reread == held
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert _graded(ledger, lines, 7, monkeypatch) == {**held, "trace": "trace"}  # lines given one by one


@pytest.mark.parametrize("numbering", ["in a row", "broken"])
def test_a_long_window_s_slice_is_compact_and_written_as_the_list(generated, monkeypatch, tmp_path, numbering):
    """The slice of a window kept as where it is in the file is EventIds (numbered: no id made; else
    collected from the file), equal to the slice a window held in memory gives, and the report's
    JSON text is the same either way."""
    trace, one, _ = generated
    if numbering == "broken":
        broken = tmp_path / "broken.jsonl"
        broken.write_text(trace.read_text().replace('{"id":"e40",', '{"id":"x40",', 1))
        trace = broken
    ledger = load_ledger(one)
    monkeypatch.setattr(windows, "SPILL_EVENTS", 1 << 30)
    held = grade_trace(ledger, trace)
    monkeypatch.setattr(windows, "SPILL_EVENTS", 7)
    reread = grade_trace(ledger, trace)
    assert isinstance(held.slice, list) and isinstance(reread.slice, EventIds)
    assert reread.slice == held.slice and len(held.slice) > 7
    assert reread.slice.in_a_row == (numbering == "in a row")
    texts = ["".join(json_chunks(GradeReport(judge=None, runs=[r]))) for r in (held, reread)]
    assert texts[0] == texts[1] == render.report_to_json(GradeReport(judge=None, runs=[held]))


@pytest.mark.parametrize("example", ["checkout-firefox", "refund-agent", "long-distance"])
def test_a_judge_is_shown_the_same_events_and_its_evidence_placed_the_same(example, monkeypatch):
    folder = EXAMPLES / example
    ledger = load_ledger(folder / "scenario.yaml")
    trace = folder / "drift.jsonl"
    if not trace.exists():
        pytest.skip(f"{trace} is absent")
    held_judge, reread_judge = CitingJudge(), CitingJudge()
    held = _graded(ledger, trace, 1 << 30, monkeypatch, held_judge)
    reread = _graded(ledger, trace, 2, monkeypatch, reread_judge)
    assert reread_judge.shown == held_judge.shown and held_judge.shown
    assert reread == held


def test_records_read_again_are_the_records_first_read_redactions_included(tmp_path):
    events = [{"id": "e1", "turn": 1, "kind": "user", "text": "mail me at jane.doe@example.com"},
              {"id": "sk-live-4eC39HqLyjWDarjtT1zdp7dc", "turn": 1, "kind": "assistant", "text": "ok"},
              {"id": "e3", "turn": 2, "kind": "tool-call", "call_id": "c1", "tool": "t", "args": {"a": 1}},
              {"id": "e4", "turn": 2, "kind": "tool-result", "call_id": "c1", "status": "ok", "result": "x"}]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [{"kind": "run", "run_id": "r", "scenario": "s"}, *events]) + "\n")
    reader = TraceReader(path)
    first, lines = [], []
    for record in reader.records():
        first.append(msgspec.to_builtins(record))
        lines.append(reader.line)
    counts = reader.redactions
    assert first[0]["text"] != events[0]["text"] and first[1]["id"] != events[1]["id"]  # redacted
    for start in range(len(first)):
        again = [msgspec.to_builtins(r) for r in reader.reread(lines[start], len(first) - start)]
        assert again == first[start:]
        assert list(reader.reread(lines[start], 2, ids_only=True)) == [r["id"] for r in first[start:start + 2]]
    assert reader.redactions == counts  # reading again counts nothing twice


def test_a_long_window_holds_neither_its_ids_nor_its_events_nor_its_hits(generated, monkeypatch):
    trace, one, _ = generated
    monkeypatch.setattr(windows, "SPILL_EVENTS", 16)
    ledger = load_ledger(one)
    rules = RuleSet(ledger)
    reader = TraceReader(trace, expected_scenario=ledger.scenario.id, raw_hook=rules.raw_hook())
    rules.share_calls(reader.calls)
    acc = RunAccumulator(restatements=rules.restatements)
    held: list[int] = []

    def close(window):
        held.append(len(window.ids) + len(window.events) + len(window.tally._last) + len(window.tally._first_bad))
        acc.close(close_paths(window))

    count = stream_windows(reader, ledger, rules, True, close, None, {}, acc=acc)
    (window,) = acc.windows
    assert window.n_events == count == 3000 and window.source is reader
    assert held[0] <= 2 * len(ledger.keys)  # no id, no event, a hit or two per key
    assert len(window.hits) <= 2 * len(ledger.keys) + sum(h.check == "no-leak" for h in window.hits)
    assert [e.id for e in window.read_events()][-1] == window.last_id


def test_a_trace_changed_while_graded_is_an_error_not_a_wrong_slice(generated, monkeypatch, tmp_path):
    trace, one, _ = generated
    copy = tmp_path / "trace.jsonl"
    copy.write_bytes(trace.read_bytes())
    monkeypatch.setattr(windows, "SPILL_EVENTS", 16)
    ledger = load_ledger(one)
    rules = RuleSet(ledger)
    reader = TraceReader(copy, expected_scenario=ledger.scenario.id)
    rules.share_calls(reader.calls)
    acc = RunAccumulator(restatements=rules.restatements)
    stream_windows(reader, ledger, rules, True, lambda w: acc.close(close_paths(w)), None, {}, acc=acc)
    lines = copy.read_text().splitlines()
    copy.write_text("\n".join([lines[0], *lines[2:]]) + "\n")  # one event fewer
    with pytest.raises(TraceError, match="changed while it was graded"):
        acc.windows[0].read_events()


def test_a_scenario_s_hidden_values_are_redacted_when_read_again_too(tmp_path):
    events = [{"id": "e1", "turn": 1, "kind": "user", "text": "the code word is Kestrel-42"},
              {"id": "e2", "turn": 1, "kind": "assistant", "text": "noted"}]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [{"kind": "run", "run_id": "r", "scenario": "s"}, *events]) + "\n")
    reader = TraceReader(path, hidden=["Kestrel-42"])
    first = [msgspec.to_builtins(r) for r in reader.records()]
    assert "Kestrel-42" not in json.dumps(first)
    assert [msgspec.to_builtins(r) for r in reader.reread(2, 2)] == first
