"""How far a grade trusts its judge: a judge decides only as far as it was measured.

A judge is **binding** (its `violated` decides a key) when its configured `authority` is
`binding`, or `calibrated` (the default) with a current, certified calibration record for its exact
fingerprint and the label set. Otherwise it is advisory (judge.grade.merge): where a rule ruled,
the rule's verdict stands and the judge's opinion is kept for review; where none did, its
`violated` is `flagged` for a person. A stale record makes a `calibrated` judge advisory (warned).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judge.grade.calibration import CalibrationState


@dataclass(frozen=True)
class Trust:
    authority: str
    binding: bool
    reason: str
    record: str | None = None

    def as_report(self) -> dict[str, Any]:
        """The keys added to the report's `judge` object."""
        return {"authority": self.authority, "binding": self.binding, "binding_reason": self.reason,
                "calibration_record": self.record}


def judge_trust(authority: str, state: CalibrationState) -> Trust:
    record = str(state.path) if state.record is not None and state.path is not None else None
    if authority == "binding":
        return Trust(authority, True, 'authority = "binding" in its configuration: its violations decide keys',
                     record)
    if authority == "advisory":
        return Trust(authority, False, 'authority = "advisory" in its configuration: its violations are '
                     "kept for review, and flagged where no rule ruled", record)
    if state.record is None:
        return Trust(authority, False, "advisory: no current calibration record for its fingerprint and "
                     "labels (" + "; ".join(state.stale_reasons) + ")")
    certification = state.record.certification_summary  # names the bias gate, run or not
    if not state.record.certified:
        return Trust(authority, False, f"advisory: its calibration record is current but not certified. "
                     f"{certification}", record)
    return Trust(authority, True, f"binding: its calibration record is current and certified. {certification}",
                 record)
