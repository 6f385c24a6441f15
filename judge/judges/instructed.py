"""The instructor-over-litellm path: for providers and modes the direct client does not speak.

Modes `tools_strict`, `json`, `json_schema` and `md_json`, and `tools` for a model litellm routes to
a provider that is not OpenAI-compatible (`anthropic/...`, `gemini/...`, `hosted_vllm/...`, or
`options.transport = "litellm"`), go through instructor, which knows how each provider carries a
response schema, over litellm's `acompletion`. instructor validates the answer with the response
model and re-asks `max_retries` times; litellm's own hidden retries are off (every request is
counted in the call's usage), and each validation error is recorded in it (instructor's
`parse:error` hook). `max_tokens` travels as a litellm parameter (litellm names it as the provider
wants).
"""

from __future__ import annotations

import contextvars
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from judge.judges.libs import libs

_USAGE: contextvars.ContextVar[Any] = contextvars.ContextVar("judge_call_usage")


@lru_cache(maxsize=1024)
def wrapped(model_cls: type[BaseModel]) -> type[BaseModel]:
    """The model as instructor's ResponseSchema subclass, made once: instructor would otherwise wrap
    it and regenerate its tool schema on every call."""
    return libs()[1].response_schema(model_cls)


def instructor_body(mode: str, messages: list[dict[str, str]], model_cls: type[BaseModel]) -> dict[str, Any]:
    """The request body instructor builds for `messages` in `mode` (messages, tools, ...)."""
    from instructor.processing import handle_response_model

    return handle_response_model(wrapped(model_cls), mode=libs()[1].Mode[mode.upper()], messages=messages)[1]


def retry_exception() -> type[BaseException]:
    """What instructor raises when its re-asks are spent (its cause says what went wrong)."""
    from instructor.core import InstructorRetryException

    return InstructorRetryException


def transport_errors() -> tuple[type[BaseException], ...]:
    """The litellm and OpenAI SDK errors a retry can help with."""
    import openai

    litellm = libs()[0]
    names = ("RateLimitError", "InternalServerError", "ServiceUnavailableError", "BadGatewayError",
             "Timeout", "APIConnectionError")
    found = tuple(getattr(litellm, n) for n in names if isinstance(getattr(litellm, n, None), type))
    return found + (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)


class InstructedClient:
    """One instructor client over litellm; the usage of the call being made is tracked in a context
    variable (instructor calls our completion function, not us)."""

    def __init__(self, mode: str) -> None:
        litellm, instructor = libs()

        async def completion(**kwargs: Any) -> Any:
            usage = _USAGE.get()
            kwargs["max_retries"] = 0  # the OpenAI client's hidden retries would go uncounted
            usage.attempts += 1
            response = await litellm.acompletion(**kwargs)
            usage.add(response)
            return response

        def invalid(error: Any) -> None:
            _USAGE.get().answer_errors.append(" ".join(str(error).split())[:300])

        self._client = instructor.from_litellm(completion, mode=instructor.Mode[mode.upper()])
        self._client.on("parse:error", invalid)

    async def ask(self, model: str, messages: list[dict[str, str]], model_cls: type[BaseModel], usage: Any,
                  **kwargs: Any) -> BaseModel:
        token = _USAGE.set(usage)
        try:
            return await self._client.chat.completions.create(
                model=model, messages=[dict(m) for m in messages], response_model=wrapped(model_cls), **kwargs)
        finally:
            _USAGE.reset(token)
