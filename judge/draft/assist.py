"""The model-assisted layer: a `ledger-draft` prompt through an llm judge configuration.

The model is shown the offline draft's keys, the known tools and the user messages and tool
results only (never the agent's messages, calls or state-writes), blinded (the candidate's name,
version and model masked) and fenced as data, after the redaction every trace gets on reading. Its
answer is validated against a model built for the request (judge.draft.answer): evidence ids from
the shown events, tools from the known ones, quotes copied from the cited event; an invalid answer
is re-asked (`max_retries`), then the layer reports an error and the draft stays offline. The
client is the llm judge's (judge.judges.client: instructor over litellm or the strict structured-output
path by `mode`, offline settings, transport retries with backoff within `timeout_s`, the price table),
and calls are cached on the full request in the verdict
cache (namespace `ledger-draft`), so an unchanged rerun makes no call and drafts the same file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from judge.config import JudgeConfig, load_judge_config, resolve_api_key
from judge.draft.answer import answer_model
from judge.draft.items import Draft
from judge.draft.source import Conversation
from judge.errors import ConfigError, with_article
from judge.judges.cache import VerdictCache, call_key
from judge.prompts import Prompt, load_prompt

DEFAULT_PROMPT = "ledger-draft@1"
LINE_LIMIT = 600  # characters of one event line
MAX_EVENTS = 400


@dataclass
class Outcome:
    answer: Any = None
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {"error": self.error, "usage": self.usage}


def event_lines(conv: Conversation) -> tuple[list[str], dict[str, str]]:
    """One blinded, escaped line per user message and tool result, and the text each one shows."""
    from judge.judges.render import blind, compact, escape_data

    lines, texts = [], {}
    for u in conv.utterances[:MAX_EVENTS]:
        if u.kind == "user":
            shown = escape_data(blind(u.text, conv.names))
            line = f"{u.event} t{u.turn} user: {shown}"
        else:
            shown = escape_data(blind(f"{u.status}: {compact(u.result)}", conv.names))
            line = f"{u.event} t{u.turn} result of {u.tool}: {shown}"
        if len(line) > LINE_LIMIT:
            line = line[:LINE_LIMIT] + " …[truncated]"
        lines.append(line)
        texts[u.event] = line.split(": ", 1)[1] if ": " in line else line
    return lines, texts


def ledger_lines(draft: Draft) -> list[str]:
    from judge.judges.render import escape_data

    return [escape_data(f"{e.key} ({e.class_}, {e.sensitivity}): {e.value}") for e in draft.entries]


class DraftAssistant:
    """Runs `ledger-draft@N` (default @1; `options.draft_prompt` in the judge's table picks another)."""

    def __init__(self, config: JudgeConfig, *, cache: VerdictCache | None = None, prompt: Prompt | None = None) -> None:
        if config.backend != "llm" or not config.model:
            raise ConfigError(f"judge {config.name!r} is {with_article(repr(config.backend))} judge: `judge draft --judge` needs an "
                              "llm judge (the offline drafter runs without one)")
        self.config = config
        self.prompt = prompt or load_prompt(str(config.options.get("draft_prompt", DEFAULT_PROMPT)))
        if self.prompt.meta.output_schema != "ledger-draft":
            raise ConfigError(f"prompt {self.prompt.ref} answers {self.prompt.meta.output_schema!r}, not "
                              "'ledger-draft'", field=f"tool.judge.judges.{config.name}.options.draft_prompt")
        self.cache = (cache or VerdictCache(namespace="ledger-draft")) if config.cache else None
        self._api_key = resolve_api_key(config)

    def fingerprint(self) -> dict[str, Any]:
        cfg = self.config
        return {"name": cfg.name, "backend": "llm", "model": cfg.model, "prompt": self.prompt.fingerprint(),
                "sampling": {"temperature": cfg.temperature, "seed": cfg.seed, "mode": cfg.mode}}

    def describe(self) -> str:
        cfg = self.config
        return (f"judge {cfg.name} ({cfg.model}), prompt {self.prompt.ref} sha256 {self.prompt.sha256[:12]}, "
                f"temperature {cfg.temperature}, seed {cfg.seed}, mode {cfg.mode}")

    def messages(self, conv: Conversation, draft: Draft) -> tuple[list[dict[str, str]], dict[str, str]]:
        events, texts = event_lines(conv)
        tools = [f"{name}: {', '.join(info.args) or '-'}" for name, info in sorted(conv.tools.items())]
        return self.prompt.render({"ledger": ledger_lines(draft), "tools": tools, "events": events}), texts

    def propose(self, conv: Conversation, draft: Draft) -> Outcome:
        messages, texts = self.messages(conv, draft)
        model_cls = answer_model(texts, list(conv.tools))
        params = {"temperature": self.config.temperature, "seed": self.config.seed}
        key = call_key(self.config, self.prompt, messages, model_cls, params)
        cached = self.cache.get(key) if self.cache is not None else None
        if cached is not None:
            try:
                return Outcome(model_cls.model_validate(cached["answer"]), usage={"calls": 0, "cache_hits": 1})
            except (KeyError, TypeError, ValueError):
                pass  # an unreadable entry is a miss
        outcome = self._call(messages, model_cls, params)
        if outcome.error is None and self.cache is not None:
            self.cache.put(key, {"answer": outcome.answer.model_dump(), "fingerprint": self.fingerprint()})
        return outcome

    def _call(self, messages: list[dict[str, str]], model_cls: Any, params: dict[str, Any]) -> Outcome:
        from judge.judges.client import call_once

        answer, error, usage = call_once(self.config, self._api_key, messages, model_cls, params)
        if error is not None:
            return Outcome(error=error, usage=usage)
        return Outcome(model_cls.model_validate(answer.model_dump()), usage=usage)


def make_assistant(name: str, *, config_file: Any = None, cache: VerdictCache | None = None) -> DraftAssistant:
    return DraftAssistant(load_judge_config(name, config_file=config_file), cache=cache)
