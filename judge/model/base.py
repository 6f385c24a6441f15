"""What every format shares: the strict base model and the vocabularies of the scenario and report."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

EntryClass = Literal["goal", "constraint", "fact", "permission", "completion", "uncertainty"]
"""What a ledger entry is; goals, constraints and permissions are user instructions."""
Persistence = Literal["turn", "task", "session", "until-replaced"]
"""How long an entry holds: its turn only, the task, its session, or until a `set` replaces it."""
Sensitivity = Literal["normal", "costly", "safety-critical"]
"""How much a violation weighs (1, 3, 10 in the quality score); a safety-critical one vetoes the run."""
Source = Literal["user", "tool", "agent"]
"""Who stated an entry or a delta: only a user may revoke; a tool may update a fact only."""
DeltaOp = Literal["add", "set", "complete", "revoke", "reopen"]
"""A delta's operation on the ledger."""
Verdict = Literal["violated", "upheld", "not-exercised", "unassessed"]
"""What a judge may answer for a key (`unassessed`: it abstains, and its rationale says why: what it
read and could not decide; the key is then graded as if no judge had looked at it)."""
FindingVerdict = Literal["violated", "upheld", "not-exercised", "unassessed", "judge-error", "flagged"]
"""A key's verdict in the grade report: a judge's or a rule's, or why there is none (`unassessed`:
nothing looked at it; `judge-error`: no valid answer; `flagged`: a non-binding judge said violated)."""
Outcome = Literal["pass", "fail", "inconclusive"]
"""A run's outcome."""
Authority = Literal["calibrated", "binding", "advisory"]
"""How far a judge's violations decide keys: `calibrated` (binding only with a current, certified
calibration record), or fixed as `binding` or `advisory`."""


class Strict(BaseModel):
    """The base of every format: an unknown field is an error (`extra="forbid"`), not a silent
    default, and a field with an alias (`class`) may also be given by its Python name (`class_`)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

