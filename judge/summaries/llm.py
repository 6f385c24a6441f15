"""The judge layer of the summary audit: the `summary-audit` prompt through a configured llm judge.

It reuses the llm judge's client (judge.judges.client: instructor over litellm or the strict
structured-output path by `mode`, offline settings, transport retries with backoff within the
`timeout_s` deadline, price table) and its verdict cache (one entry per full request, so
an unchanged rerun makes no call). The answer model (judge.judges.schema.summary_audit_model) only
accepts the asked keys and the six statuses; an invalid answer is re-asked `max_retries` times, then
the layer reports an error: the audit goes on with the other layers and says so in its warnings.
The summary text is blinded (the candidate's names masked) and fenced as data by
judge.judges.render.summary_audit_context; the ledger lines are the reviewed entries.

Only `llm` judges have a judge layer: the `local` (embedding) judge *is* the semantic layer, and a
replay judge records checkpoint verdicts, not summary audits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from judge.config import JudgeConfig
from judge.errors import ConfigError, with_article
from judge.judges.base import LedgerRow
from judge.judges.cache import VerdictCache, call_key
from judge.model import SummaryEvent
from judge.prompts import Prompt, load_prompt
from judge.summaries.audit import LayerFinding
from judge.summaries.semantic import AuditEntry

DEFAULT_PROMPT = "summary-audit@1"


@dataclass
class LayerResult:
    findings: dict[str, LayerFinding] = field(default_factory=dict)
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    raw: list[dict[str, Any]] = field(default_factory=list)  # the validated answer, as cached


def ledger_rows(entries: Sequence[AuditEntry]) -> list[LedgerRow]:
    return [LedgerRow(key=e.key, class_=e.class_, value=e.value, status=e.status, sensitivity=e.sensitivity,
                      persistence=e.persistence, source_turn=e.source_turn, superseded=e.superseded,
                      description=e.description) for e in entries]


class SummaryJudge:
    """Runs `summary-audit@N` (default @1; `options.summary_prompt` in the judge's table picks
    another) through the llm judge `config` names."""

    def __init__(self, config: JudgeConfig, *, cache: VerdictCache | None = None,
                 prompt: Prompt | None = None) -> None:
        if config.backend != "llm" or not config.model:
            raise ConfigError(f"judge {config.name!r} is {with_article(repr(config.backend))} judge: the summary audit's "
                              "judge layer needs an llm judge (the offline `local` judge is the semantic layer)")
        self.config = config
        self.prompt = prompt or load_prompt(str(config.options.get("summary_prompt", DEFAULT_PROMPT)))
        if self.prompt.meta.output_schema != "summary-audit":
            raise ConfigError(f"prompt {self.prompt.ref} answers {self.prompt.meta.output_schema!r}, "
                              "not 'summary-audit'", field=f"tool.judge.judges.{config.name}.options.summary_prompt")
        self.cache = (cache or VerdictCache(namespace="summary-audit")) if config.cache else None
        self._api_key = self._resolve_key()

    def _resolve_key(self) -> str | None:
        from judge.config import resolve_api_key

        return resolve_api_key(self.config)

    def fingerprint(self) -> dict[str, Any]:
        from judge.judges.render import RENDER_VERSION

        cfg = self.config
        return {"name": cfg.name, "backend": "llm", "model": cfg.model, "prompt": self.prompt.fingerprint(),
                "sampling": {"temperature": cfg.temperature, "seed": cfg.seed, "mode": cfg.mode},
                "render_version": RENDER_VERSION}

    def messages(self, turn: int, entries: Sequence[AuditEntry], text: str, *,
                 event: SummaryEvent | None = None, names: Iterable[str | None] = ()) -> list[dict[str, str]]:
        from judge.judges.render import summary_audit_context

        summary = event or SummaryEvent(id="summary", turn=turn, kind="summary", reason="compaction", text=text)
        keys = [e.key for e in entries]
        return self.prompt.render(summary_audit_context(turn, keys, ledger_rows(entries), summary, names))

    def audit(self, ledger: Any, turn: int, entries: Sequence[AuditEntry], text: str, *,
              event: SummaryEvent | None = None, names: Iterable[str | None] = ()) -> LayerResult:
        from judge.judges.schema import summary_audit_model

        if not entries:
            return LayerResult()
        keys = [e.key for e in entries]
        messages = self.messages(turn, entries, text, event=event, names=names)
        model_cls = summary_audit_model(keys)
        params = {"temperature": self.config.temperature, "seed": self.config.seed}
        key = call_key(self.config, self.prompt, messages, model_cls, params)
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None and isinstance(cached.get("findings"), list):
            return LayerResult(_layer_findings(cached["findings"]), usage={"calls": 0, "cache_hits": 1})
        result = self._call(messages, model_cls, params)
        if result.error is None and self.cache is not None:
            self.cache.put(key, {"findings": result.raw, "fingerprint": self.fingerprint()})
        return result

    def _call(self, messages: list[dict[str, str]], model_cls: Any, params: dict[str, Any]) -> LayerResult:
        from judge.judges.client import call_once

        answer, error, usage = call_once(self.config, self._api_key, messages, model_cls, params)
        if error is not None:
            return LayerResult(error=error, usage=usage)
        raw = [f.model_dump() for f in answer.findings]
        return LayerResult(_layer_findings(raw), usage=usage, raw=raw)


def _layer_findings(raw: list[dict[str, Any]]) -> dict[str, LayerFinding]:
    out = {}
    for f in raw:
        out[f["key"]] = LayerFinding(status=f["status"], evidence=f.get("evidence") or None,
                                     score=f.get("confidence"), detail=f.get("rationale"))
    return out


def make_summary_judge(name: str | None, *, config_file: Any = None) -> SummaryJudge:
    from judge.config import load_judge_config

    return SummaryJudge(load_judge_config(name, config_file=config_file))
