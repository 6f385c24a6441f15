"""The interval every statistic reports, and its level: a module of its own, without numpy, so that a
report holding intervals (a corpus report's rates, calibration.corpus) is read and written without the
statistics that compute them (calibration.bootstrap)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

CI_LEVEL = 0.95


class Interval(BaseModel):
    """A two-sided interval; `lower`/`upper` are None when no resample gave a defined value."""

    model_config = ConfigDict(extra="forbid")
    lower: float | None
    upper: float | None
    level: float = CI_LEVEL
