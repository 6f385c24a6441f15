"""Drive one run: the script's turns said to the agent, its tool calls answered, all of it recorded.

For each script turn: at a `reset`, the agent is asked for the summary (unless the turn gives one),
a `summary` event is recorded and the history the agent sees is replaced by it (at a handoff the
second agent takes over from there); then the turn's user messages are recorded and sent, and the
agent is asked for its next action until it answers with text: each tool call is recorded with
the fixture's (or the adapter's own, live) result. What the agent sees is built from the recorded
events by judge.summaries.continuation.to_messages, the same messages `judge continue` sends.

Limits: `max_steps` actions per turn (the turn limit), `deadline_s` of wall clock per run,
`timeout_s` per agent step. An agent that crashes, hangs, answers garbage or breaks a limit stops
the run: the trace written so far is kept and the run's `failure` says why (the run is then
inconclusive, never a pass). The trace is written to `PATH.part` and renamed when the run ends;
Ctrl-C removes it and the interrupt goes on.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.model import (
    AgentInfo,
    AssistantEvent,
    RunHeader,
    Script,
    SummaryEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserEvent,
)
from judge.model.script import Status
from judge.suite.drive.actions import AgentFailure, DriveAction, Reply
from judge.suite.drive.agents import StepContext
from judge.suite.drive.fixtures import FixtureBook
from judge.suite.drive.texts import fill, texts
from judge.summaries.continuation import to_messages
from judge.trace.recorder import Recorder


@dataclass(frozen=True)
class Limits:
    """How long a run may go on."""

    max_steps: int = 12
    deadline_s: float = 300.0
    timeout_s: float = 60.0


@dataclass
class ToolUse:
    """One answered call, as `--record` keeps it."""

    turn: int
    tool: str
    args: dict[str, Any]
    status: str
    result: Any
    live: bool


@dataclass
class RunOutcome:
    """How a driven run went (its grade comes after, from the trace)."""

    trace: Path
    failure: str | None = None
    turns: int = 0
    steps: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    tools: list[ToolUse] = field(default_factory=list)
    wall_s: float = 0.0


@dataclass
class RunPlan:
    """One run: what it is called and where it goes, who plays the agent, what it is told."""

    run_id: str
    scenario_id: str
    trace: Path
    seed: int
    agent: Any
    handoff_agent: Any = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    tools_file: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    mode: str = "replay"


class _Run:
    """The state of one run while it is driven."""

    def __init__(self, plan: RunPlan, script: Script, book: FixtureBook, limits: Limits, rec: Recorder) -> None:
        self.plan, self.script, self.book, self.limits, self.rec = plan, script, book, limits, rec
        self.agent = plan.agent
        self.context: list[Any] = []  # the events the agent sees (since the last reset)
        self.started = time.monotonic()
        self.outcome = RunOutcome(trace=plan.trace)

    def remaining(self) -> float:
        left = self.limits.deadline_s - (time.monotonic() - self.started)
        if left <= 0:
            raise AgentFailure(f"the run passed its deadline of {self.limits.deadline_s:g} s")
        return left

    def ask(self, messages: list[dict[str, Any]], turn: int) -> Reply:
        step = StepContext(tools=self.plan.tools, tools_file=self.plan.tools_file, seed=self.plan.seed,
                           run_id=self.plan.run_id, turn=turn, mode=self.plan.mode)
        self.outcome.steps += 1
        budget = min(self.limits.timeout_s, self.remaining())
        try:
            return self.agent.act(messages, step, budget)
        except AgentFailure as failure:
            if budget < self.limits.timeout_s and time.monotonic() - self.started >= self.limits.deadline_s:
                raise AgentFailure(f"the run passed its deadline of {self.limits.deadline_s:g} s while the agent "
                                   f"was answering: {failure.reason}") from None
            raise

    def write_state(self, action: DriveAction) -> None:
        for key, value in action.state.items():
            self.rec.state_write(str(key), value)

    def reset(self, turn: Any) -> None:
        words = texts()
        to = turn.to or (getattr(self.plan.handoff_agent, "name", None) if turn.reset == "handoff" else None)
        text = turn.summary
        if text is None:
            request = words.compaction_request if turn.reset == "compaction" else \
                fill(words.handoff_request, to=to or words.handoff_to)
            reply = self.ask(to_messages(self.context) + [{"role": "user", "content": request}], turn.turn)
            if reply.text is None:
                raise AgentFailure(f"asked for a {turn.reset} summary at turn {turn.turn}, the agent called "
                                   f"{reply.calls[0].tool} instead of answering with the summary")
            self.write_state(reply.actions[0])
            text = reply.text
        reason = turn.reset
        event_id = self.rec.summary(text, reason=reason, to=to if reason == "handoff" else None)
        self.context = [SummaryEvent(id=event_id, turn=turn.turn, kind="summary", reason=reason, text=text,
                                     to=to if reason == "handoff" else None)]
        if reason == "handoff" and self.plan.handoff_agent is not None:
            self.agent = self.plan.handoff_agent

    def call(self, action: DriveAction, turn: int) -> None:
        tool = action.tool or ""
        call_id = self.rec.tool_call(tool, action.args)
        self.context.append(ToolCallEvent(id=call_id, turn=turn, kind="tool-call", call_id=call_id, tool=tool,
                                          args=action.args))
        self.outcome.calls[tool] = self.outcome.calls.get(tool, 0) + 1
        if action.live:
            status: Status = action.status or "ok"
            result = action.result
        else:
            answer = self.book.answer(turn, tool, action.args)
            if answer.response.delay:
                left = self.remaining()
                time.sleep(min(answer.response.delay, left))
                self.remaining()
            status, result = answer.status, answer.response.result
        result_id = self.rec.tool_result(call_id, result, status=status, tool=tool)
        self.context.append(ToolResultEvent(id=result_id, turn=turn, kind="tool-result", call_id=call_id, tool=tool,
                                            status=status, result=result))
        self.outcome.tools.append(ToolUse(turn, tool, dict(action.args), status, result, action.live))

    def play_turn(self, turn: Any) -> None:
        self.rec.turn = turn.turn
        self.outcome.turns += 1
        if turn.reset is not None:
            self.reset(turn)
        for message in turn.messages:
            event_id = self.rec.user(message)
            self.context.append(UserEvent(id=event_id, turn=turn.turn, kind="user", text=message))
        for _ in range(self.limits.max_steps):
            reply = self.ask(to_messages(self.context), turn.turn)
            self.write_state(reply.actions[0])
            if reply.text is not None:
                event_id = self.rec.assistant(reply.text)
                self.context.append(AssistantEvent(id=event_id, turn=turn.turn, kind="assistant", text=reply.text))
                return
            for action in reply.calls:
                if action is not reply.actions[0]:
                    self.write_state(action)
                self.call(action, turn.turn)
        raise AgentFailure(f"turn limit: {self.limits.max_steps} actions in turn {turn.turn} without an answer "
                           "to the user")


def drive_run(plan: RunPlan, script: Script, book: FixtureBook, limits: Limits = Limits()) -> RunOutcome:
    """Drive one run through the script and record its trace at `plan.trace`."""
    part = plan.trace.with_name(plan.trace.name + ".part")
    rec = Recorder(part, run_id=plan.run_id, scenario=plan.scenario_id, agent=_agent_info(plan.agent),
                   metadata=plan.metadata, turns="manual")
    if plan.tools:
        rec.header = RunHeader.model_validate({**rec.header.model_dump(exclude_none=True), "tools": plan.tools})
    run = _Run(plan, script, book, limits, rec)
    try:
        with rec:
            for turn in script.turns:
                try:
                    run.play_turn(turn)
                except AgentFailure as failure:
                    run.outcome.failure = failure.reason
                    break
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    os.replace(part, plan.trace)
    run.outcome.wall_s = round(time.monotonic() - run.started, 3)
    return run.outcome


def _agent_info(agent: Any) -> AgentInfo:
    model = getattr(agent, "model", None)
    return AgentInfo(name=getattr(agent, "name", None) or "agent", model=model if isinstance(model, str) else None)
