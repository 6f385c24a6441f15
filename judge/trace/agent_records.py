"""Agent interaction records (the record shape of public agent-safety benchmarks: R-Judge, and the
ToolEmu, InjecAgent and AgentMonitor records it gathers) as our traces, one per record.

A record is `{id, profile, contents: [[{role, thought?, action?, content?}]], label?, ...}`:
`contents` holds one or more parts of one interaction, read in order; `role` is `user`, `agent`
or `environment`.

**The mapping.** Each user message opens a turn (`user` event). An agent entry's `thought` is an
`assistant` event starting with "Thought: " (what the agent reasoned, never a user instruction);
its `action` is a `tool-call` when it is written as one (judge.trace.agent_actions: `Tool{json}`,
`Tool: {json}`, `Tool(k=v)`, `Tool[...]`, fenced code, UI actions), else an `assistant` message
(a final answer, or any free text: free text is never made into a tool call). The environment's
content after a call is that call's `tool-result` (`error` when it reads as one); after a message
or before any action it is a `snapshot` of the environment (`ref: environment`), never the user's
words. A tool's observation written inside the agent's thought (`Observation: ...`) is the pending
call's tool result, not the agent's words.

**Harness text in the user role is not the user's.** A user-role entry that lists the tools or
actions available, or echoes the agent's own plan back as the next step's prompt, is written as a
`snapshot` (`ref: harness`), so it never confirms or requests anything; the tools and actions it
lists (and those the environment offers: "Available actions: ...") are the run header's `tools`.
What such a text says beside its tool list is the harness's step prompt, kept as the snapshot's
`state.step` ("Available tools: ... Now use research_database to find ..."): it names the tools the
step calls for (judge.checks.plan), and an echo of the agent's own plan has none.

**The role's declared toolkit.** The tools the record's `profile` (the role's system prompt) lists
("Available tools: ...", "Your tools: a, b", "You have access to the following tools: ...") and
those of an optional `tools` field (names, or `{name, description}` objects) are the header's
`tools` too, with the harness's lists: the toolkit `allowed-tools` holds calls (and planned tools) to,
and whose tools a step prompt that names them authorises (judge.checks.plan).

**What else is kept.** The record's `id` is the run id; `profile` (the operator's system prompt),
the record's domain (`scenario`) and its `goal` go to the header's metadata. A `label` (1 unsafe,
0 safe) is returned for the labels file, never written into the trace, and neither is the
human rationale (`risk_description`), so nothing graded can read the answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from judge.errors import JudgeInputError
from judge.trace.agent_actions import Call, Message, literal, offered_actions, offered_tool, parse_action
from judge.trace.build import EventBuilder

ROLES = ("user", "agent", "environment")
_OBSERVATION = re.compile(r"(?:^|\n)\s*Observation\s*:\s*", re.IGNORECASE)
_TOOL_LIST = re.compile(r"(?:available\s+(?:tools|actions|functions)|you\s+(?:have\s+access\s+to|can\s+use)\s+the\s+"
                        r"following\s+(?:tools|actions|functions))\s*:?", re.IGNORECASE)
_PROFILE_TOOL_LIST = re.compile(_TOOL_LIST.pattern + r"|(?:^|\n)[ \t]*(?:your\s+|the\s+|available\s+)?tools"
                                r"(?:\s+available(?:\s+to\s+you)?|\s+you\s+(?:can|may)\s+use)?[ \t]*:",
                                re.IGNORECASE)
"""A profile's tool list: the harness's forms, and a line "Tools: ...", "Your tools: ..." (a profile is the
operator's text, so a line that says so declares them)."""
_LISTED_TOOL = re.compile(r"^[ \t]*(?:[-*\d.)]+[ \t]*)?([A-Za-z_][A-Za-z0-9_]{1,80})[ \t]*(?::|-|\(|$)", re.MULTILINE)
_TEMPLATE_ACTION = re.compile(r'"action_type"\s*:\s*"([A-Za-z_][A-Za-z0-9_]{0,80})"')
_ERROR = re.compile(r"^\W*(?:error|exception|traceback|failed|failure|permission denied|not found|invalid)\b",
                    re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
ECHO_OVERLAP = 0.9
ECHO_WORDS = 12
"""A user-role text of at least ECHO_WORDS words, ECHO_OVERLAP of them in the agent's previous
thought, echoes its plan (a short reply such as "yes, send it to Bob" never does)."""


@dataclass
class RecordTrace:
    """One record as a trace: its header and events, and its label (None: unlabelled)."""

    header: dict[str, Any]
    events: list[dict[str, Any]]
    label: int | None
    note: str | None


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def listed_tools(text: str, pattern: re.Pattern[str] = _TOOL_LIST) -> list[str]:
    """The tool names a harness text lists after "Available tools:" (one per line or comma), up to
    the first blank line after the list; a JSON template line (`{"action_type": "click", ...}`)
    names its action type. `pattern`: what opens the list."""
    found = pattern.search(text or "")
    if not found:
        return []
    block = text[found.end():found.end() + 20_000].lstrip().split("\n\n", 1)[0]
    names = [m.group(1) for m in _TEMPLATE_ACTION.finditer(block)]
    plain = "\n".join(line for line in block.splitlines() if not line.lstrip().startswith("{"))
    names += [m.group(1) for m in _LISTED_TOOL.finditer(plain.replace(",", "\n"))]
    return list(dict.fromkeys(n for n in names if n.lower() not in ("none", "and", "or")))


def step_prompt(text: str) -> str:
    """What a harness text with a tool list says beside the list (the step it asks for), else ""."""
    found = _TOOL_LIST.search(text or "")
    if not found:
        return ""
    rest = text[found.end():]
    body = rest.lstrip()
    end = body.find("\n\n")
    after = "" if end < 0 else body[end:]
    return (text[:found.start()] + "\n" + after).strip()


def is_harness(text: str, last_thought: str | None) -> bool:
    """Whether a user-role text is the harness's, not the user's: a list of the tools available, or
    the agent's own plan echoed back as the next step's prompt."""
    if _TOOL_LIST.search(text or ""):
        return True
    if last_thought:
        mine, theirs = _words(last_thought), _words(text)
        return len(theirs) >= ECHO_WORDS and len(mine & theirs) >= ECHO_OVERLAP * len(theirs)
    return False


def result_value(text: str) -> Any:
    """A result as data when it is written as JSON or a Python literal (also inside a quoted
    string: `"{'from': ...}"`), else the text."""
    value = literal(text)
    if isinstance(value, str):
        value = literal(value) if value.strip()[:1] in ("{", "[") else None
    return value if isinstance(value, (dict, list)) else text


def result_status(content: Any) -> str:
    """`error` for a result that reads as one (an `error` field, a non-zero `exit_code`, a text that
    starts with Error, Exception, ...), `timeout` for one that timed out, else `ok`."""
    value = result_value(content) if isinstance(content, str) else content
    if isinstance(value, dict):
        if value.get("error") not in (None, "", False):
            return "error"
        code = value.get("exit_code", value.get("exitcode"))
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return "timeout" if code == 124 else "error"
        if value.get("success") is False:
            return "error"
        return "ok"
    text = _text(value)
    if "timed out" in text[:500].lower():
        return "timeout"
    return "error" if _ERROR.match(text[:200]) else "ok"


class _Reader:
    """Turns the entries of one record into events (EventBuilder keeps ids, turns and calls valid)."""

    def __init__(self, file: str, where: str) -> None:
        self.file, self.where = file, where
        self.out = EventBuilder(turn=0)
        self.pending: str | None = None  # the call id awaiting its result
        self.last_thought: str | None = None
        self.tools: dict[str, dict[str, Any]] = {}
        self.offered: tuple[str, ...] = ()

    def _snapshot(self, ref: str, text: str, step: str = "") -> None:
        if text.strip():
            self.out.add("snapshot", ref=ref, phase="after",
                         state={"text": text, **({"step": step} if step.strip() else {})})

    def _offer(self, text: str) -> None:
        actions = offered_actions(text)
        if actions:
            self.offered = actions
            for action in actions:
                self.tools.setdefault(offered_tool(action), {"name": offered_tool(action), "description": action})
        for name in listed_tools(text):
            self.tools.setdefault(name, {"name": name})

    def user(self, text: str) -> None:
        if is_harness(text, self.last_thought):
            self._offer(text)
            self._snapshot("harness", text, step_prompt(text))
            return
        self.out.next_turn()
        self.out.add("user", text=text)
        self.pending = None

    def environment(self, text: str) -> None:
        if not text.strip():
            return
        self._offer(text)
        if self.pending is not None:
            call = self.pending
            self.pending = None
            self.out.result(call, result_status(text), result_value(text))
        else:
            self._snapshot("environment", text)

    def agent(self, thought: str, action: str) -> None:
        thought, observations = _split_observations(thought)
        if thought.strip():
            self.out.add("assistant", text=f"Thought: {thought.strip()}")
            self.last_thought = thought
        for observation in observations:  # the result of the call still waiting for one
            if self.pending is not None:
                call, self.pending = self.pending, None
                self.out.result(call, result_status(observation), result_value(observation))
        parsed = parse_action(action, self.offered)
        if isinstance(parsed, Call):
            self.pending = self.out.call(parsed.tool, parsed.args)
        elif isinstance(parsed, Message) and parsed.text:
            self.out.add("assistant", text=parsed.text)
            self.pending = None


def _split_observations(thought: str) -> tuple[str, list[str]]:
    """The thought without the tool observations written inside it, and those observations."""
    parts = _OBSERVATION.split(thought or "")
    return parts[0], [p.strip() for p in parts[1:] if p.strip()]


def record_trace(record: Any, file: str, where: str) -> RecordTrace:
    """One record -> its trace; a JudgeInputError names the record and field of a problem."""
    if not isinstance(record, dict):
        raise JudgeInputError("expected a JSON object (an agent interaction record)", file=file, field=where or None)
    if record.get("id") in (None, ""):
        raise JudgeInputError("required field is missing", file=file, field=f"{where}.id".lstrip("."))
    contents = record.get("contents")
    if not isinstance(contents, list):
        raise JudgeInputError("required field is missing (a list of parts, each a list of entries)", file=file,
                              field=f"{where}.contents".lstrip("."))
    declared = declared_tools(record, file, where)
    reader = _Reader(file, where)
    for i, part in enumerate(contents):
        entries = part if isinstance(part, list) else [part]
        for j, entry in enumerate(entries):
            field = f"{where}.contents[{i}][{j}]".lstrip(".")
            if not isinstance(entry, dict) or entry.get("role") not in ROLES:
                raise JudgeInputError(f"an entry needs a role ({', '.join(ROLES)})", file=file, field=field)
            role = entry["role"]
            if role == "agent":
                reader.agent(_text(entry.get("thought")), _text(entry.get("action")))
            elif role == "user":
                reader.user(_text(entry.get("content")))
            else:
                reader.environment(_text(entry.get("content")))
    return RecordTrace(_header(record, reader, declared), reader.out.events, _label(record, file, where),
                       _text(record.get("risk_description")) or None)


def declared_tools(record: dict[str, Any], file: str, where: str) -> list[dict[str, Any]]:
    """The role's declared toolkit: the tools its `profile` lists, then those of its `tools` field
    (names or `{name, description}` objects)."""
    found = [{"name": name} for name in listed_tools(_text(record.get("profile")), _PROFILE_TOOL_LIST)]
    given = record.get("tools")
    if given is None:
        return found
    field = f"{where}.tools".lstrip(".")
    if not isinstance(given, list):
        raise JudgeInputError("tools is a list of tool names or {name, description} objects", file=file, field=field)
    for i, tool in enumerate(given):
        if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"].strip():
            description = tool.get("description")
            found.append({"name": tool["name"].strip(), **({"description": description}
                                                              if isinstance(description, str) else {})})
        elif isinstance(tool, str) and tool.strip():
            found.append({"name": tool.strip()})
        else:
            raise JudgeInputError("a tool is a name or an object with a `name`", file=file, field=f"{field}[{i}]")
    return found


def _header(record: dict[str, Any], reader: _Reader, declared: list[dict[str, Any]]) -> dict[str, Any]:
    metadata = {"format": "agent-records", "profile": record.get("profile") or None,
                "domain": record.get("scenario") or None, "goal": record.get("goal") or None}
    tools = {t["name"]: t for t in declared}
    for name, tool in reader.tools.items():
        tools.setdefault(name, tool)
    return {"kind": "run", "run_id": str(record["id"]), "tools": list(tools.values()) or None,
            "metadata": {k: v for k, v in metadata.items() if v is not None}}


def _label(record: dict[str, Any], file: str, where: str) -> int | None:
    label = record.get("label")
    if label is None:
        return None
    if label in (0, 1, "0", "1") and not isinstance(label, bool):
        return int(label)
    raise JudgeInputError(f"a label is 1 (unsafe) or 0 (safe), not {label!r}", file=file,
                          field=f"{where}.label".lstrip("."))
