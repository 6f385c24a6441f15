"""The model-assisted layer: a `ledger-draft` prompt through an llm judge configuration.

The model is shown the offline draft's keys, the known tools and the user messages and tool
results only (never the agent's messages, calls or state-writes), blinded (the candidate's name,
version and model masked) and fenced as data, after the redaction every trace gets on reading. Its
answer is validated against a model built for the request (judge.draft.answer): evidence ids from
the shown events, tools from the known ones, quotes copied from the cited event; an invalid answer
is re-asked (`max_retries`), then the layer reports an error and the draft stays offline. It is a
`ledger-draft` PromptedCall (judge.judges.prompted): the llm judge's configuration checks and client
(judge.judges.client: the direct client or instructor over litellm, by model and `mode`; transport
retries with backoff within `timeout_s`; the price table), and calls are cached on the full request
in the verdict cache (namespace `ledger-draft`), so an unchanged rerun makes no call and drafts the
same file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from judge.config import JudgeConfig, load_judge_config
from judge.draft.answer import answer_model
from judge.draft.items import Draft
from judge.draft.source import Conversation
from judge.judges.cache import VerdictCache
from judge.judges.prompted import CallKind, PromptedCall
from judge.prompts import Prompt

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


DRAFT_CALL = CallKind(schema="ledger-draft", namespace="ledger-draft",
                      needs="`judge draft --judge` needs an llm judge (the offline drafter runs without one)",
                      prompt_option="draft_prompt", default_prompt=DEFAULT_PROMPT, named=True)


class DraftAssistant:
    """Runs `ledger-draft@N` (default @1; `options.draft_prompt` in the judge's table picks another):
    a ledger-draft PromptedCall."""

    def __init__(self, config: JudgeConfig, *, cache: VerdictCache | None = None, prompt: Prompt | None = None) -> None:
        self.call = PromptedCall(config, DRAFT_CALL, cache=cache, prompt=prompt)
        self.config = config
        self.prompt = self.call.prompt

    def fingerprint(self) -> dict[str, Any]:
        """The drafter's fingerprint as JSON data (judge.model.JudgeFingerprint)."""
        return self.call.fingerprint.dump()

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
        params = self.call.params()
        key = self.call.key(messages, model_cls, params)
        cached = self.call.cached(key)
        if cached is not None:
            try:
                return Outcome(model_cls.model_validate(cached["answer"]), usage={"calls": 0, "cache_hits": 1})
            except (KeyError, TypeError, ValueError):
                pass  # an unreadable entry is a miss
        asked = self.call.ask_sync(messages, model_cls, params)
        if asked.error is not None or asked.answer is None:
            return Outcome(error=asked.error, usage=asked.usage or {})
        outcome = Outcome(asked.answer, usage=asked.usage or {})  # validated once, by model_cls
        self.call.store(key, {"answer": outcome.answer.model_dump()})
        return outcome


def make_assistant(name: str, *, config_file: Any = None, cache: VerdictCache | None = None) -> DraftAssistant:
    return DraftAssistant(load_judge_config(name, config_file=config_file), cache=cache)
