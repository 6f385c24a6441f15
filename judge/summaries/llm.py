"""The judge layer of the summary audit: the `summary-audit` prompt through a configured llm judge.

It is a `summary-audit` PromptedCall (judge.judges.prompted): the llm judge's configuration checks,
client (judge.judges.client: the direct client or instructor over litellm, by model and `mode`;
transport retries with backoff within the `timeout_s` deadline; the price table) and verdict cache
(one entry per full request, so an unchanged rerun makes no call). The answer model
(judge.judges.schema.summary_audit_model) only
accepts the asked keys and the six statuses; an invalid answer is re-asked `max_retries` times, then
the layer reports an error: the audit goes on with the other layers and says so in its warnings.
The summary text is blinded (the candidate's names masked) and fenced as data by
judge.judges.render.summary_audit_context; the ledger lines are the reviewed entries.

Only `llm` judges have a judge layer: the `local` (embedding) judge *is* the semantic layer, and a
replay judge records checkpoint verdicts, not summary audits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from judge.config import JudgeConfig
from judge.judges.cache import VerdictCache
from judge.judges.prompted import CallKind, PromptedCall
from judge.judges.render import RENDER_VERSION
from judge.judges.schema import answer_findings
from judge.model import SummaryEvent
from judge.prompts import Prompt
from judge.summaries.audit import LayerFinding
from judge.summaries.semantic import AuditEntry

DEFAULT_PROMPT = "summary-audit@1"


@dataclass
class LayerResult:
    findings: dict[str, LayerFinding] = field(default_factory=dict)
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    raw: list[dict[str, Any]] = field(default_factory=list)  # the validated answer, as cached


SUMMARY_CALL = CallKind(schema="summary-audit", namespace="summary-audit",
                        needs="the summary audit's judge layer needs an llm judge (the offline `local` judge is "
                              "the semantic layer)",
                        prompt_option="summary_prompt", default_prompt=DEFAULT_PROMPT, named=True,
                        render_version=RENDER_VERSION)


class SummaryJudge:
    """Runs `summary-audit@N` (default @1; `options.summary_prompt` in the judge's table picks
    another) through the llm judge `config` names: a summary-audit PromptedCall."""

    def __init__(self, config: JudgeConfig, *, cache: VerdictCache | None = None,
                 prompt: Prompt | None = None) -> None:
        self.call = PromptedCall(config, SUMMARY_CALL, cache=cache, prompt=prompt)
        self.config = config
        self.prompt = self.call.prompt

    def fingerprint(self) -> dict[str, Any]:
        """The fingerprint of the judge layer as JSON data (judge.model.JudgeFingerprint)."""
        return self.call.fingerprint.dump()

    def messages(self, turn: int, entries: Sequence[AuditEntry], text: str, *,
                 event: SummaryEvent | None = None, names: Iterable[str | None] = ()) -> list[dict[str, str]]:
        from judge.judges.render import summary_audit_context

        summary = event or SummaryEvent(id="summary", turn=turn, kind="summary", reason="compaction", text=text)
        keys = [e.key for e in entries]
        return self.prompt.render(summary_audit_context(turn, keys, list(entries), summary, names))

    def audit(self, ledger: Any, turn: int, entries: Sequence[AuditEntry], text: str, *,
              event: SummaryEvent | None = None, names: Iterable[str | None] = ()) -> LayerResult:
        from judge.judges.schema import summary_audit_model

        if not entries:
            return LayerResult()
        keys = [e.key for e in entries]
        messages = self.messages(turn, entries, text, event=event, names=names)
        model_cls = summary_audit_model(keys)
        params = self.call.params()
        key = self.call.key(messages, model_cls, params)
        cached = self.call.cached(key)
        if cached is not None and isinstance(cached.get("findings"), list):
            return LayerResult(_layer_findings(cached["findings"]), usage={"calls": 0, "cache_hits": 1})
        outcome = self.call.ask_sync(messages, model_cls, params)
        if outcome.error is not None or outcome.answer is None:
            return LayerResult(error=outcome.error, usage=outcome.usage or {})
        raw = [f.model_dump() for f in answer_findings(outcome.answer)]
        self.call.store(key, {"findings": raw})
        return LayerResult(_layer_findings(raw), usage=outcome.usage or {}, raw=raw)


def _layer_findings(raw: list[dict[str, Any]]) -> dict[str, LayerFinding]:
    out = {}
    for f in raw:
        out[f["key"]] = LayerFinding(status=f["status"], evidence=f.get("evidence") or None,
                                     score=f.get("confidence"), detail=f.get("rationale"))
    return out


def make_summary_judge(name: str | None, *, config_file: Any = None) -> SummaryJudge:
    from judge.config import load_judge_config

    return SummaryJudge(load_judge_config(name, config_file=config_file))
