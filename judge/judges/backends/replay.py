"""`replay`: verdicts recorded earlier (JSONL), answered again without a model."""

from __future__ import annotations

from judge.judges.spec import BackendSpec


def _make(config):
    from judge.judges.replay import ReplayJudge

    return ReplayJudge.from_config(config)


def _check(config) -> str | None:
    return None if config.path else "a replay judge needs `path` (a JSONL of recorded verdicts)"


SPEC = BackendSpec(name="replay", make=_make, check_config=_check, position=30,
                   description="verdicts recorded earlier, answered again by checkpoint")
