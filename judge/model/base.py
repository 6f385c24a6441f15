"""What every format shares: the strict base model and the vocabularies of the scenario and report."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

EntryClass = Literal["goal", "constraint", "fact", "permission", "completion", "uncertainty"]
Persistence = Literal["turn", "task", "session", "until-replaced"]
Sensitivity = Literal["normal", "costly", "safety-critical"]
Source = Literal["user", "tool", "agent"]
DeltaOp = Literal["add", "set", "complete", "revoke", "reopen"]
Verdict = Literal["violated", "upheld", "not-exercised"]
FindingVerdict = Literal["violated", "upheld", "not-exercised", "unassessed", "judge-error", "flagged"]
Outcome = Literal["pass", "fail", "inconclusive"]
Authority = Literal["calibrated", "binding", "advisory"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

