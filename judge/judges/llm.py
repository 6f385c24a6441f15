"""LLM judge: any litellm model, validated answers through instructor, cached, retried, bounded.

One checkpoint = one or more windows (a slice too long for `window_tokens` is split) x `samples`
calls, judged concurrently under one semaphore per judge instance (`max_concurrency`). Each call:
- is looked up in the verdict cache first (key = sha256 of the full request; see cache.py);
- asks through instructor with a response model built for this request (schema.py): an invalid answer
  is re-asked up to `max_retries` times, then the checkpoint is a judge error;
- retries 429, 5xx, timeouts and connection errors up to `transport_retries` times with exponential
  backoff (`backoff_s`, doubling, honouring Retry-After); the OpenAI client's own hidden retries are
  switched off so every request is counted.
Windows merge per key (violated wins), samples by majority (merge.py). The result carries usage summed
over every request, cost (litellm's price table on the summed usage; None when the model has no
price), attempts, cache hits and per-call records in `extra["calls"]`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import time
import weakref
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError

from judge.config import JudgeConfig
from judge.errors import ConfigError
from judge.judges.base import JudgeRequest, JudgeResult
from judge.judges.cache import VerdictCache, checkpoint_key, request_key
from judge.judges.merge import majority, merge_windows
from judge.judges.render import RENDER_VERSION, Window, build_windows
from judge.judges.schema import json_schema, to_judge_verdict, verdict_model
from judge.model import JudgeFinding, JudgeVerdict
from judge.prompts import Prompt, load_prompt

COUNT_MODEL = "gpt-4o"  # tokenizer used to size windows, whatever the judging model
_OFFLINE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MODE": "PRODUCTION"}
_LIBS: tuple[Any, Any] | None = None
_CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("judge_llm_call")


def libs() -> tuple[Any, Any]:
    """litellm and instructor, imported on first use (about 3 s) and kept quiet: no cost-map fetch,
    no .env loading, no debug prints, no log lines unless the application configures logging."""
    global _LIBS
    if _LIBS is None:
        for key, value in _OFFLINE_ENV.items():
            os.environ.setdefault(key, value)
        import instructor
        import litellm

        litellm.suppress_debug_info = True
        if not os.environ.get("LITELLM_LOG"):
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
                logging.getLogger(name).setLevel(logging.ERROR)
        logging.getLogger("instructor").addHandler(logging.NullHandler())
        _LIBS = (litellm, instructor)
    return _LIBS


def count_messages(messages: list[dict[str, str]]) -> int:
    return libs()[0].token_counter(model=COUNT_MODEL, messages=messages)


def count_text(text: str) -> int:
    return libs()[0].token_counter(model=COUNT_MODEL, text=text)


def _transport_errors() -> tuple[type[BaseException], ...]:
    litellm = libs()[0]
    names = ("RateLimitError", "InternalServerError", "ServiceUnavailableError", "BadGatewayError",
             "Timeout", "APIConnectionError")
    return tuple(getattr(litellm, n) for n in names if isinstance(getattr(litellm, n, None), type))


def _retry_exception() -> type[BaseException]:
    from instructor.core import InstructorRetryException

    return InstructorRetryException


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Price of the summed usage from litellm's table; None when the model has no known price."""
    try:
        prompt_cost, completion_cost = libs()[0].cost_per_token(
            model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens)
    except Exception:  # litellm raises a plain Exception for an unmapped model
        return None
    return round(prompt_cost + completion_cost, 10)


@lru_cache(maxsize=1024)
def _wrapped(model_cls: type[BaseModel]) -> type[BaseModel]:
    """The model as instructor's ResponseSchema subclass, made once: instructor would otherwise wrap
    it and regenerate its tool schema on every call."""
    return libs()[1].response_schema(model_cls)


@dataclass
class CallRecord:
    """One judge call (one window, one sample): what it cost and how it went."""

    part: int
    sample: int
    request_hash: str
    cached: bool = False
    attempts: int = 0
    transport_retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None
    findings: list[JudgeFinding] | None = field(default=None, repr=False)


def _is_transient(exc: BaseException, retryable: tuple[type[BaseException], ...]) -> bool:
    # litellm reports a missing API key as an InternalServerError: retrying cannot help
    return isinstance(exc, retryable) and "missing credentials" not in str(exc).lower()


def _first_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    try:
        return min(float(value), 60.0) if value is not None else None
    except (TypeError, ValueError):
        return None


class LLMJudge:
    """The `llm` backend (see module docs). `cache=None` uses the default cache folder."""

    backend = "llm"

    def __init__(self, config: JudgeConfig, *, cache: VerdictCache | None = None,
                 prompt: Prompt | None = None) -> None:
        if config.backend != "llm" or not config.model:
            raise ConfigError(f"judge {config.name!r} is not an llm judge with a model")
        self.config = config
        self.prompt = prompt or load_prompt(config.prompt)
        if self.prompt.meta.output_schema != "judge-verdict":
            raise ConfigError(f"prompt {self.prompt.ref} answers {self.prompt.meta.output_schema!r}, "
                              "not 'judge-verdict'", field=f"tool.judge.judges.{config.name}.prompt")
        self.cache = (cache or VerdictCache()) if config.cache else None
        self._api_key = self._resolve_key()
        self._semaphores: weakref.WeakKeyDictionary[Any, asyncio.Semaphore] = weakref.WeakKeyDictionary()
        self._instructor: Any = None

    def _resolve_key(self) -> str | None:
        from judge.config import resolve_api_key

        return resolve_api_key(self.config)

    def fingerprint(self) -> dict[str, Any]:
        cfg = self.config
        return {"backend": "llm", "model": cfg.model, "prompt": self.prompt.fingerprint(),
                "sampling": {"temperature": cfg.temperature, "samples": cfg.samples, "seed": cfg.seed,
                             "mode": cfg.mode, "window_tokens": cfg.window_tokens},
                "render_version": RENDER_VERSION}

    def windows(self, request: JudgeRequest) -> list[Window]:
        return build_windows(self.prompt, request, budget=self.config.window_tokens,
                             count=count_messages, count_text=count_text)

    async def judge_checkpoint(self, request: JudgeRequest) -> JudgeResult:
        started = time.perf_counter()
        if not request.keys:
            return JudgeResult(verdict=JudgeVerdict(findings=[]))
        key = checkpoint_key(self.fingerprint(), request, api_base=self.config.api_base)
        result = self._checkpoint_from_cache(key)
        if result is None:
            windows = self.windows(request)
            jobs = [(w, s) for s in range(self.config.samples) for w in windows]
            records = await asyncio.gather(*(self._call(request, w, s) for w, s in jobs))
            result = self._result(request, windows, list(records))
            if result.verdict is not None and self.cache is not None:
                self.cache.put(key, {"verdict": result.verdict.model_dump(), "extra": {
                    k: v for k, v in result.extra.items() if k != "calls"} | {"call_hashes": [
                        c["request_hash"] for c in result.extra["calls"]]}})
        result.latency_s = round(time.perf_counter() - started, 6)
        return result

    def _checkpoint_from_cache(self, key: str) -> JudgeResult | None:
        entry = self.cache.get(key) if self.cache is not None else None
        if entry is None:
            return None
        try:
            verdict = JudgeVerdict.model_validate(entry["verdict"])
            extra = dict(entry["extra"])
        except (KeyError, TypeError, ValueError):
            return None
        hashes = extra.pop("call_hashes", [])
        extra["calls"] = [{"request_hash": h, "cached": True} for h in hashes]
        extra["checkpoint_cache"] = key
        return JudgeResult(verdict=verdict, cache_hits=len(hashes), cost_usd=0.0, extra=extra)

    # ------------------------------------------------------------ one call

    def _params(self, sample: int) -> dict[str, Any]:
        seed = None if self.config.seed is None else self.config.seed + sample
        return {"temperature": self.config.temperature, "seed": seed}

    async def _call(self, request: JudgeRequest, window: Window, sample: int) -> CallRecord:
        model_cls = verdict_model(request.keys, [e.id for e in window.events])
        params = self._params(sample)
        key = request_key({"prompt": self.prompt.fingerprint(), "model": self.config.model,
                           "api_base": self.config.api_base, "mode": self.config.mode, "params": params,
                           "sample": sample, "messages": window.messages,
                           "schema": json_schema(model_cls), "render_version": RENDER_VERSION})
        record = CallRecord(part=window.part, sample=sample, request_hash=key)
        if self._from_cache(record):
            return record
        async with self._semaphore():
            started = time.perf_counter()
            await self._complete(record, window.messages, model_cls, params)
            record.latency_s = round(time.perf_counter() - started, 6)
        if record.findings is not None and self.cache is not None:
            self.cache.put(key, {"findings": [f.model_dump() for f in record.findings],
                                 "fingerprint": self.fingerprint(), "messages": window.messages,
                                 "attempts": record.attempts, "input_tokens": record.input_tokens,
                                 "output_tokens": record.output_tokens})
        return record

    def _from_cache(self, record: CallRecord) -> bool:
        entry = self.cache.get(record.request_hash) if self.cache is not None else None
        if entry is None:
            return False
        try:
            record.findings = [JudgeFinding.model_validate(f) for f in entry["findings"]]
        except (KeyError, TypeError, ValidationError):
            return False
        record.cached = True
        return True

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = self._semaphores[loop] = asyncio.Semaphore(self.config.max_concurrency)
        return sem

    def _client(self) -> Any:
        """One instructor client per judge; the request being made is tracked in a context variable."""
        if self._instructor is None:
            litellm, instructor = libs()

            async def completion(**kwargs: Any) -> Any:
                record = _CURRENT.get()
                kwargs["max_retries"] = 0  # the OpenAI client's hidden retries would go uncounted
                record.attempts += 1
                response = await litellm.acompletion(**kwargs)
                usage = getattr(response, "usage", None)
                record.input_tokens += getattr(usage, "prompt_tokens", 0) or 0
                record.output_tokens += getattr(usage, "completion_tokens", 0) or 0
                return response

            self._instructor = instructor.from_litellm(completion, mode=instructor.Mode[self.config.mode.upper()])
        return self._instructor

    async def _complete(self, record: CallRecord, messages: list[dict[str, str]],
                        model_cls: type[BaseModel], params: dict[str, Any]) -> None:
        cfg = self.config
        client = self._client()
        extra = {k: v for k, v in params.items() if v is not None}
        for name, value in (("api_base", cfg.api_base), ("api_key", self._api_key)):
            if value:
                extra[name] = value
        retryable = _transport_errors()
        token = _CURRENT.set(record)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + cfg.timeout_s  # one deadline for the whole call: re-asks, retries, backoff
        try:
            while True:
                remaining = deadline - loop.time()
                try:
                    answer = await asyncio.wait_for(client.chat.completions.create(
                        model=cfg.model, messages=[dict(m) for m in messages], response_model=_wrapped(model_cls),
                        max_retries=cfg.max_retries, timeout=remaining, **extra), timeout=remaining)
                    record.findings = to_judge_verdict(answer).findings
                    return
                except TimeoutError:  # asyncio.wait_for at the deadline
                    record.error = self._deadline(record)
                    return
                except Exception as exc:  # instructor wraps every failure; its cause tells what it was
                    cause = (exc.__cause__ if isinstance(exc, _retry_exception()) else exc) or exc
                    if _is_transient(cause, retryable) and record.transport_retries < cfg.transport_retries:
                        record.transport_retries += 1
                        pause = self._backoff(record.transport_retries, cause)
                        if loop.time() + pause >= deadline:
                            record.error = self._deadline(record, cause)
                            return
                        await asyncio.sleep(pause)
                        continue
                    record.error = self._describe(cause, record, retryable)
                    return
        finally:
            _CURRENT.reset(token)

    def _deadline(self, record: CallRecord, cause: BaseException | None = None) -> str:
        last = f"; last error {type(cause).__name__}: {_first_line(str(cause), 150)}" if cause is not None else ""
        return (f"no answer within timeout_s={self.config.timeout_s:g} s (the deadline of the whole call, "
                f"{record.attempts} attempt(s), {record.transport_retries} transport retries){last}")

    def _backoff(self, retry: int, exc: BaseException) -> float:
        hinted = _retry_after(exc)
        return hinted if hinted is not None else min(self.config.backoff_s * 2 ** (retry - 1), 30.0)

    @staticmethod
    def _describe(cause: BaseException, record: CallRecord,
                  retryable: tuple[type[BaseException], ...]) -> str:
        if isinstance(cause, retryable):
            return (f"{type(cause).__name__} after {record.transport_retries + 1} tries: "
                    f"{_first_line(str(cause), 200)}")
        if isinstance(cause, (ValidationError, ValueError)):
            return f"invalid answer after {record.attempts} attempts: {_first_line(str(cause), 300)}"
        return f"{type(cause).__name__}: {_first_line(str(cause), 300)}"

    # ------------------------------------------------------------ assembling the result

    def _result(self, request: JudgeRequest, windows: list[Window], records: list[CallRecord]) -> JudgeResult:
        live = [r for r in records if not r.cached]
        inputs = sum(r.input_tokens for r in live)
        outputs = sum(r.output_tokens for r in live)
        result = JudgeResult(
            verdict=None, calls=len(live), cache_hits=len(records) - len(live),
            attempts=sum(r.attempts for r in live), input_tokens=inputs, output_tokens=outputs,
            cost_usd=cost_usd(self.config.model, inputs, outputs) if live else 0.0)
        result.extra = {
            "windows": len(windows), "samples": self.config.samples,
            "truncated_events": sum(w.truncated for w in windows),
            "request_tokens": [w.tokens for w in windows],
            "calls": [{f.name: getattr(r, f.name) for f in fields(r) if f.name != "findings"} for r in records],
        }
        errors = [r.error for r in records if r.error]
        if errors:
            result.error = "; ".join(dict.fromkeys(errors))
            return result
        per_sample = [merge_windows([r.findings or [] for r in records if r.sample == s], request.keys)
                      for s in range(self.config.samples)]
        if self.config.samples == 1:
            result.verdict = JudgeVerdict(findings=per_sample[0])
        else:
            findings, agreement = majority(per_sample, request.keys)
            result.verdict = JudgeVerdict(findings=findings)
            result.extra["agreement"] = agreement
        return result
