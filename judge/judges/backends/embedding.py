"""`embedding`: the offline judge (MiniLM by default; any sentence-transformers model name or path)."""

from __future__ import annotations

from judge.judges.spec import BackendSpec


def _make(config):
    from judge.judges.local.judge import EmbeddingJudge
    from judge.text import minilm

    minilm.set_torch_threads(minilm.torch_threads_option(
        config.options, f"tool.judge.judges.{config.name}.options.torch_threads"))
    return EmbeddingJudge(config)


def _check(config) -> str | None:
    """A `params` that is not ID@N (whether that version exists is checked when the judge is made)."""
    import re

    if config.params is None or re.match(r"^[a-z0-9][a-z0-9_-]*@v?[1-9][0-9]*$", config.params.strip()):
        return None
    return f"params must name a version of the decision thresholds, ID@N (e.g. local@2); got {config.params!r}"


SPEC = BackendSpec(name="embedding", make=_make, check_config=_check, audits_while_grading=True,
                   asked_only_when_needed=True, position=20,
                   description="the offline judge: an embedding model and lexical cues, no key, no network",
                   extra="local")
