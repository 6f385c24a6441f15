"""LLM judge: any litellm model, validated answers, cached, retried, bounded.

The judge is a `judge-verdict` PromptedCall (judge.judges.prompted: configuration checks, prompt,
cache, key, fingerprint) plus what is its own: windows, samples and merging. One checkpoint = one or more windows (a
slice too long for `window_tokens` is split) x `samples`
calls, judged concurrently under one semaphore per judge instance (`max_concurrency`); checkpoints
are admitted 2 x `max_concurrency` at a time, so that a caller gathering thousands of them sends its
first request at once instead of after rendering them all. Each call:
- is looked up in the verdict cache first (key = sha256 of the full request; see cache.py);
- asks through judge.judges.client (the direct client for OpenAI-compatible endpoints in modes
  tools and strict, else instructor over litellm) with a response model built for this request
  (schema.py): an invalid answer is
  re-asked up to `max_retries` times, then the checkpoint is a judge error; transport errors are
  retried with backoff, all within the call's deadline `timeout_s`.
A window is sized by the request as sent: its messages and the schema it carries in the configured
mode (judge.judges.tokens), counted line by line so that a run's repeated ledger and template text is
counted once. Windows merge per key (violated wins), samples by majority (merge.py). The result
carries usage summed over every request (as the provider counts it), the local estimate of each
request beside it, cost (litellm's prices, from judge's table of them: judge.judges.prices; looked up
once per judge, on the summed usage; None when the model has no price), attempts, cache hits and
per-call records in `extra["calls"]`.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from pydantic import ValidationError

from judge.config import JudgeConfig
from judge.judges import tokens
from judge.judges.base import JudgeRequest, JudgeResult
from judge.judges.cache import VerdictCache, checkpoint_key
from judge.judges.client import CallFailed, Usage, cost_usd, libs  # noqa: F401 (libs, cost_usd: this module's face)
from judge.judges.merge import majority, merge_windows
from judge.judges.prompted import CallKind, PromptedCall
from judge.judges.redis_cache import RedisVerdictCache
from judge.judges.render import RENDER_VERSION, Window, build_windows
from judge.judges.schema import to_judge_verdict, verdict_model
from judge.model import Event, JudgeFinding, JudgeVerdict
from judge.prompts import Prompt

COUNT_MODEL = tokens.COUNT_MODEL


def count_messages(messages: list[dict[str, str]]) -> int:
    return tokens.count_messages(messages)


def count_text(text: str) -> int:
    return tokens.count_text(text)


def litellm_drift(messages: list[dict[str, str]]) -> int:
    """At most how many tokens litellm's own counter can add to ours: it counts a message in chunks
    of 1,024 characters, and a boundary inside a word can cost two tokens (measured: 816 -> 820 over
    two boundaries of a drift.200 window), so two per boundary."""
    return 2 * sum(len(m.get("content") or "") // tokens.CHUNK for m in messages)


@dataclass
class CallRecord:
    """One judge call (one window, one sample): what it cost and how it went. `estimated_tokens` is
    the local count of the request as first sent; `input_tokens` what the provider reported, summed
    over every attempt (re-asks send more)."""

    part: int
    sample: int
    request_hash: str
    cached: bool = False
    attempts: int = 0
    transport_retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    estimated_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None
    form: str | None = None  # how the last request asked for the schema (judge.judges.answers)
    refused: list[str] = field(default_factory=list)  # forms the endpoint refused, each with why
    answer_errors: list[str] = field(default_factory=list)  # why each invalid answer failed validation
    findings: list[JudgeFinding] | None = field(default=None, repr=False)


ADMIT_PER_SLOT = 2  # checkpoints being prepared or judged at once, per concurrent call allowed

JUDGE_CALL = CallKind(schema="judge-verdict", namespace="llm", needs="the llm backend asks a model",
                      sampling=("temperature", "samples", "seed", "mode", "window_tokens"),
                      render_version=RENDER_VERSION)


class LLMJudge:
    """The `llm` backend (see module docs): a judge-verdict PromptedCall, its windows and merging.
    `cache=None` uses the default cache folder."""

    backend = "llm"

    def __init__(self, config: JudgeConfig, *, cache: VerdictCache | None = None,
                 prompt: Prompt | None = None) -> None:
        self.call = PromptedCall(config, JUDGE_CALL, cache=cache, prompt=prompt)
        self.config = config
        self.prompt = self.call.prompt
        self.client = self.call.client
        self._semaphores: weakref.WeakKeyDictionary[Any, asyncio.Semaphore] = weakref.WeakKeyDictionary()
        self._admissions: weakref.WeakKeyDictionary[Any, asyncio.Semaphore] = weakref.WeakKeyDictionary()

    @property
    def cache(self) -> VerdictCache | RedisVerdictCache | None:
        """The verdict cache (None: caching off)."""
        return self.call.cache

    @cache.setter
    def cache(self, cache: VerdictCache | RedisVerdictCache | None) -> None:
        self.call.cache = cache

    def fingerprint(self) -> dict[str, Any]:
        """The judge's fingerprint as JSON data (judge.model.JudgeFingerprint)."""
        return self.call.fingerprint.dump()

    def windows(self, request: JudgeRequest) -> list[Window]:
        """The request's windows, each within `window_tokens` as sent (and as litellm counts it)."""
        return build_windows(self.prompt, request, budget=self.config.window_tokens,
                             count=lambda messages, events: self.request_tokens(request, messages, events),
                             count_line=tokens.count_line, slack=litellm_drift)

    def request_tokens(self, request: JudgeRequest, messages: list[dict[str, str]], events: Sequence[Event]) -> int:
        """The local estimate of one request as sent: its messages and the schema it carries."""
        model_cls = verdict_model(request.keys, [e.id for e in events])
        return tokens.request_tokens(messages, self.client.schema_tokens(model_cls))

    async def aclose(self) -> None:
        """Close the HTTP connections this event loop opened (call before the loop ends)."""
        await self.client.aclose()

    async def judge_checkpoint(self, request: JudgeRequest) -> JudgeResult:
        started = time.perf_counter()
        if not request.keys:
            return JudgeResult(verdict=JudgeVerdict(findings=[]))
        # Admitted a few at a time: a caller that gathers many checkpoints at once would otherwise
        # render and hash all of them before the first request leaves (about 1 ms each on the loop).
        async with self._gate(self._admissions, ADMIT_PER_SLOT * self.config.max_concurrency):
            key = checkpoint_key(self.call.fingerprint_data, request, api_base=self.config.api_base)
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
        entry = self.call.cached(key)
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

    async def _call(self, request: JudgeRequest, window: Window, sample: int) -> CallRecord:
        model_cls = verdict_model(request.keys, [e.id for e in window.events])
        params = self.call.params(sample)
        key = self.call.key(window.messages, model_cls, params, sample=sample, render_version=RENDER_VERSION)
        record = CallRecord(part=window.part, sample=sample, request_hash=key)
        if self._from_cache(record):
            return record
        record.estimated_tokens = window.tokens
        async with self._semaphore():
            started = time.perf_counter()
            usage = Usage()
            try:
                answer = await self.call.ask(window.messages, model_cls, params, usage)
                record.findings = to_judge_verdict(answer).findings
            except CallFailed as exc:
                record.error = str(exc)
            record.latency_s = round(time.perf_counter() - started, 6)
        record.attempts, record.transport_retries = usage.attempts, usage.transport_retries
        record.input_tokens, record.output_tokens = usage.input_tokens, usage.output_tokens
        record.form, record.refused, record.answer_errors = usage.form, usage.refused, usage.answer_errors
        if record.findings is not None:
            self.call.store(key, {"findings": [f.model_dump() for f in record.findings], "attempts": record.attempts,
                                  "input_tokens": record.input_tokens, "output_tokens": record.output_tokens})
        return record

    def _from_cache(self, record: CallRecord) -> bool:
        entry = self.call.cached(record.request_hash)
        if entry is None:
            return False
        try:
            record.findings = [JudgeFinding.model_validate(f) for f in entry["findings"]]
        except (KeyError, TypeError, ValidationError):
            return False
        record.cached = True
        return True

    def _semaphore(self) -> asyncio.Semaphore:
        return self._gate(self._semaphores, self.config.max_concurrency)

    @staticmethod
    def _gate(gates: weakref.WeakKeyDictionary[Any, asyncio.Semaphore], size: int) -> asyncio.Semaphore:
        """This event loop's semaphore of `size` in `gates` (a semaphore belongs to one loop)."""
        loop = asyncio.get_running_loop()
        sem = gates.get(loop)
        if sem is None:
            sem = gates[loop] = asyncio.Semaphore(size)
        return sem

    # ------------------------------------------------------------ assembling the result

    def _result(self, request: JudgeRequest, windows: list[Window], records: list[CallRecord]) -> JudgeResult:
        live = [r for r in records if not r.cached]
        inputs = sum(r.input_tokens for r in live)
        outputs = sum(r.output_tokens for r in live)
        result = JudgeResult(
            verdict=None, calls=len(live), cache_hits=len(records) - len(live),
            attempts=sum(r.attempts for r in live), input_tokens=inputs, output_tokens=outputs,
            cost_usd=self.client.cost(inputs, outputs) if live else 0.0)
        result.extra = {
            "windows": len(windows), "samples": self.config.samples,
            "truncated_events": sum(w.truncated for w in windows),
            "request_tokens": [w.tokens for w in windows],
            "estimated_input_tokens": sum(r.estimated_tokens for r in live),
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
