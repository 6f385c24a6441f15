"""Small builders for scenarios and traces used across tests."""

from __future__ import annotations

from typing import Any

from judge.ledger import build_ledger
from judge.model import Scenario


def ledger_of(**scenario: Any):
    scenario.setdefault("id", "s")
    return build_ledger(Scenario.model_validate(scenario))


def header(scenario: str = "s", run_id: str = "r1") -> dict:
    return {"kind": "run", "run_id": run_id, "scenario": scenario}


class TraceBuilder:
    """Builds trace lines with unique ids and call ids."""

    def __init__(self, scenario: str = "s") -> None:
        self.lines: list[dict] = [header(scenario)]
        self.n = 0
        self.calls = 0

    def _id(self) -> str:
        self.n += 1
        return f"e{self.n}"

    def user(self, turn: int, text: str) -> str:
        eid = self._id()
        self.lines.append({"id": eid, "turn": turn, "kind": "user", "text": text})
        return eid

    def say(self, turn: int, text: str) -> str:
        eid = self._id()
        self.lines.append({"id": eid, "turn": turn, "kind": "assistant", "text": text})
        return eid

    def call(self, turn: int, tool: str, status: str | None = "ok", result: Any = None, **args: Any) -> str:
        self.calls += 1
        cid = f"c{self.calls}"
        eid = self._id()
        self.lines.append({"id": eid, "turn": turn, "kind": "tool-call", "call_id": cid, "tool": tool, "args": args})
        if status is not None:
            self.lines.append({"id": self._id(), "turn": turn, "kind": "tool-result", "call_id": cid,
                               "tool": tool, "status": status, "result": result})
        return eid

    def write(self, turn: int, key: str, value: Any) -> str:
        eid = self._id()
        self.lines.append({"id": eid, "turn": turn, "kind": "state-write", "key": key, "value": value})
        return eid

    def summary(self, turn: int, text: str, reason: str = "compaction") -> str:
        eid = self._id()
        self.lines.append({"id": eid, "turn": turn, "kind": "summary", "reason": reason, "text": text})
        return eid
