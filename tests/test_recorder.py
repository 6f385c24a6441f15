"""judge.recorder: the trace a harness writes is valid, redacted, and safe under concurrency."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.api import grade_paths
from judge.errors import JudgeInputError
from judge.recorder import Recorder
from judge.trace import read_trace

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "recorder"


def test_every_event_kind_is_written_valid_and_redacted(tmp_path):
    path = tmp_path / "run.jsonl"
    with Recorder(path, run_id="r1", scenario="s", agent="bot", task_id="t-9", retention="7 days",
                  tool_schemas=[{"name": "lookup"}]) as rec:
        rec.user("hi, I am ann@example.com")
        rec.assistant("hello", meta={"model": "m1", "finish_reason": "stop", "usage": {"input_tokens": 3}})
        cid = rec.tool_call("send", {"to": "bob@example.com", "api_key": "abc123"})
        rec.tool_result(cid, {"sent": True}, latency_ms=12.5)
        rec.state_write("sent", "done")
        rec.snapshot("mailbox/outbox", phase="after", call_id=cid, state={"count": 1})
        rec.next_turn()
        rec.summary("sent one mail", reason="handoff", to="agent-b")
        rec.user("thanks")
    header, events, _ = read_trace(path)
    assert (header.run_id, header.task_id, header.agent.name, header.redaction, header.retention) == \
        ("r1", "t-9", "bot", "judge-default", "7 days")
    assert len(header.tool_schema_sha256) == 64
    assert [(e.kind, e.turn) for e in events] == [
        ("user", 1), ("assistant", 1), ("tool-call", 1), ("tool-result", 1), ("state-write", 1),
        ("snapshot", 1), ("summary", 2), ("user", 3)]
    assert events[0].text == "hi, I am [REDACTED:email]"
    assert events[2].args == {"to": "[REDACTED:email]", "api_key": "[REDACTED:secret_field]"}
    assert events[3].meta.latency_ms == 12.5 and events[1].meta.usage == {"input_tokens": 3}
    assert events[5].digest.startswith("sha256:") and events[5].call_id == cid
    assert rec.redactions == {"email": 2, "secret_field": 1}


def test_wrapped_tools_record_arguments_status_and_latency(tmp_path):
    path = tmp_path / "run.jsonl"
    with Recorder(path, run_id="r1", scenario="s") as rec:
        @rec.tool
        def add(a, b=2, **extra):
            return a + b

        @rec.tool(name="flaky")
        def fail(x):
            raise ValueError(f"bad {x}")

        slow = rec.wrap(lambda: (_ for _ in ()).throw(TimeoutError("too slow")), name="slow")
        assert add(1, extra=True) == 3
        with pytest.raises(ValueError):
            fail(7)
        with pytest.raises(TimeoutError):
            slow()
    _, events, _ = read_trace(path)
    calls = [e for e in events if e.kind == "tool-call"]
    results = [e for e in events if e.kind == "tool-result"]
    assert [(c.tool, c.args) for c in calls] == [("add", {"a": 1, "b": 2, "extra": True}), ("flaky", {"x": 7}),
                                                 ("slow", {})]
    assert [r.status for r in results] == ["ok", "error", "timeout"]
    assert results[0].result == 3 and results[1].result == {"error": "ValueError", "message": "bad 7"}
    assert all(r.meta.latency_ms >= 0 for r in results)
    assert [r.call_id for r in results] == [c.call_id for c in calls]


def test_async_and_threaded_tools_get_unique_ids(tmp_path):
    path = tmp_path / "run.jsonl"

    async def main() -> None:
        async with Recorder(path, run_id="r1", scenario="s") as rec:
            @rec.tool
            async def fetch(i: int) -> int:
                await asyncio.sleep(0.001 * (i % 3))
                return i * i

            rec.user("go")
            threads = [threading.Thread(target=lambda: [rec.state_write(f"k{j}", j) for j in range(20)])
                       for _ in range(4)]
            for t in threads:
                t.start()
            assert await asyncio.gather(*(fetch(i) for i in range(50))) == [i * i for i in range(50)]
            for t in threads:
                t.join()

    asyncio.run(main())
    _, events, _ = read_trace(path)  # unique ids, every result after its call
    assert len(events) == 1 + 100 + 80
    results = {e.call_id: e.result for e in events if e.kind == "tool-result"}
    calls = {e.call_id: e.args["i"] for e in events if e.kind == "tool-call"}
    assert len(calls) == 50 and all(results[c] == i * i for c, i in calls.items())


def test_misuse_raises_at_once_and_writes_nothing_bad(tmp_path):
    path = tmp_path / "run.jsonl"
    with Recorder(path, run_id="r1", scenario="s", turns="manual") as rec:
        rec.user("one")
        rec.user("two")
        assert rec.turn == 0
        rec.turn = 4
        with pytest.raises(JudgeInputError, match="backwards"):
            rec.turn = 2
        with pytest.raises(JudgeInputError, match="status"):
            rec.tool_result("c1", status="maybe")
        with pytest.raises(JudgeInputError):
            rec.summary("x", reason="lunch")
        rec.assistant("ok")
    with pytest.raises(JudgeInputError, match="not open"):
        rec.assistant("late")
    _, events, _ = read_trace(path)
    assert [(e.id, e.turn) for e in events] == [("e1", 0), ("e2", 0), ("e3", 4)]


def _example():
    spec = importlib.util.spec_from_file_location("agent_loop", EXAMPLE / "agent_loop.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_agent_loop_is_graded_by_judge_grade(tmp_path):
    loop = _example()
    clean = asyncio.run(loop.main(tmp_path / "clean.jsonl"))
    drift = asyncio.run(loop.main(tmp_path / "drift.jsonl", drift=True))
    scenario = EXAMPLE / "recorder-scenario.yaml"
    ok, bad = grade_paths(scenario, [clean, drift]).runs
    assert ok.passed and ok.first_divergence is None and ok.redactions == {}
    assert not bad.passed
    assert (bad.first_divergence.turn, bad.first_divergence.key) == (2, "refund_amount")
    header, events, _ = read_trace(clean)
    assert "[REDACTED:email]" in events[0].text and {e.kind for e in events} >= {"snapshot", "state-write"}
    from judge.cli import app

    result = CliRunner().invoke(app, ["grade", str(scenario), str(clean), "--judge", "none"])
    assert result.exit_code == 0, result.output
