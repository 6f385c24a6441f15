"""Build the judge a configuration names. Backends are imported only when used (litellm and
sentence-transformers take seconds to import)."""

from __future__ import annotations

from judge.config import JudgeConfig
from judge.errors import ConfigError
from judge.judges.base import Judge


def make_judge(config: JudgeConfig) -> Judge:
    if config.backend == "llm":
        from judge.judges.llm import LLMJudge

        return LLMJudge(config)
    if config.backend == "replay":
        from judge.judges.replay import ReplayJudge

        return ReplayJudge.from_config(config)
    if config.backend == "embedding":
        from judge.judges.local.judge import EmbeddingJudge
        from judge.text import minilm

        minilm.set_torch_threads(minilm.torch_threads_option(
            config.options, f"tool.judge.judges.{config.name}.options.torch_threads"))
        return EmbeddingJudge(config)
    raise ConfigError(f"unknown judge backend {config.backend!r}")  # pragma: no cover - config validates
