"""OpenAI chat-completions, tau-bench and Who&When imports write traces the reader accepts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from judge.cli.imports import register
from judge.errors import JudgeInputError
from judge.trace import TraceReader, read_trace
from judge.trace.openai_import import import_openai
from judge.trace.who_and_when import agent_of, import_who_and_when

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TAU = DATA / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
WHO = DATA / "who-and-when" / "Who&When"

MESSAGES = [
    {"role": "system", "content": "You are a shop assistant."},
    {"role": "user", "content": "Refund order A-1 please, mail me at jo@example.com"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"order\": \"A-1\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "name": "lookup", "content": "{\"total\": 30}"},
    {"role": "assistant", "content": "Refunding 30.", "tool_calls": [
        {"id": "call_2", "type": "function", "function": {"name": "refund", "arguments": "{\"order\": \"A-1\", \"amount\": 30}"}}]},
    {"role": "tool", "tool_call_id": "call_2", "name": "refund", "content": "Error: payment service down"},
    {"role": "assistant", "content": [{"type": "text", "text": "The refund failed, sorry."}]},
    {"role": "user", "content": "Try again"},
]


def _write(path: Path, value) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_message_list_becomes_one_valid_trace(tmp_path):
    src = _write(tmp_path / "chat.json", MESSAGES)
    summary = import_openai(src, tmp_path / "out.jsonl", scenario="shop")
    assert summary.runs == 1 and summary.files == [tmp_path / "out.jsonl"]
    header, events, redactions = read_trace(tmp_path / "out.jsonl")
    assert header.scenario == "shop" and header.run_id == "chat"
    assert len(header.metadata["system_sha256"]) == 64
    assert [(e.kind, e.turn) for e in events] == [
        ("user", 1), ("tool-call", 1), ("tool-result", 1), ("assistant", 1), ("tool-call", 1),
        ("tool-result", 1), ("assistant", 1), ("user", 2)]
    assert events[1].args == {"order": "A-1"} and events[2].result == {"total": 30}
    assert events[2].status == "ok" and events[5].status == "error"
    assert events[6].text == "The refund failed, sorry."
    assert redactions == {"email": 1}  # the importer writes raw; the reader redacts
    assert dict(summary.events) == {"user": 2, "assistant": 2, "tool-call": 2, "tool-result": 2}


def test_step_rule_starts_a_turn_at_each_model_call_after_a_tool(tmp_path):
    src = _write(tmp_path / "chat.json", MESSAGES)
    import_openai(src, tmp_path / "out.jsonl", scenario="shop", turns="step")
    _, events, _ = read_trace(tmp_path / "out.jsonl")
    assert [e.turn for e in events] == [1, 1, 1, 2, 2, 2, 3, 4]


def test_request_with_response_and_jsonl_messages(tmp_path):
    run = {"id": "r7", "model": "gpt-4o", "messages": MESSAGES[:2],
           "choices": [{"message": {"role": "assistant", "content": "On it."}}]}
    import_openai(_write(tmp_path / "one.json", run), tmp_path / "one.jsonl")
    header, events, _ = read_trace(tmp_path / "one.jsonl")
    assert header.run_id == "r7" and header.agent.model == "gpt-4o" and header.scenario == "one"
    assert [e.kind for e in events] == ["user", "assistant"]
    lines = tmp_path / "msgs.jsonl"
    lines.write_text("".join(json.dumps(m) + "\n" for m in MESSAGES), encoding="utf-8")
    summary = import_openai(lines, tmp_path / "msgs.out.jsonl", scenario="s")
    assert summary.runs == 1 and sum(summary.events.values()) == 8


def test_file_of_runs_writes_a_folder_and_reused_call_ids_stay_unique(tmp_path):
    reused = [{"role": "user", "content": "go"}] + [
        m for _ in range(2) for m in (
            {"role": "assistant", "tool_calls": [{"id": "call_1", "function": {"name": "step", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"})]
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps({"run_id": "a", "task_id": 3, "messages": MESSAGES}) + "\n"
                    + json.dumps({"run_id": "b", "task_id": 4, "messages": reused}) + "\n", encoding="utf-8")
    summary = import_openai(runs, tmp_path / "out", scenario="sc-{task_id}")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.jsonl", "b.jsonl"]
    assert TraceReader(tmp_path / "out" / "a.jsonl").header.scenario == "sc-3"
    _, events, _ = read_trace(tmp_path / "out" / "b.jsonl")
    assert [e.call_id for e in events if e.kind == "tool-call"] == ["call_1", "call_1#2"]
    assert [e.call_id for e in events if e.kind == "tool-result"] == ["call_1", "call_1#2"]
    assert summary.runs == 2
    runs.write_text(json.dumps({"run_id": "c", "messages": MESSAGES}) + "\n" * 2 + json.dumps({"messages": []}),
                    encoding="utf-8")
    with pytest.raises(JudgeInputError, match="needs task_id") as err:
        import_openai(runs, tmp_path / "out2", scenario="sc-{task_id}")
    assert err.value.line == 1


@pytest.mark.parametrize("bad, field, message", [
    ([{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "nope", "content": "1"}],
     "messages[1].tool_call_id", "no earlier assistant message issued"),
    ([{"role": "wizard", "content": "x"}], "messages[0].role", "unknown role 'wizard'"),
    ([{"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}],
     "messages[0].tool_calls[0].function.name", "required field is missing"),
])
def test_bad_messages_name_the_record_and_field(tmp_path, bad, field, message):
    src = _write(tmp_path / "bad.json", bad)
    with pytest.raises(JudgeInputError) as err:
        import_openai(src, tmp_path / "out.jsonl", scenario="s")
    assert err.value.file == str(src) and err.value.field == field and message in err.value.message


def test_bad_jsonl_line_and_refusing_to_overwrite_the_input(tmp_path):
    src = tmp_path / "runs.jsonl"
    src.write_text(json.dumps({"messages": MESSAGES}) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(JudgeInputError) as err:
        import_openai(src, tmp_path / "out")
    assert err.value.line == 2
    with pytest.raises(JudgeInputError, match="refusing to write over an input"):
        import_openai(src, src)


@pytest.fixture
def tau_runs():
    if not TAU.is_file():
        pytest.skip(f"tau-bench trajectories absent ({TAU})")
    return json.loads(TAU.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_all_200_tau_bench_runs_import_whole(tau_runs, tmp_path):
    summary = import_openai(TAU, tmp_path / "tau", scenario="tau-airline-{task_id}")
    assert summary.runs == 200 and len(set(summary.files)) == 200
    expected = Counter()
    for run in tau_runs:
        for m in run["traj"]:
            role = m["role"]
            expected["user"] += role == "user"
            expected["assistant"] += role == "assistant" and bool(m.get("content"))
            expected["tool-call"] += len(m.get("tool_calls") or [])
            expected["tool-result"] += role == "tool"
    assert dict(summary.events) == dict(expected)
    by_id = {f"task-{r['task_id']}-trial-{r['trial']}": r for r in tau_runs}
    total = 0
    for path in summary.files:
        reader = TraceReader(path)
        total += sum(1 for _ in reader)  # validates every event
        run = by_id[reader.header.run_id]
        assert reader.header.task_id == str(run["task_id"])
        assert reader.header.scenario == f"tau-airline-{run['task_id']}"
        assert reader.header.metadata["trial"] == run["trial"]
        assert reader.header.metadata["reward"] == run["reward"]
    assert total == sum(expected.values())


@pytest.mark.slow
def test_who_and_when_keeps_agents_and_labels_as_metadata(tmp_path):
    if not WHO.is_dir():
        pytest.skip(f"Who&When absent ({WHO})")
    summary = import_who_and_when(WHO, tmp_path / "ww")
    assert summary.runs == 184
    counts = Counter()
    for path in summary.files:
        source = WHO / ("Hand-Crafted" if path.parent.name == "hand-crafted" else "Algorithm-Generated") / \
            (path.stem + ".json")
        log = json.loads(source.read_text(encoding="utf-8"))
        header, events, _ = read_trace(path)
        meta = header.metadata
        counts[meta["subset"]] += 1
        by_id = {e.id: e for e in events}
        assert [by_id[f"s{i}"].turn for i in range(len(log["history"]))] == list(range(len(log["history"])))
        assert meta["mistake_step"] == int(log["mistake_step"]) and meta["mistake_agent"] == log["mistake_agent"]
        assert meta["mistake_agent"] in meta["agents"]
        step = by_id[f"s{meta['mistake_step']}"]
        if step.kind == "assistant":
            label = step.text[1:step.text.index("] ")]
            speaker = log["history"][meta["mistake_step"]]
            assert agent_of(label) == agent_of(speaker.get("name") or speaker["role"])
    assert counts == {"hand-crafted": 58, "algorithm-generated": 126}
    assert summary.events["tool-call"] == summary.events["tool-result"] > 200  # code runs


def test_who_and_when_code_runs_become_tool_calls(tmp_path):
    history = [
        {"role": "assistant", "name": "Coder_Expert", "content": "Run this:\n```python\nprint(1/0)\n```"},
        {"role": "user", "name": "Computer_terminal", "content": "exitcode: 1 (execution failed)\nZeroDivisionError"},
        {"role": "assistant", "name": "Coder_Expert", "content": "```sh\nsleep 999\n```"},
        {"role": "user", "name": "Computer_terminal", "content": "exitcode: 124 (execution failed)\nTimeout"},
        {"role": "user", "name": "Computer_terminal", "content": "nothing ran"},
        {"role": "assistant", "name": "Checker_Expert", "content": "TERMINATE"},
    ]
    log = {"question": "q?", "ground_truth": "1", "mistake_agent": "Coder_Expert", "mistake_step": "0",
           "mistake_reason": "divides by zero", "history": history, "system_prompt": {}}
    src = tmp_path / "Algorithm-Generated" / "7.json"
    src.parent.mkdir()
    src.write_text(json.dumps(log), encoding="utf-8")
    import_who_and_when(src, tmp_path / "out")
    header, events, _ = read_trace(tmp_path / "out" / "algorithm-generated" / "7.jsonl")
    assert [(e.id, e.turn, e.kind) for e in events] == [
        ("s0", 0, "assistant"), ("s0.call", 0, "tool-call"), ("s1", 1, "tool-result"),
        ("s2", 2, "assistant"), ("s2.call", 2, "tool-call"), ("s3", 3, "tool-result"),
        ("s4", 4, "assistant"), ("s5", 5, "assistant")]
    assert events[1].args == {"code": "print(1/0)\n"} and [events[2].status, events[5].status] == ["error", "timeout"]
    assert header.metadata["agents"] == ["Coder_Expert", "Computer_terminal", "Checker_Expert"]
    assert header.metadata["mistake_step"] == 0 and header.run_id == "algorithm-generated-7"


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def _noop() -> None:  # a second command keeps `import` a sub-command, as in the real CLI
        pass

    register(app)
    return app


def test_cli_prints_counts_and_one_line_errors(tmp_path):
    src = _write(tmp_path / "chat.json", MESSAGES)
    runner = CliRunner()
    result = runner.invoke(_app(), ["import", "openai", str(src), "-o", str(tmp_path / "t.jsonl"), "--scenario", "s"])
    assert result.exit_code == 0, result.output
    assert "1 run" in result.output and "tool-call 2" in result.output
    bad = _write(tmp_path / "bad.json", [{"role": "wizard"}])
    result = runner.invoke(_app(), ["import", "openai", str(bad), "-o", str(tmp_path / "u.jsonl")])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "unknown role" in result.output
