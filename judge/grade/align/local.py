"""`judge align` for the offline `local` judge: refit its thresholds on the dev split and report
before/after on the test split. Not available yet: the refittable thresholds are being built
(issue 24, item 2). This function is the one place that work fills in; `judge align` calls it for
every judge of the embedding backend."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from judge.config import JudgeConfig
from judge.errors import UsageError


def align_local_judge(config: JudgeConfig, labels: Path, *, scenarios: Iterable[Path] = (), seed: int = 0):
    """Refitted thresholds for an embedding-backend judge (not available yet: a UsageError, exit 2)."""
    raise UsageError(f"judge align --judge {config.name}: refitting the thresholds of the offline local judge "
                     "on the dev split is not available yet; `judge align` aligns llm judges (a new prompt version)")
