"""One prompted LLM call: the set-up the llm judge, the summary audit's judge layer and the drafter share.

A `PromptedCall` is one `[tool.judge.judges.NAME]` llm configuration asked one kind of prompt. It
checks the configuration is an llm judge, loads the prompt (the configured one, or the kind's
option, e.g. `options.summary_prompt`) and checks that it answers the kind's output schema, opens the
verdict cache in the kind's namespace, resolves the API key once, holds one structured client
(judge.judges.client) and builds the fingerprint (judge.model.JudgeFingerprint) in one place. Each
user composes one and adds only what is its own: the judge its windows and merging, the summary
audit and the drafter their messages and answer models.

A call's cache key is the full request (judge.judges.cache.call_key); what is stored is the validated
answer, so a hit needs no request and no re-validation.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from judge.config import JudgeConfig, resolve_api_key
from judge.errors import ConfigError, with_article
from judge.judges.cache import VerdictCache, call_key
from judge.judges.client import CallFailed, StructuredClient, Usage
from judge.judges.redis_cache import open_cache
from judge.judges.spec import backend_spec
from judge.model import JudgeFingerprint, PromptFingerprint, Sampling
from judge.prompts import Prompt, load_prompt


@dataclass(frozen=True)
class CallKind:
    """What one kind of prompted call is: the schema its prompts answer, where its prompt is
    configured, its cache namespace, and what its fingerprint records."""

    schema: str  # the `output_schema` its prompts declare
    namespace: str  # of the verdict cache
    needs: str  # the error's reason when the configuration is no llm judge
    prompt_option: str | None = None  # an `options` key naming the prompt; None: the judge's `prompt`
    default_prompt: str | None = None  # when `prompt_option` is not set
    sampling: tuple[str, ...] = ("temperature", "seed", "mode")  # the settings its answers depend on
    named: bool = False  # the fingerprint carries the configured name
    render_version: int | None = None  # judge.judges.render's, when its messages are rendered there


@dataclass
class Answer:
    """A synchronous call's outcome: the validated answer or the judge error, and the usage counts
    (as a report's: calls, cache hits, attempts, tokens, transport retries, cost)."""

    answer: BaseModel | None = None
    error: str | None = None
    usage: dict[str, Any] | None = None


class PromptedCall:
    """`config` (an llm judge) asked prompts of `kind` (module docs). `prompt` overrides the
    configured prompt; `cache=None` opens the default cache folder (unless `config.cache` is off)."""

    def __init__(self, config: JudgeConfig, kind: CallKind, *, cache: VerdictCache | None = None,
                 prompt: Prompt | None = None) -> None:
        if not backend_spec(config.backend).prompted or not config.model:  # a prompted LLM backend
            raise ConfigError(f"judge {config.name!r} is {with_article(repr(config.backend))} judge: {kind.needs}")
        self.config = config
        self.kind = kind
        self.prompt = prompt or load_prompt(self._prompt_ref())
        if self.prompt.meta.output_schema != kind.schema:
            where = f"options.{kind.prompt_option}" if kind.prompt_option else "prompt"
            raise ConfigError(f"prompt {self.prompt.ref} answers {self.prompt.meta.output_schema!r}, not "
                              f"{kind.schema!r}", field=f"tool.judge.judges.{config.name}.{where}")
        self.cache = (cache or open_cache(config.cache, kind.namespace)) if config.cache else None
        self.client = StructuredClient(config, resolve_api_key(config))
        self._fingerprint = self._build_fingerprint()
        self._fingerprint_data = self._fingerprint.dump()  # every cache key and entry carries it: dumped once

    def _prompt_ref(self) -> str:
        if self.kind.prompt_option is None:
            return self.config.prompt
        return str(self.config.options.get(self.kind.prompt_option, self.kind.default_prompt))

    # ------------------------------------------------------------ identity

    def _build_fingerprint(self) -> JudgeFingerprint:
        cfg, kind = self.config, self.kind
        fields: dict[str, Any] = {"name": cfg.name} if kind.named else {}
        fields |= {"backend": cfg.backend, "model": cfg.model,
                   "prompt": PromptFingerprint.model_validate(self.prompt.fingerprint()),
                   "sampling": Sampling.model_validate({k: getattr(cfg, k) for k in kind.sampling})}
        if kind.render_version is not None:
            fields["render_version"] = kind.render_version
        return JudgeFingerprint.model_validate(fields)

    @property
    def fingerprint(self) -> JudgeFingerprint:
        """The fingerprint of this call's judge (built once)."""
        return self._fingerprint

    @property
    def fingerprint_data(self) -> dict[str, Any]:
        """The fingerprint as JSON data, dumped once: what cache keys and entries hold (read it, never
        change it; `fingerprint.dump()` makes a copy to keep)."""
        return self._fingerprint_data

    def params(self, sample: int = 0) -> dict[str, Any]:
        """The sampling parameters of one request (sample `n` of a judge asks with seed + n)."""
        seed = None if self.config.seed is None else self.config.seed + sample
        return {"temperature": self.config.temperature, "seed": seed}

    def key(self, messages: list[dict[str, str]], model_cls: type[BaseModel], params: dict[str, Any],
            **extra: Any) -> str:
        """The cache key of one request (judge.judges.cache.call_key)."""
        return call_key(self.config, self.prompt, messages, model_cls, params, **extra)

    # ------------------------------------------------------------ the cache

    def cached(self, key: str) -> dict[str, Any] | None:
        """The cache entry of `key`, or None (a miss, or no cache)."""
        return self.cache.get(key) if self.cache is not None else None

    def store(self, key: str, entry: dict[str, Any]) -> None:
        """Store an entry, with this call's fingerprint beside it (never fails the call)."""
        if self.cache is not None:
            self.cache.put(key, {**entry, "fingerprint": self._fingerprint_data})

    # ------------------------------------------------------------ asking

    async def ask(self, messages: list[dict[str, str]], model_cls: type[BaseModel], params: dict[str, Any],
                  usage: Usage) -> BaseModel:
        """The validated answer; raises CallFailed (its text is the judge error). `usage` sums the attempts."""
        return await self.client.ask(messages, model_cls, params, usage)

    def ask_sync(self, messages: list[dict[str, str]], model_cls: type[BaseModel],
                 params: dict[str, Any]) -> Answer:
        """One call from synchronous code (not inside a running event loop), with its usage and cost."""
        spent = Usage()

        async def ask_and_close() -> BaseModel:
            try:
                return await self.client.ask(messages, model_cls, params, spent)
            finally:
                await self.client.aclose()

        try:
            answer = asyncio.run(ask_and_close())
        except CallFailed as exc:
            return Answer(error=str(exc), usage=spent.record())
        cost = self.client.cost(spent.input_tokens, spent.output_tokens)
        return Answer(answer=answer, usage={**spent.record(), "cost_usd": cost})

    async def aclose(self) -> None:
        """Close the HTTP connections this event loop opened (call before the loop ends)."""
        await self.client.aclose()
