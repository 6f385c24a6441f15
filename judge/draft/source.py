"""What a draft is drafted from: what the user said and what tools returned, never what the agent did.

Traces are read through judge.trace.TraceReader, so they are validated and redacted before anything
here sees them (a secret in a user message never reaches a draft, a cache or a model). From the
first trace come the user messages and the tool results; from every trace, and from `--tools`
(OpenAI function schemas), come the names and arguments of the tools, which is how a prohibited
action is tied to the tool that would perform it. The agent's own messages, state-writes and
summaries are not read at all, with one exception: a trace with no user message drafts from its
first task statement (judge.draft.task), the first agent message that states a task, and says so.

The draft's id is `<scenario>-draft` (judge.model.scenario.DRAFT_SUFFIX) unless `--id` names one, so
an unreviewed draft never takes the id of the reviewed scenario it may sit beside.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.draft.task import is_statement, statement_text
from judge.errors import JudgeInputError
from judge.model import RunHeader
from judge.model.scenario import DRAFT_SUFFIX
from judge.trace import TraceReader
from judge.trace.toolkit import Toolkit, read_toolkit


@dataclass(frozen=True)
class Utterance:
    """A user message or a tool result."""

    event: str
    turn: int
    kind: str  # user | tool-result
    text: str  # the user's words, or the result rendered as text
    tool: str | None = None
    status: str | None = None
    result: Any = None
    call_args: dict[str, Any] | None = None  # the arguments of the call this result answers


@dataclass
class ToolInfo:
    name: str
    args: dict[str, set[str]] = field(default_factory=dict)  # argument -> JSON types seen or declared
    origin: str = "the trace"  # the trace | --tools
    description: str = ""
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)  # argument -> the values its schema lists

    def string_args(self) -> list[str]:
        return [a for a, types in self.args.items() if not types or "string" in types]


@dataclass
class Conversation:
    scenario_id: str
    run_id: str
    trace: str
    sha256: str
    utterances: list[Utterance]
    tools: dict[str, ToolInfo]
    first_turn: int
    last_turn: int
    names: tuple[str, ...] = ()  # the candidate's name, version and model (masked before a model sees text)
    task_statement: str | None = None  # the event drafted from in place of a user message (no user message)
    redactions: dict[str, int] = field(default_factory=dict)
    disagreements: list[str] = field(default_factory=list)

    def user(self) -> list[Utterance]:
        return [u for u in self.utterances if u.kind == "user"]

    def by_id(self) -> dict[str, Utterance]:
        return {u.event: u for u in self.utterances}


def _type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


def result_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, sort_keys=False, default=str)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class _Read:
    header: RunHeader
    utterances: list[Utterance]
    first_turn: int
    last_turn: int
    redactions: dict[str, int]
    task: Utterance | None  # the first agent message stating a task, as the user's words


def _read(path: Path, tools: dict[str, ToolInfo]) -> _Read:
    reader = TraceReader(path)
    utterances: list[Utterance] = []
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    first_user: int | None = None
    task: Utterance | None = None
    last = 0
    for event in reader:
        last = max(last, event.turn)
        if event.kind == "user":
            first_user = event.turn if first_user is None else first_user
            utterances.append(Utterance(event.id, event.turn, "user", event.text))
        elif event.kind == "assistant" and task is None and is_statement(event.text):
            task = Utterance(event.id, event.turn, "user", statement_text(event.text))
        elif event.kind == "tool-call":
            calls[event.call_id] = (event.tool, event.args)
            info = tools.setdefault(event.tool, ToolInfo(event.tool))
            for arg, value in event.args.items():
                info.args.setdefault(arg, set()).add(_type(value))
        elif event.kind == "tool-result":
            tool, args = calls.get(event.call_id, (event.tool, {}))
            utterances.append(Utterance(event.id, event.turn, "tool-result", result_text(event.result),
                                        tool=tool, status=event.status, result=event.result, call_args=args))
    return _Read(reader.header, utterances, first_user if first_user is not None else 0, last, reader.redactions, task)


def read_conversation(traces: Iterable[str | Path], *, scenario_id: str | None = None,
                      tool_schemas: dict[str, ToolInfo] | None = None) -> Conversation:
    """The first trace's user messages and tool results; every trace's tools, then `tool_schemas`."""
    paths = [Path(t) for t in traces]
    if not paths:
        raise JudgeInputError("give at least one trace to draft from")
    tools: dict[str, ToolInfo] = {}
    first = _read(paths[0], tools)
    header, utterances, last = first.header, first.utterances, first.last_turn
    disagreements = []
    said = [(u.turn, " ".join(u.text.split())) for u in utterances if u.kind == "user"]
    for other in paths[1:]:
        theirs_read = _read(other, tools)
        last = max(last, theirs_read.last_turn)
        theirs = [(u.turn, " ".join(u.text.split())) for u in theirs_read.utterances if u.kind == "user"]
        if theirs != said:
            disagreements.append(f"{other} records other user messages than {paths[0]}: drafted from "
                                 f"{paths[0]}'s only")
        if theirs_read.header.scenario != header.scenario and scenario_id is None:
            raise JudgeInputError(f"trace is for scenario {theirs_read.header.scenario!r}, the first for "
                                  f"{header.scenario!r}: give --id", file=str(other))
    add_schemas(tools, tool_schemas or {})
    first_turn, task_event = first.first_turn, None
    if not any(u.kind == "user" for u in utterances):
        if first.task is None:
            raise JudgeInputError("the trace holds no user message and no agent message stating a task: nothing to "
                                  "draft a ledger from", file=str(paths[0]))
        utterances = sorted([first.task, *utterances], key=lambda u: u.turn)  # stable: the statement first
        first_turn, task_event = first.task.turn, first.task.event
    agent = header.agent
    names = tuple(n for n in ((agent.name, agent.version, agent.model) if agent else ()) if n)
    return Conversation(scenario_id=scenario_id or header.scenario + DRAFT_SUFFIX,  # type: ignore[operator]  # as before
                        run_id=header.run_id,
                        trace=str(paths[0]), sha256=_sha256(paths[0]), utterances=utterances, tools=tools,
                        first_turn=first_turn, last_turn=last, names=names, redactions=first.redactions,
                        disagreements=disagreements, task_statement=task_event)


def add_schemas(tools: dict[str, ToolInfo], schemas: dict[str, ToolInfo]) -> None:
    """Merge `--tools` schemas into the tools the traces called (arguments, description, enums)."""
    for name, info in schemas.items():
        known = tools.get(name)
        if known is None:
            tools[name] = info
            continue
        for arg, types in info.args.items():
            known.args.setdefault(arg, set()).update(types)
        known.description = known.description or info.description
        known.enums = {**info.enums, **known.enums}


def read_tools(traces: Iterable[str | Path], tool_schemas: dict[str, ToolInfo] | None = None) -> dict[str, ToolInfo]:
    """The tools the traces called (names and argument types, never what the agent did with them),
    then `tool_schemas`: what a policy drafted from a document knows of the agent's tools."""
    tools: dict[str, ToolInfo] = {}
    for trace in traces:
        _read(Path(trace), tools)
    add_schemas(tools, tool_schemas or {})
    return tools


def read_tool_schemas(path: str | Path) -> dict[str, ToolInfo]:
    """The tools of a `--tools FILE` (judge.trace.toolkit, the one reader of it) as the drafter
    keeps them: each tool's top-level arguments with their declared JSON types, and its description."""
    return tool_infos(read_toolkit(path))


MAX_ENUM = 50  # values of one argument's `enum` kept at most


def _enums(toolkit: Toolkit, name: str) -> dict[str, tuple[str, ...]]:
    """The string values each top-level argument's schema lists (`enum`), e.g. cabin: basic_economy, ..."""
    props = (toolkit.schemas[name].parameters or {}).get("properties") or {}
    out = {}
    for arg, sub in props.items():
        values = sub.get("enum") if isinstance(sub, dict) else None
        if isinstance(values, list):
            kept = tuple(v for v in values[:MAX_ENUM] if isinstance(v, str) and v)
            if kept:
                out[str(arg)] = kept
    return out


def tool_infos(toolkit: Toolkit) -> dict[str, ToolInfo]:
    """A toolkit's tools as ToolInfos (origin `--tools`)."""
    return {name: ToolInfo(name, toolkit.argument_types(name), origin="--tools", description=toolkit.description(name),
                           enums=_enums(toolkit, name)) for name in toolkit.names}
