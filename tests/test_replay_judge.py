"""Replay judge: record verdicts as a judge runs, replay them without the model."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import TypeAdapter

from judge.errors import JudgeInputError
from judge.judges.base import JudgeRequest, JudgeResult
from judge.judges.replay import RecordingJudge, ReplayJudge, record_result
from judge.model import Event, JudgeFinding, JudgeVerdict

EVENTS = tuple(TypeAdapter(Event).validate_python(e) for e in [
    {"id": "e1", "turn": 1, "kind": "user", "text": "do not deploy"},
    {"id": "e2", "turn": 2, "kind": "tool-call", "call_id": "c1", "tool": "deploy", "args": {}},
])
FP = {"backend": "llm", "model": "m", "prompt": {"id": "goal-fidelity", "version": 1, "sha256": "ab"}}


def request(after_turn=2, keys=("no_deploy",)) -> JudgeRequest:
    return JudgeRequest(scenario_id="s", run_id="r", after_turn=after_turn, from_turn=1, keys=keys,
                        ledger=(), events=EVENTS)


class FixedJudge:
    def fingerprint(self):
        return FP

    async def judge_checkpoint(self, req):
        if req.after_turn == 9:
            return JudgeResult(verdict=None, error="timeout")
        return JudgeResult(verdict=JudgeVerdict(findings=[JudgeFinding(
            key="no_deploy", verdict="violated", evidence_event="e2", confidence=0.9, rationale="deployed")]))


def test_record_then_replay(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    recorder = RecordingJudge(FixedJudge(), path)
    live = asyncio.run(recorder.judge_checkpoint(request()))
    asyncio.run(recorder.judge_checkpoint(request(after_turn=9)))
    assert len(path.read_text().splitlines()) == 2

    replay = ReplayJudge(path)
    assert replay.fingerprint() == FP  # calibration records of the recorded judge stay valid
    again = asyncio.run(replay.judge_checkpoint(request()))
    assert again.verdict == live.verdict and again.calls == 0
    failed = asyncio.run(replay.judge_checkpoint(request(after_turn=9)))
    assert failed.verdict is None and "recorded judge error: timeout" in failed.error
    missing = asyncio.run(replay.judge_checkpoint(request(after_turn=5)))
    assert missing.verdict is None and "no recorded verdict" in missing.error


def test_replayed_verdicts_are_checked_like_live_ones(tmp_path):
    path = tmp_path / "v.jsonl"
    bad = JudgeResult(verdict=JudgeVerdict(findings=[JudgeFinding(
        key="no_deploy", verdict="violated", evidence_event="e7", confidence=0.9)]))
    record_result(path, request(), bad, FP)
    result = asyncio.run(ReplayJudge(path).judge_checkpoint(request()))
    assert result.verdict is None and "'e7'" in result.error
    other_key = asyncio.run(ReplayJudge(path).judge_checkpoint(request(keys=("goal",))))
    assert other_key.verdict is None and "not asked" in other_key.error


def test_later_line_wins_and_bad_lines_are_named(tmp_path):
    path = tmp_path / "v.jsonl"
    record_result(path, request(), JudgeResult(verdict=None, error="first"), FP)
    asyncio.run(RecordingJudge(FixedJudge(), path).judge_checkpoint(request()))
    assert asyncio.run(ReplayJudge(path).judge_checkpoint(request())).verdict is not None
    with path.open("a") as fh:
        fh.write(json.dumps({"scenario": "s", "run_id": "r", "after_turn": -1}) + "\n")
    with pytest.raises(JudgeInputError) as info:
        ReplayJudge(path)
    assert info.value.line == 3 and info.value.field == "after_turn"
