"""One validated answer from a model: send, validate, re-ask, retry, within one deadline.

The configured `mode` picks how the response schema travels and who parses the answer:
- `tools` (default), `tools_strict`, `json`, `json_schema`, `md_json`: instructor over litellm, any
  provider litellm knows;
- `strict`: OpenAI structured outputs, `response_format` json_schema with `strict: true`
  (judge.judges.schema.strict_schema), without instructor. For `openai/...` models (OpenAI, and any
  OpenAI-compatible server such as vLLM behind `api_base`) it goes through the OpenAI SDK directly,
  for other providers through litellm (`options.transport = "litellm"` or `"openai"` overrides).
  It is the cheaper path in client CPU (benchmarks/RESULTS.md).
Whichever the path, the answer is validated by the same per-request pydantic model; one that does not
validate is re-asked (the answer and the validation error sent back) up to `max_retries` times, then
the call fails: a judge error. 429, 5xx, timeouts and connection errors are retried up to
`transport_retries` times with backoff (`backoff_s`, doubling, honouring Retry-After); the HTTP
clients' own hidden retries are off, so every request is counted; `timeout_s` is the deadline of
the whole call (re-asks, retries and backoff included). Usage is summed over every attempt.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError

from judge.config import JudgeConfig
from judge.errors import ConfigError
from judge.judges import tokens
from judge.judges.libs import libs
from judge.judges.schema import strict_schema

INSTRUCTOR_MODES = ("tools", "tools_strict", "json", "json_schema", "md_json")
TRANSPORTS = ("openai", "litellm")
REASK = ("Your answer does not validate against the response schema:\n{error}\n"
         "Answer again: the corrected JSON only.")
@dataclass
class Usage:
    """What one call cost, summed over its attempts."""

    attempts: int = 0
    transport_retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def record(self) -> dict[str, Any]:
        """This call as a report's usage counts (one call, no cache hit)."""
        return {"calls": 1, "cache_hits": 0, "attempts": self.attempts, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "transport_retries": self.transport_retries}

    def add(self, response: Any) -> None:
        counts = getattr(response, "usage", None)
        self.input_tokens += getattr(counts, "prompt_tokens", 0) or 0
        self.output_tokens += getattr(counts, "completion_tokens", 0) or 0


_USAGE: contextvars.ContextVar[Usage] = contextvars.ContextVar("judge_call_usage")


class CallFailed(Exception):
    """No valid answer: `str()` is the one-line reason reported as the judge error."""


class InvalidAnswer(Exception):
    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


@lru_cache(maxsize=1024)
def wrapped(model_cls: type[BaseModel]) -> type[BaseModel]:
    """The model as instructor's ResponseSchema subclass, made once: instructor would otherwise wrap
    it and regenerate its tool schema on every call."""
    return libs()[1].response_schema(model_cls)


def response_format(model_cls: type[BaseModel]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": model_cls.__name__, "schema": strict_schema(model_cls),
                                                   "strict": True}}


def transport_errors() -> tuple[type[BaseException], ...]:
    litellm = libs()[0]
    names = ("RateLimitError", "InternalServerError", "ServiceUnavailableError", "BadGatewayError",
             "Timeout", "APIConnectionError")
    import openai

    found = tuple(getattr(litellm, n) for n in names if isinstance(getattr(litellm, n, None), type))
    return found + (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)


def is_transient(exc: BaseException, retryable: tuple[type[BaseException], ...]) -> bool:
    # litellm reports a missing API key as an InternalServerError: retrying cannot help
    return isinstance(exc, retryable) and "missing credentials" not in str(exc).lower()


def retry_exception() -> type[BaseException]:
    from instructor.core import InstructorRetryException

    return InstructorRetryException


def first_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        return min(float(value), 60.0) if value is not None else None
    except (TypeError, ValueError):
        return None


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Price of the summed usage from litellm's table; None when the model has no known price."""
    try:
        prompt_cost, completion_cost = libs()[0].cost_per_token(
            model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens)
    except Exception:  # litellm raises a plain Exception for an unmapped model
        return None
    return round(prompt_cost + completion_cost, 10)


class StructuredClient:
    """Asks `config`'s model for answers validated by per-request response models (module docs)."""

    def __init__(self, config: JudgeConfig, api_key: str | None) -> None:
        self.config = config
        self.api_key = api_key
        self.transport = self._transport() if config.mode == "strict" else "instructor"
        self._instructor: Any = None
        self._sdk: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def _transport(self) -> str:
        chosen = self.config.options.get("transport")
        if chosen is not None and chosen not in TRANSPORTS:
            raise ConfigError(f"options.transport must be one of {', '.join(TRANSPORTS)}",
                              field=f"tool.judge.judges.{self.config.name}.options.transport")
        return chosen or ("openai" if (self.config.model or "").startswith("openai/") else "litellm")

    # ------------------------------------------------------------ the request as sent

    def body(self, messages: list[dict[str, str]], model_cls: type[BaseModel]) -> dict[str, Any]:
        """The request body this client sends for `messages` (messages, tools or response_format)."""
        if self.transport != "instructor":
            return {"messages": messages, "response_format": response_format(model_cls)}
        from instructor.processing import handle_response_model

        mode = libs()[1].Mode[self.config.mode.upper()]
        return handle_response_model(wrapped(model_cls), mode=mode, messages=messages)[1]

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """The price of this usage in USD (None: the model has no known price)."""
        return cost_usd(self.config.model or "", input_tokens, output_tokens)

    def schema_tokens(self, model_cls: type[BaseModel]) -> int:
        """Tokens a request carries besides its messages (judge.judges.tokens), once per model."""
        return tokens.schema_tokens(lambda m: self.body(m, model_cls), (self.config.mode, model_cls))

    # ------------------------------------------------------------ asking

    async def ask(self, messages: list[dict[str, str]], model_cls: type[BaseModel], params: dict[str, Any],
                  usage: Usage) -> BaseModel:
        """The validated answer; raises CallFailed (the reason is the judge error)."""
        cfg = self.config
        retryable = transport_errors()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + cfg.timeout_s  # one deadline for the whole call: re-asks, retries, backoff
        while True:
            try:
                return await asyncio.wait_for(self._once(messages, model_cls, params, usage, deadline),
                                              timeout=deadline - loop.time())
            except TimeoutError:  # asyncio.wait_for at the deadline
                raise CallFailed(self._deadline(usage)) from None
            except Exception as exc:  # instructor wraps every failure; its cause tells what it was
                cause = (exc.__cause__ if isinstance(exc, retry_exception()) else exc) or exc
                if is_transient(cause, retryable) and usage.transport_retries < cfg.transport_retries:
                    usage.transport_retries += 1
                    pause = self._backoff(usage.transport_retries, cause)
                    if loop.time() + pause >= deadline:
                        raise CallFailed(self._deadline(usage, cause)) from None
                    await asyncio.sleep(pause)
                    continue
                raise CallFailed(self._describe(cause, usage, retryable)) from None

    def ask_sync(self, messages: list[dict[str, str]], model_cls: type[BaseModel], params: dict[str, Any],
                 usage: Usage) -> BaseModel:
        """`ask` from synchronous code (not from inside a running event loop)."""
        async def ask_and_close() -> BaseModel:
            try:
                return await self.ask(messages, model_cls, params, usage)
            finally:
                await self.aclose()

        return asyncio.run(ask_and_close())

    async def aclose(self) -> None:
        """Close the HTTP client this event loop opened (the OpenAI SDK transport keeps one per loop)."""
        client = self._sdk.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def _once(self, messages: list[dict[str, str]], model_cls: type[BaseModel], params: dict[str, Any],
                    usage: Usage, deadline: float) -> BaseModel:
        extra = {k: v for k, v in params.items() if v is not None}
        remaining = deadline - asyncio.get_running_loop().time()
        if self.transport == "instructor":
            token = _USAGE.set(usage)
            try:
                return await self._instructor_client().chat.completions.create(
                    model=self.config.model, messages=[dict(m) for m in messages], response_model=wrapped(model_cls),
                    max_retries=self.config.max_retries, timeout=remaining, **self._litellm_auth(), **extra)
            finally:
                _USAGE.reset(token)
        return await self._strict(messages, model_cls, extra, usage, deadline)

    async def _strict(self, messages: list[dict[str, str]], model_cls: type[BaseModel], extra: dict[str, Any],
                      usage: Usage, deadline: float) -> BaseModel:
        sent = [dict(m) for m in messages]
        fmt = response_format(model_cls)
        loop = asyncio.get_running_loop()
        for _ in range(self.config.max_retries + 1):
            usage.attempts += 1
            response = await self._send(sent, fmt, extra, deadline - loop.time())
            usage.add(response)
            message = response.choices[0].message
            content = message.content
            try:
                if content is None:
                    raise ValueError(f"no answer content (refusal: {getattr(message, 'refusal', None)!r})")
                return model_cls.model_validate_json(content)
            except (ValidationError, ValueError) as exc:
                error = exc
            sent += [{"role": "assistant", "content": content or ""},
                     {"role": "user", "content": REASK.format(error=error)}]
        raise InvalidAnswer(error)

    async def _send(self, messages: list[dict[str, str]], fmt: dict[str, Any], extra: dict[str, Any],
                    remaining: float) -> Any:
        if self.transport == "openai":
            return await self._openai().chat.completions.create(
                model=self.config.model.removeprefix("openai/"), messages=messages, response_format=fmt,
                timeout=remaining, **extra)
        return await libs()[0].acompletion(model=self.config.model, messages=messages, response_format=fmt,
                                           timeout=remaining, max_retries=0, **self._litellm_auth(), **extra)

    def _litellm_auth(self) -> dict[str, str]:
        return {k: v for k, v in (("api_base", self.config.api_base), ("api_key", self.api_key)) if v}

    def _openai(self) -> Any:
        """One AsyncOpenAI per event loop (its connection pool belongs to the loop)."""
        loop = asyncio.get_running_loop()
        client = self._sdk.get(loop)
        if client is None:
            from openai import AsyncOpenAI

            key = self.api_key or os.environ.get("OPENAI_API_KEY")
            if not key and not self.config.api_base:
                raise CallFailed("no API key: set the judge's api_key_env (or OPENAI_API_KEY)")
            client = self._sdk[loop] = AsyncOpenAI(api_key=key or "none", base_url=self.config.api_base,
                                                   max_retries=0)
        return client

    def _instructor_client(self) -> Any:
        """One instructor client; the usage of the call being made is tracked in a context variable."""
        if self._instructor is None:
            litellm, instructor = libs()

            async def completion(**kwargs: Any) -> Any:
                usage = _USAGE.get()
                kwargs["max_retries"] = 0  # the OpenAI client's hidden retries would go uncounted
                usage.attempts += 1
                response = await litellm.acompletion(**kwargs)
                usage.add(response)
                return response

            self._instructor = instructor.from_litellm(completion, mode=instructor.Mode[self.config.mode.upper()])
        return self._instructor

    # ------------------------------------------------------------ what went wrong

    def _deadline(self, usage: Usage, cause: BaseException | None = None) -> str:
        last = f"; last error {type(cause).__name__}: {first_line(str(cause), 150)}" if cause is not None else ""
        return (f"no answer within timeout_s={self.config.timeout_s:g} s (the deadline of the whole call, "
                f"{usage.attempts} attempt(s), {usage.transport_retries} transport retries){last}")

    def _backoff(self, retry: int, exc: BaseException) -> float:
        hinted = retry_after(exc)
        return hinted if hinted is not None else min(self.config.backoff_s * 2 ** (retry - 1), 30.0)

    @staticmethod
    def _describe(cause: BaseException, usage: Usage, retryable: tuple[type[BaseException], ...]) -> str:
        if isinstance(cause, CallFailed):
            return str(cause)
        if isinstance(cause, InvalidAnswer):
            cause = cause.error
        if isinstance(cause, retryable):
            return (f"{type(cause).__name__} after {usage.transport_retries + 1} tries: "
                    f"{first_line(str(cause), 200)}")
        if isinstance(cause, (ValidationError, ValueError)):
            return f"invalid answer after {usage.attempts} attempts: {first_line(str(cause), 300)}"
        return f"{type(cause).__name__}: {first_line(str(cause), 300)}"
