"""Build the judge a configuration names, from its backend's spec (judge.judges.backends and the
`judge.backends` entry points). Backends import their libraries only when built (litellm and
sentence-transformers take seconds to import)."""

from __future__ import annotations

from judge.config import JudgeConfig
from judge.judges.base import Judge
from judge.judges.spec import backend_spec


def make_judge(config: JudgeConfig) -> Judge:
    """The judge of one `[tool.judge.judges.NAME]` table."""
    return backend_spec(config.backend).make(config)


def audits_while_grading(judge: object) -> bool:
    """Does the judge's backend audit the run's summaries while grading (so the grade keeps them)?"""
    backend = judge.fingerprint().get("backend") if judge is not None else None  # type: ignore[attr-defined]
    return backend is not None and backend_spec(backend).audits_while_grading
