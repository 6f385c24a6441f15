"""The policy file (YAML or JSON): a scenario without per-turn checkpoints, for every trace.

A policy is what an organisation holds its agents to whatever the task ("act only on the user's
own instructions", "never touch credentials", "confirm before paying"): ledger entries that hold
from turn 0 (a constraint or a permission stated once, before the run), and rules applied over the
whole run. It has no deltas, no checkpoints and no sessions: graded alone (`judge grade --policy`),
a checkpoint at the end of every turn is implied. A scenario or another policy may `extends:` it
(judge.ledger.policy merges the keys; a key or rule id defined twice is an error naming both files).
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from judge.model.base import Strict
from judge.model.rules import Rule, holds_rules
from judge.model.scenario import LedgerEntry


class PolicyEntry(LedgerEntry):
    """A ledger entry of a policy: it holds from turn 0 (`source_turn` may be left out, and is 0)."""

    source_turn: int = Field(default=0, ge=0, le=0, strict=True, description=(
        "always 0: a policy's entries hold from the start of every run"))


@holds_rules
class Policy(Strict):
    """A policy pack: entries that hold from turn 0 and rules over the whole run, for any trace."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    id: str = Field(min_length=1)
    title: str | None = None
    description: str | None = None
    draft: bool = Field(default=False, description=(
        "true in a policy `judge draft` proposed and no one has reviewed yet: grading refuses it "
        "(unless --allow-draft) until a reviewer removes the line"))
    extends: list[str] = Field(default_factory=list, description=(
        "policies whose entries and rules this one adds to its own: a bundled name (`agent-safety`) or "
        "a path relative to this file"))
    ledger: list[PolicyEntry] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)
