"""An OpenAI-compatible chat endpoint as the agent: `judge run SCENARIO --agent http://HOST/v1 --model M`.

Each step is one chat-completions request (the OpenAI SDK) with the messages so far, the tools and the
run's seed; the answer's tool calls become the step's calls (answered from the fixtures by the
driver), else its content the step's text. The key is $OPENAI_API_KEY when set (a local server
needs none). A request that fails (connection, status, timeout) or a tool call whose arguments
are not a JSON object is the agent's failure: the run is inconclusive with the reason.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from judge.errors import require_extra
from judge.suite.drive.actions import AgentFailure, DriveAction, Reply

STATE_TOOL = "record_state"
"""A tool call of this name is the agent writing its own state (`key`, `value`), not a tool call."""


@dataclass
class EndpointAgent:
    """A chat-completions endpoint and the model it serves."""

    base_url: str
    model: str
    name: str
    kind: str = "endpoint"

    def __post_init__(self) -> None:
        require_extra("drive", f"the endpoint agent {self.name!r}")
        from openai import OpenAI

        self._client = OpenAI(base_url=self.base_url, api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
                              max_retries=0)

    def act(self, messages: list[dict[str, Any]], context: Any, timeout: float) -> Reply:
        import openai

        shown = f"endpoint {self.base_url} ({self.model})"
        request: dict[str, Any] = {"model": self.model, "messages": messages, "seed": context.seed}
        if context.tools:
            request["tools"] = [{"type": "function", "function": schema} for schema in context.tools]
        try:
            answer = self._client.chat.completions.create(**request, timeout=timeout)
        except openai.APITimeoutError:
            raise AgentFailure(f"{shown} hung: no answer within {timeout:g} s") from None
        except openai.APIStatusError as exc:
            raise AgentFailure(f"{shown} answered HTTP {exc.status_code}: {str(exc)[:200]}") from None
        except openai.APIError as exc:
            raise AgentFailure(f"{shown} failed: {type(exc).__name__}: {str(exc)[:200]}") from None
        if not answer.choices:
            raise AgentFailure(f"{shown} answered no choice")
        return reply_of(answer.choices[0].message, shown)


def reply_of(message: Any, shown: str) -> Reply:
    """A chat-completions assistant message as a Reply: its tool calls (`record_state` calls as the
    state they write), else its content."""
    state: dict[str, Any] = {}
    calls: list[DriveAction] = []
    for call in message.tool_calls or []:
        name = call.function.name
        try:
            args = json.loads(call.function.arguments or "{}")
        except json.JSONDecodeError:
            raise AgentFailure(f"{shown} called {name} with arguments that are not JSON: "
                               f"{(call.function.arguments or '')[:160]!r}") from None
        if not isinstance(args, dict):
            raise AgentFailure(f"{shown} called {name} with arguments that are not an object")
        if name == STATE_TOOL and "key" in args:
            state[str(args["key"])] = args.get("value")
        else:
            calls.append(DriveAction(tool=name, args=args))
    if calls:
        calls[0] = calls[0].model_copy(update={"state": state})
        return Reply(actions=calls)
    text = message.content if message.content is not None else ("(state recorded)" if state else None)
    if text is None:
        raise AgentFailure(f"{shown} answered neither a tool call nor content")
    return Reply(actions=[DriveAction(text=text, state=state)])
