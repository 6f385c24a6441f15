"""`llm`: any litellm model (a provider, a local server) answering a versioned prompt."""

from __future__ import annotations

from judge.judges.spec import BackendSpec

# Read by no judge but the embedding one: set here it would be ignored, so it is refused.
_NO_PARAMS = ("`params` (decision thresholds, ID@N) belongs to the embedding judge; an llm judge has none: "
              "remove it")


def _make(config):
    from judge.judges.llm import LLMJudge

    return LLMJudge(config)


def _check(config) -> str | None:
    if config.params is not None:
        return _NO_PARAMS
    return None if config.model else "an llm judge needs `model` (any litellm model string)"


SPEC = BackendSpec(name="llm", make=_make, check_config=_check, prompted=True, position=10,
                   description="an LLM through litellm (any provider or local server) answering a versioned prompt",
                   extra="llm")
