"""`replay`: verdicts recorded earlier (JSONL), answered again without a model."""

from __future__ import annotations

from judge.judges.spec import BackendSpec

# Read by no judge but the embedding one: set here it would be ignored, so it is refused.
_NO_PARAMS = ("`params` (decision thresholds, ID@N) belongs to the embedding judge; a replay judge has none: "
              "remove it")


def _make(config):
    from judge.judges.replay import ReplayJudge

    return ReplayJudge.from_config(config)


def _check(config) -> str | None:
    if config.params is not None:
        return _NO_PARAMS
    return None if config.path else "a replay judge needs `path` (a JSONL of recorded verdicts)"


SPEC = BackendSpec(name="replay", make=_make, check_config=_check, position=30,
                   description="verdicts recorded earlier, answered again by checkpoint")
