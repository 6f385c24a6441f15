"""One validated answer from a model: send, validate, re-ask, retry, within one deadline.

Which client sends a request depends on the model and the configured `mode`:
- **direct** (`transport` "openai"): modes `tools` (the default) and `strict` to an `openai/...`
  model, that is OpenAI or any OpenAI-compatible server behind `api_base` (vLLM, llama.cpp's
  llama-server, Ollama's /v1, a litellm proxy, ...): judge.judges.http posts the request over one
  pooled connection per judge (keep-alive; HTTP/2 where offered), with the URL, key and headers
  settled once per judge, and judge.judges.answers builds the request in one of its *forms* (a
  forced tool, `tool_choice: "required"`, `response_format` json_schema, or the schema as text) and
  reads the answer, validated once by the per-request pydantic model. No instructor and no litellm
  on this path; the price is looked up once per judge (judge.judges.prices).
- **litellm** (`strict` for any other provider): the same request and answer handling, sent with
  litellm's `acompletion`.
- **instructor** (every other mode, and `tools` for other providers): instructor over litellm
  (judge.judges.instructed), which knows each provider's way of carrying a schema.
`options.transport = "openai"` or `"litellm"` overrides the choice for modes tools and strict.

The direct and litellm clients try the forms of the mode's ladder in order (judge.judges.answers.
LADDERS, or `options.forms`): a form the endpoint refuses (HTTP 400/422) or ignores (a forced tool
left uncalled) moves the call to the next form, and the client starts every later call of the judge
there; the call's usage says which form answered and which were refused, and why.

Every request carries the answer's bound, `max_tokens` (the judge's, else sized per answer:
judge.judges.schema.answer_tokens); an endpoint that refuses `max_tokens` and names
`max_completion_tokens` (OpenAI's reasoning models) gets that instead, from then on. An answer cut
at the bound is re-asked with a validation error that says so.

Whichever the client, an answer that does not validate is re-asked (the answer and the validation
error sent back) up to `max_retries` times, then the call fails: a judge error. 429, 5xx, timeouts
and connection errors are retried up to `transport_retries` times with backoff (`backoff_s`,
doubling, honouring Retry-After); no client retries on its own, so every request is counted;
`timeout_s` is the deadline of the whole call (re-asks, retries and backoff included). Usage is
summed over every attempt.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from judge.config import JudgeConfig
from judge.errors import ConfigError
from judge.judges import tokens
from judge.judges.answers import (  # noqa: F401 (response_format: part of this module's face)
    DIRECT_MODES,
    FORMS,
    LADDERS,
    TOOL_FORMS,
    Completion,
    answer_text,
    form_messages,
    reask,
    response_format,
    schema_part,
)
from judge.judges.bounded import HANDLER_PROVIDERS, LitellmHandlers, OpenAIClients, too_large
from judge.judges.libs import libs, litellm_lib  # noqa: F401 (libs: part of this module's face)
from judge.judges.prices import Prices, cost_usd  # noqa: F401 (cost_usd: part of this module's face)
from judge.judges.schema import answer_tokens

INSTRUCTOR_MODES = ("tools", "tools_strict", "json", "json_schema", "md_json")
TRANSPORTS = ("openai", "litellm")
Send = Callable[[list[dict[str, Any]], dict[str, Any], dict[str, Any], float], Awaitable[Completion]]


@dataclass
class Usage:
    """What one call cost, summed over its attempts."""

    attempts: int = 0
    transport_retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    form: str | None = None  # the form of the last request (judge.judges.answers), or the instructor mode
    refused: list[str] = field(default_factory=list)  # "FORM: why" for each form the endpoint refused
    answer_errors: list[str] = field(default_factory=list)  # why each invalid answer failed (re-asked, but the last)

    def record(self) -> dict[str, Any]:
        """This call as a report's usage counts (one call, no cache hit)."""
        return {"calls": 1, "cache_hits": 0, "attempts": self.attempts, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "transport_retries": self.transport_retries}

    def add(self, response: Any) -> None:
        """Add a litellm response's usage."""
        counts = getattr(response, "usage", None)
        self.input_tokens += getattr(counts, "prompt_tokens", 0) or 0
        self.output_tokens += getattr(counts, "completion_tokens", 0) or 0


class CallFailed(Exception):
    """No valid answer: `str()` is the one-line reason reported as the judge error."""


class InvalidAnswer(Exception):
    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class FormRefused(Exception):
    """The endpoint refused (HTTP 400/422) or ignored a form: `str()` says how."""


def refused(exc: BaseException) -> bool:
    """A request the endpoint rejected as malformed for it (400, 422): another form may pass."""
    status = getattr(exc, "status", None) or getattr(exc, "status_code", None)
    return status in (400, 422)


def is_transient(exc: BaseException, retryable: tuple[type[BaseException], ...]) -> bool:
    # litellm reports a missing API key as an InternalServerError: retrying cannot help
    return isinstance(exc, retryable) and "missing credentials" not in str(exc).lower()


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


class StructuredClient:
    """Asks `config`'s model for answers validated by per-request response models (module docs)."""

    def __init__(self, config: JudgeConfig, api_key: str | None) -> None:
        self.config = config
        self.api_key = api_key
        self.transport = self._transport()
        self.prices = Prices(config.model or "")
        self._endpoint: Any = None
        if self.transport == "openai":
            from judge.judges.http import OpenAIEndpoint

            self._endpoint = OpenAIEndpoint(config.api_base, api_key, max_connections=config.max_concurrency)
        self._instructor: Any = None
        self._retryable: tuple[type[BaseException], ...] | None = None
        self._bounded = self._bounded_client(api_key)
        self.forms = self._forms()
        self._form_at = 0  # the first form of the ladder that is not known to be refused here
        self._token_param = "max_tokens"  # or max_completion_tokens, once the endpoint asked for it

    def _transport(self) -> str:
        chosen = self.config.options.get("transport")
        if chosen is not None and chosen not in TRANSPORTS:
            raise ConfigError(f"options.transport must be one of {', '.join(TRANSPORTS)}",
                              field=f"tool.judge.judges.{self.config.name}.options.transport")
        mode = self.config.mode
        if mode not in DIRECT_MODES:
            return "instructor"
        chosen = chosen or ("openai" if (self.config.model or "").startswith("openai/") else "litellm")
        if chosen == "openai":
            return "openai"
        return "litellm" if mode == "strict" else "instructor"

    def _bounded_client(self, api_key: str | None) -> OpenAIClients | LitellmHandlers | None:
        """The client litellm is handed so that its answers are bounded in bytes (judge.judges.bounded):
        for its OpenAI-compatible provider, OpenAI SDK clients with the endpoint and key litellm would
        have found (none without either: litellm's own error then says what is missing); for the
        providers of HANDLER_PROVIDERS, litellm's own HTTP handler; None where litellm reads alone."""
        model = self.config.model or ""
        if self.transport == "openai":
            return None
        if model.startswith(HANDLER_PROVIDERS):
            return LitellmHandlers()
        if not model.startswith("openai/"):
            return None
        base = self.config.api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        return OpenAIClients(base, key) if base or key else None

    def _forms(self) -> tuple[str, ...]:
        chosen = self.config.options.get("forms")
        where = f"tool.judge.judges.{self.config.name}.options.forms"
        if chosen is None:
            return LADDERS.get(self.config.mode, ()) if self.transport != "instructor" else ()
        if self.transport == "instructor":
            raise ConfigError("options.forms needs the direct client: mode tools or strict with an openai/... "
                              "model (or options.transport)", field=where)
        if not isinstance(chosen, list) or not chosen or any(f not in FORMS for f in chosen):
            raise ConfigError(f"options.forms must be a non-empty list of {', '.join(FORMS)}", field=where)
        return tuple(dict.fromkeys(chosen))

    @property
    def form(self) -> str:
        """The form the next call starts with (judge.judges.answers), or the instructor mode."""
        return self.forms[self._form_at] if self.forms else self.config.mode

    def answer_tokens(self, model_cls: type[BaseModel]) -> int:
        """The bound of one answer to `model_cls`, sent as `max_tokens` (module docs)."""
        return self.config.max_tokens or answer_tokens(model_cls)

    # ------------------------------------------------------------ the request as sent

    def body(self, messages: list[dict[str, str]], model_cls: type[BaseModel]) -> dict[str, Any]:
        """The request body this client sends for `messages` in its current form (messages, tools or
        response_format)."""
        if self.transport != "instructor":
            return {"messages": form_messages(self.form, messages, model_cls), **schema_part(self.form, model_cls)}
        from judge.judges.instructed import instructor_body

        return instructor_body(self.config.mode, messages, model_cls)

    def schema_tokens(self, model_cls: type[BaseModel]) -> int:
        """Tokens a request carries besides its messages (judge.judges.tokens), once per form and model."""
        return tokens.schema_tokens(lambda m: self.body(m, model_cls), (self.form, model_cls))

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        """The price of this usage in USD (None: the model has no known price), looked up once."""
        return self.prices.cost(input_tokens, output_tokens)

    # ------------------------------------------------------------ asking

    def retryable(self) -> tuple[type[BaseException], ...]:
        """The errors a retry can help with, for this client (found once)."""
        if self._retryable is None:
            from judge.judges.http import TRANSIENT

            if self.transport == "openai":
                self._retryable = TRANSIENT
            else:
                from judge.judges.instructed import transport_errors

                self._retryable = TRANSIENT + transport_errors()
        return self._retryable

    async def ask(self, messages: list[dict[str, str]], model_cls: type[BaseModel], params: dict[str, Any],
                  usage: Usage) -> BaseModel:
        """The validated answer; raises CallFailed (the reason is the judge error)."""
        cfg = self.config
        retryable = self.retryable()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + cfg.timeout_s  # one deadline for the whole call: re-asks, retries, backoff
        last: BaseException | None = None  # the error of the attempt before: the deadline's message names it
        while True:
            try:
                return await asyncio.wait_for(self._once(messages, model_cls, params, usage, deadline),
                                              timeout=deadline - loop.time())
            except TimeoutError:  # asyncio.wait_for at the deadline
                raise CallFailed(self._deadline(usage, last)) from None
            except Exception as exc:  # instructor wraps every failure; its cause tells what it was
                cause = last = too_large(exc) or self._cause(exc)
                if is_transient(cause, retryable) and usage.transport_retries < cfg.transport_retries:
                    usage.transport_retries += 1
                    pause = self._backoff(usage.transport_retries, cause)
                    if loop.time() + pause >= deadline:
                        raise CallFailed(self._deadline(usage, cause)) from None
                    await asyncio.sleep(pause)
                    continue
                raise CallFailed(self._describe(cause, usage, retryable)) from None

    def _cause(self, exc: BaseException) -> BaseException:
        if self.transport == "instructor":
            from judge.judges.instructed import retry_exception

            if isinstance(exc, retry_exception()):
                return exc.__cause__ or exc
        return exc

    async def aclose(self) -> None:
        """Close the HTTP connections this event loop opened."""
        if self._endpoint is not None:
            await self._endpoint.aclose()
        if self._bounded is not None:
            await self._bounded.aclose()

    async def _once(self, messages: list[dict[str, str]], model_cls: type[BaseModel], params: dict[str, Any],
                    usage: Usage, deadline: float) -> BaseModel:
        extra = {k: v for k, v in params.items() if v is not None}
        if self.transport == "instructor":
            if self._instructor is None:
                from judge.judges.instructed import InstructedClient

                self._instructor = InstructedClient(self.config.mode)
            usage.form = self.config.mode
            remaining = deadline - asyncio.get_running_loop().time()
            return await self._instructor.ask(self.config.model, messages, model_cls, usage,
                                              max_retries=self.config.max_retries, timeout=remaining,
                                              max_tokens=self.answer_tokens(model_cls),
                                              **self._litellm_auth(), **extra)
        send = self._send_http if self.transport == "openai" else self._send_litellm
        return await self._direct(messages, model_cls, extra, usage, deadline, send)

    async def _direct(self, messages: list[dict[str, str]], model_cls: type[BaseModel], extra: dict[str, Any],
                      usage: Usage, deadline: float, send: Send) -> BaseModel:
        """Ask in the first form not known to be refused; move down the ladder when the endpoint
        refuses or ignores one (module docs)."""
        at = self._form_at
        while True:
            try:
                return await self._in_form(self.forms[at], messages, model_cls, extra, usage, deadline, send,
                                           last=at + 1 == len(self.forms))
            except FormRefused as exc:
                usage.refused.append(f"{self.forms[at]}: {exc}")
                if at + 1 == len(self.forms):
                    raise CallFailed(f"the endpoint took none of the forms {', '.join(self.forms)} "
                                     f"({'; '.join(usage.refused)})") from None
                at += 1
                self._form_at = max(self._form_at, at)

    async def _in_form(self, form: str, messages: list[dict[str, str]], model_cls: type[BaseModel],
                       extra: dict[str, Any], usage: Usage, deadline: float, send: Send, *, last: bool) -> BaseModel:
        """Send in `form`, validate once by `model_cls`, re-ask with the validation error (judge.judges.answers)."""
        usage.form = form
        sent = form_messages(form, messages, model_cls)
        part = schema_part(form, model_cls)
        bound = self.answer_tokens(model_cls)
        error: Exception = ValueError("no attempt was made")
        for attempt in range(self.config.max_retries + 1):
            reply = await self._send(send, sent, part, extra, bound, usage, deadline)
            if form in TOOL_FORMS and not reply.tool_calls and not reply.refusal and not last and attempt == 0:
                raise FormRefused("the forced tool was not called (the answer came as text)")
            try:
                return model_cls.model_validate_json(answer_text(form, reply))
            except (ValidationError, ValueError) as exc:
                error = exc
                if reply.finish_reason == "length":
                    error = ValueError(f"the answer stopped at max_tokens={bound} before it was complete "
                                       f"(answer in fewer words); {exc}")
            usage.answer_errors.append(first_line(str(error), 300))
            sent += reask(form, reply, error)
        raise InvalidAnswer(error)

    async def _send(self, send: Send, messages: list[dict[str, Any]], part: dict[str, Any], extra: dict[str, Any],
                    bound: int, usage: Usage, deadline: float) -> Completion:
        """One request (two when the endpoint asks for `max_completion_tokens` instead of `max_tokens`)."""
        loop = asyncio.get_running_loop()
        while True:
            usage.attempts += 1
            try:
                reply = await send(messages, part, {**extra, self._token_param: bound}, deadline - loop.time())
            except Exception as exc:
                if not refused(exc):
                    raise
                if self._token_param == "max_tokens" and "max_completion_tokens" in str(exc):
                    self._token_param = "max_completion_tokens"
                    continue
                raise FormRefused(f"{type(exc).__name__}: {first_line(str(exc), 200)}") from None
            usage.input_tokens += reply.input_tokens
            usage.output_tokens += reply.output_tokens
            return reply

    async def _send_http(self, messages: list[dict[str, Any]], part: dict[str, Any], extra: dict[str, Any],
                         remaining: float) -> Completion:
        if self._endpoint.needs_key:
            raise CallFailed("no API key: set the judge's api_key_env (or OPENAI_API_KEY)")
        body = {"model": (self.config.model or "").removeprefix("openai/"), "messages": messages, **part, **extra}
        return Completion.from_json(await self._endpoint.complete(body, remaining))

    async def _send_litellm(self, messages: list[dict[str, Any]], part: dict[str, Any], extra: dict[str, Any],
                            remaining: float) -> Completion:
        response = await litellm_lib().acompletion(model=self.config.model, messages=messages, timeout=remaining,
                                               max_retries=0, **part, **self._litellm_auth(), **extra)
        return Completion.from_response(response)

    def _litellm_auth(self) -> dict[str, Any]:
        auth: dict[str, Any] = {k: v for k, v in (("api_base", self.config.api_base), ("api_key", self.api_key)) if v}
        if self._bounded is not None:
            auth["client"] = self._bounded.get()
        return auth

    # ------------------------------------------------------------ what went wrong

    def _deadline(self, usage: Usage, cause: BaseException | None = None) -> str:
        last = f"; last error {type(cause).__name__}: {first_line(str(cause), 150)}" if cause is not None else ""
        form = f", form {usage.form}" if usage.form else ""
        return (f"no answer within timeout_s={self.config.timeout_s:g} s (the deadline of the whole call, "
                f"{usage.attempts} attempt(s), {usage.transport_retries} transport retries{form}){last}; "
                "a model on a local CPU may need a larger timeout_s or a smaller max_tokens (docs/judge.md, Local "
                "models)")

    def _backoff(self, retry: int, exc: BaseException) -> float:
        hinted = retry_after(exc)
        return hinted if hinted is not None else min(self.config.backoff_s * 2 ** (retry - 1), 30.0)

    @staticmethod
    def _describe(cause: BaseException, usage: Usage, retryable: tuple[type[BaseException], ...]) -> str:
        """The judge error's one line: what failed, how often, in which form."""
        if isinstance(cause, CallFailed):
            return str(cause)
        if isinstance(cause, InvalidAnswer):
            cause = cause.error
        if isinstance(cause, retryable):
            return (f"{type(cause).__name__} after {usage.transport_retries + 1} tries: "
                    f"{first_line(str(cause), 200)}")
        if isinstance(cause, (ValidationError, ValueError)):
            form = f" (form {usage.form})" if usage.form else ""
            return f"invalid answer after {usage.attempts} attempts{form}: {first_line(str(cause), 300)}"
        return f"{type(cause).__name__}: {first_line(str(cause), 300)}"
