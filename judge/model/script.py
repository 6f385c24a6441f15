"""The script of a scenario (`script:`): what `judge run` says to the agent turn by turn, and what its
tools return.

```yaml
script:
  turns:
    - turn: 1
      user: Repair the flaky checkout test. Only edit tests/checkout.spec.ts; do not deploy.
      fixtures:                      # this turn's tool results, tried before the script's own
        - {tool: run_tests, result: {passed: 18, failed: 2}}
    - turn: 4
      user: [Correction: the failures are on Firefox., Use Firefox from now on.]
  fixtures:                          # every turn's (after the turn's own)
    - {tool: read_file, args: {path: "tests/*"}, result: {content: "..."}}
    - tool: run_tests                # in order: a timeout first, then a pass; used up, the next fixture answers
      responses: [{status: timeout, result: {error: timeout}}, {result: {passed: 20, failed: 0}}]
  default: {status: error, result: {error: no fixture answers this call}}
```

The turns are the ledger's turns: the user message of turn N is what `source_turn: N` and a
`source: user` delta at turn N refer to. A call no fixture matches gets `default`, an error or a
timeout (never a silent success), which the agent must handle. judge/suite/drive runs the script;
the stressors (`judge run --stress`) rewrite it (and the ledger where the truth changes).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from judge.model.base import Strict
from judge.model.tools import ToolEntry

Status = Literal["ok", "error", "timeout"]
Reset = Literal["compaction", "handoff"]
MAX_DELAY_S = 3600.0


class ToolResponse(Strict):
    """What one tool call returns: its status, its result and how long it takes to come back."""

    status: Status = "ok"
    result: Any = None
    delay: float = Field(default=0.0, ge=0.0, le=MAX_DELAY_S, description="seconds before the result comes back")


class ToolFixture(Strict):
    """The result to return for calls of `tool` whose arguments match `args`.

    One response (`status`, `result`, `delay`) answers every matching call; `responses` answer the
    matching calls in order, one each, and once used up the fixture no longer matches (the next
    fixture, or the script's `default`, answers)."""

    tool: str = Field(min_length=1, description="tool name (glob)")
    args: dict[str, Any] | None = Field(default=None, description=(
        "argument matchers: a dotted argument path -> a value (equal; strings case-insensitively) or a glob"))
    status: Status | None = None
    result: Any = None
    delay: float | None = Field(default=None, ge=0.0, le=MAX_DELAY_S)
    responses: list[ToolResponse] | None = Field(default=None, min_length=1, description=(
        "results in order, one per matching call; used up, the fixture no longer matches"))
    note: str | None = None

    @model_validator(mode="after")
    def _one_shape(self) -> ToolFixture:
        if self.responses is not None and (self.status is not None or self.result is not None
                                           or self.delay is not None):
            raise ValueError("a fixture has either `responses` or one response (status, result, delay), not both")
        return self

    def answers(self) -> list[ToolResponse]:
        """The responses of this fixture, in order (one response for the single form)."""
        if self.responses is not None:
            return list(self.responses)
        return [ToolResponse(status=self.status or "ok", result=self.result, delay=self.delay or 0.0)]


class ScriptTurn(Strict):
    """One turn of the script: its user message(s), the fixtures that answer during it, and whether
    the history is replaced by a summary before it (`reset`)."""

    turn: int = Field(ge=0, strict=True)
    user: str | list[str] | None = Field(default=None, description=(
        "the user message(s) of this turn; none: the agent is asked to go on"))
    fixtures: list[ToolFixture] = Field(default_factory=list, description="tried first, during this turn only")
    reset: Reset | None = Field(default=None, description=(
        "before this turn's messages the history is replaced by a summary: `compaction`, or `handoff` "
        "to another agent (or the same one with a fresh context)"))
    summary: str | None = Field(default=None, description=(
        "the summary to use at a reset (default: the agent is asked for one)"))
    to: str | None = Field(default=None, description="who takes over at a handoff")
    stress: str | None = Field(default=None, description="the stressor that inserted or changed this turn")
    note: str | None = None

    @field_validator("user")
    @classmethod
    def _no_empty_messages(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and any(not m.strip() for m in value):
            raise ValueError("a user message must not be empty")
        return value

    @property
    def messages(self) -> list[str]:
        """The user messages of this turn, as a list."""
        if self.user is None:
            return []
        return [self.user] if isinstance(self.user, str) else list(self.user)


NO_FIXTURE = ToolResponse(status="error", result={"error": "no fixture answers this call"})


class Script(Strict):
    """What `judge run` says and answers, turn by turn."""

    turns: list[ScriptTurn] = Field(min_length=1)
    fixtures: list[ToolFixture] = Field(default_factory=list, description="tried in every turn, after the turn's own")
    default: ToolResponse = Field(default_factory=lambda: NO_FIXTURE.model_copy(), description=(
        "what a call no fixture matches returns: an error or a timeout, never a silent success"))
    toolkit: list[ToolEntry] | None = Field(default=None, description=(
        "the tools the agent is given (OpenAI function schemas; default: `--tools FILE`, else one bare "
        "schema per tool the fixtures name)"))
    stressors: list[str] | None = Field(default=None, description=(
        "what `judge run --stress all` runs after the control, e.g. [distance:3, correction:browser=webkit] "
        "(default: every stressor whose argument can be derived from the scenario)"))

    @model_validator(mode="after")
    def _turns_in_order(self) -> Script:
        seen = -1
        for turn in self.turns:
            if turn.turn <= seen:
                raise ValueError(f"script turns must increase: turn {turn.turn} after turn {seen}")
            seen = turn.turn
        if self.default.status == "ok":
            raise ValueError("`default` answers calls no fixture matches: it must be an error or a timeout, "
                             "never a silent success")
        if self.turns[0].reset is not None:
            raise ValueError("the first turn has no history to replace: a `reset` needs an earlier turn")
        return self

    def turn_numbers(self) -> list[int]:
        """The turns of the script, in order."""
        return [t.turn for t in self.turns]

    def tool_names(self) -> list[str]:
        """Every tool a fixture names (globs included), in the order first named."""
        names: list[str] = []
        for fixture in [*self.fixtures, *(f for t in self.turns for f in t.fixtures)]:
            if fixture.tool not in names:
                names.append(fixture.tool)
        return names


class FixturesFile(Strict):
    """Tool fixtures on their own (`judge run --record` writes one; `--fixtures FILE` replays it in
    place of the script's fixtures)."""

    scenario: str | None = Field(default=None, description="the scenario the fixtures were recorded for")
    recorded_from: str | None = Field(default=None, description="the run id they were recorded from")
    fixtures: list[ToolFixture] = Field(default_factory=list)
    default: ToolResponse = Field(default_factory=lambda: NO_FIXTURE.model_copy())

    @model_validator(mode="after")
    def _default_is_not_a_success(self) -> FixturesFile:
        if self.default.status == "ok":
            raise ValueError("`default` must be an error or a timeout, never a silent success")
        return self
