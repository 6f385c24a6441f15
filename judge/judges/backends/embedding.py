"""`embedding`: the offline judge (MiniLM by default; any sentence-transformers model name or path)."""

from __future__ import annotations

from judge.judges.spec import BackendSpec


def _make(config):
    from judge.judges.local.judge import EmbeddingJudge
    from judge.text import minilm

    minilm.set_torch_threads(minilm.torch_threads_option(
        config.options, f"tool.judge.judges.{config.name}.options.torch_threads"))
    return EmbeddingJudge(config)


SPEC = BackendSpec(name="embedding", make=_make, audits_while_grading=True, asked_only_when_needed=True,
                   position=20,
                   description="the offline judge: an embedding model and lexical cues, no key, no network")
