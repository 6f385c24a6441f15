"""What an agent answers `judge run` with: the adapter protocol of `judge continue`, widened.

An adapter reads the JSON list of OpenAI chat messages and answers its next action as JSON:
- `{"tool": NAME, "args": {...}}`: a tool call, answered from the fixtures;
- `{"text": "..."}`: what it says to the user; this ends its turn;
- a list of tool calls (`[{"tool": ...}, ...]`): several calls at once, answered in order;
- any of them may carry `"state": {KEY: VALUE}`: what the agent writes to its own state (a
  `state-write` event per key, before the call or the text);
- a tool call may carry `"result"` (and `"status"`, default ok): the adapter ran the tool itself (a
  live tool layer), so that result is recorded instead of a fixture's (`judge run --record` keeps it).

Anything else (not JSON, not one of these shapes, text and a call at once) is garbage: the run is
inconclusive with the reason, never a pass.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from judge.model import Strict

MAX_ANSWER_BYTES = 4 << 20
"""The most an agent may print for one action (more is garbage: the run stops, inconclusive)."""


class AgentFailure(Exception):
    """The agent crashed, hung, or answered garbage: the run stops and is inconclusive with `reason`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DriveAction(Strict):
    """One action: a tool call or a text, with the state the agent writes on the way."""

    tool: str | None = Field(default=None, min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    text: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    status: Literal["ok", "error", "timeout"] | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> DriveAction:
        if (self.tool is None) == (self.text is None):
            raise ValueError('an action is {"tool": NAME, "args": {...}} or {"text": "..."}')
        if self.tool is None and (self.status is not None or self.result is not None or self.args):
            raise ValueError("`args`, `result` and `status` belong to a tool call")
        return self

    @property
    def live(self) -> bool:
        """Whether the adapter ran the tool itself (it gave a result or a status)."""
        return self.tool is not None and (self.status is not None or self.result is not None)


class Reply(Strict):
    """An agent's answer to one step: tool calls (answered in order), or one text."""

    actions: list[DriveAction] = Field(min_length=1)

    @model_validator(mode="after")
    def _calls_or_one_text(self) -> Reply:
        texts = [a for a in self.actions if a.text is not None]
        if texts and len(self.actions) > 1:
            raise ValueError("a reply is one text, or tool calls only")
        return self

    @property
    def calls(self) -> list[DriveAction]:
        return [a for a in self.actions if a.tool is not None]

    @property
    def text(self) -> str | None:
        return self.actions[0].text


def parse_reply(value: Any, who: str) -> Reply:
    """An agent's answer (JSON text, or already parsed) as a Reply; AgentFailure when it is garbage."""
    if isinstance(value, (bytes, str)):
        raw = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        lines = [line for line in raw.strip().splitlines() if line.strip()]
        if not lines:
            raise AgentFailure(f"{who} printed nothing (expected one JSON action on stdout)")
        try:
            value = json.loads(lines[-1])
        except json.JSONDecodeError as exc:
            raise AgentFailure(f"{who} printed no JSON action ({exc.msg}): {lines[-1][:160]!r}") from None
    try:
        if isinstance(value, list):
            return Reply(actions=[DriveAction.model_validate(v) for v in value])
        return Reply(actions=[DriveAction.model_validate(value)])
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise AgentFailure(f"{who} answered no valid action ({where + ': ' if where else ''}{err['msg']}): "
                           f"{json.dumps(value, default=str)[:160]}") from None
