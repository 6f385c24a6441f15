"""Replay judge: verdicts from a recorded JSONL, one line per checkpoint.

```json
{"scenario":"checkout-firefox","run_id":"r-0007","after_turn":7,"findings":[...],"fingerprint":{...}}
```
A line may carry `error` instead of findings (a recorded judge error). A later line for the same
checkpoint replaces an earlier one. Replayed findings are checked like live ones: only asked keys,
evidence inside the slice; a checkpoint with no line, or a line that breaks those rules, is a judge
error. `record_result` (or the `RecordingJudge` wrapper) appends such lines as a live judge runs, so a
graded run can be replayed without the model, for free and deterministically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from judge.config import JudgeConfig
from judge.errors import JudgeInputError
from judge.judges.base import Judge, JudgeRequest, JudgeResult
from judge.model import JudgeFinding, JudgeFingerprint, JudgeVerdict, Strict


class ReplayRecord(Strict):
    scenario: str
    run_id: str
    after_turn: int = Field(ge=0)
    findings: list[JudgeFinding] = Field(default_factory=list)
    fingerprint: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


def read_records(path: str | Path) -> dict[tuple[str, str, int], ReplayRecord]:
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise JudgeInputError(f"cannot read recorded verdicts: {exc}", file=str(path)) from exc
    records: dict[tuple[str, str, int], ReplayRecord] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = ReplayRecord.model_validate_json(line)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or None
            raise JudgeInputError(err["msg"], file=str(path), line=number, field=field) from exc
        records[(record.scenario, record.run_id, record.after_turn)] = record
    return records


def _problem(request: JudgeRequest, findings: list[JudgeFinding]) -> str | None:
    shown = {e.id for e in request.events}
    seen: set[str] = set()
    for f in findings:
        if f.key not in request.keys:
            return f"recorded finding for key {f.key!r}, which was not asked"
        if f.key in seen:
            return f"key {f.key!r} recorded twice"
        if f.verdict == "violated" and f.evidence_event not in shown:
            return f"recorded evidence {f.evidence_event!r} for {f.key!r} is not in the slice"
        seen.add(f.key)
    return None


class ReplayJudge:
    backend = "replay"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.records = read_records(self.path)

    @classmethod
    def from_config(cls, config: JudgeConfig) -> ReplayJudge:
        return cls(config.path or "")

    def fingerprint(self) -> dict[str, Any]:
        """The recorded judge's fingerprint when every line shares one (calibration stays valid)."""
        prints = {json.dumps(r.fingerprint, sort_keys=True) for r in self.records.values()}
        if len(prints) == 1:
            return json.loads(prints.pop())
        return JudgeFingerprint(backend="replay", path=str(self.path), fingerprints=sorted(prints)).dump()

    async def judge_checkpoint(self, request: JudgeRequest) -> JudgeResult:
        record = self.records.get((request.scenario_id, request.run_id, request.after_turn))
        if record is None:
            return JudgeResult(verdict=None, error=f"no recorded verdict for {request.scenario_id}/"
                                                   f"{request.run_id} after turn {request.after_turn}")
        if record.error:
            return JudgeResult(verdict=None, error=f"recorded judge error: {record.error}")
        problem = _problem(request, record.findings)
        if problem:
            return JudgeResult(verdict=None, error=problem)
        return JudgeResult(verdict=JudgeVerdict(findings=list(record.findings)), extra={"replayed": True})


def record_result(path: str | Path, request: JudgeRequest, result: JudgeResult,
                  fingerprint: dict[str, Any]) -> None:
    """Append one checkpoint's verdict (or judge error) to a replay file."""
    record = ReplayRecord(scenario=request.scenario_id, run_id=request.run_id, after_turn=request.after_turn,
                          findings=list(result.verdict.findings) if result.verdict else [],
                          fingerprint=fingerprint, error=None if result.verdict else (result.error or "no verdict"))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(record.model_dump_json() + "\n")


class RecordingJudge:
    """Wraps a judge and records every verdict it returns to a replay file."""

    def __init__(self, inner: Judge, path: str | Path) -> None:
        self.inner = inner
        self.path = Path(path)

    def fingerprint(self) -> dict[str, Any]:
        return self.inner.fingerprint()

    async def judge_checkpoint(self, request: JudgeRequest) -> JudgeResult:
        result = await self.inner.judge_checkpoint(request)
        record_result(self.path, request, result, self.inner.fingerprint())
        return result
