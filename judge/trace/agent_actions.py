"""Read the action an agent wrote as a string (the agent-safety record shape of R-Judge, ToolEmu,
InjecAgent, AgentMonitor): a tool call, or a message to the user.

A call is recognised only in the forms these benchmarks write one; anything else is a message, so
free text is never made into a tool call:

- `Tool{json}`, `Tool {json}`, `{Tool: {json}}`, `Tool: {json}` (or a JSON list), `Tool` then a line
  `Action Input: {json}` (the arguments may also be a Python literal: single quotes, True/None);
- `Tool(k=v, ...)`, `Tool('k': v)`, `Tool(k: 'v')` (arguments read as keywords or a mapping; an
  expression such as `CheckUser(last_chat_time < '2023-09-13')` is kept whole under `_raw`), and
  `Tool[...]`;
- an AutoGPT command, `"command": {"name": "Tool", "args": {json}}` (braces around it or not), and
  one whose command is a shell line, `"command": "./run.sh"` (a call of `execute_code`);
- a JSON object whose one key is a tool-shaped name (`{"CiscoUmbrellaCreatePolicy": {json}}`);
- forms a model wrote slightly wrong, when the name is tool-shaped (`snake_case` or `CamelCase`):
  arguments that are no literal (`Tool: {"amount": 10000/2800.45}`: kept whole under `_raw`), a
  string holding raw line breaks in a Python literal, a call whose closing parenthesis is missing;
- a fenced code block, alone or after a one-word label line (`bash`): a call of `execute_code`
  (`command` for shell languages, else `code`);
- a UI action: `click <x>` / `tap <x>` / `Open <x>` / `Search 'x'` / `type <x>` / `scroll ...`,
  an act on an element in angle brackets (`delete <x>`, `uninstall <x>`, `share <x>`, ...),
  `<Menu>-<Item> ...` (an element path), `The action is {"action_type": "click", ...}`;
- an action the environment offered by name ("Available actions: check the current temperature,
  ..."): a call of that action (`offered`).

`Final Answer: ...` and every other text are messages, and so is a harness's **final-answer action**
(`Complete{"response": ...}`, `Finish[...]`, `final_answer(answer=...)`, `attempt_completion`, ...:
judge.trace.agent_actions.FINAL_ACTIONS): the text it carries is the agent's answer to the user, not
a call with side effects (a refusal given that way refuses; a compliance narrated that way is
judged by what the rules see in its words and in the calls before it). An action of the same name
with other arguments (`Complete{"task_id": 7}`: ticking off a to-do item) stays a call. Parsing is
bounded: arguments longer than MAX_ARGS_CHARS are kept as text, and every pattern is anchored with no
nested repetition (linear).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_ARGS_CHARS = 1 << 20
"""Arguments longer than this are kept whole as text (`_raw`), never parsed."""

_NAME = r"[A-Za-z_][A-Za-z0-9_.]{0,120}"
_BRACED = re.compile(rf"\{{?\s*({_NAME})\s*(?::\s*)?(\{{.*\}}|\[.*\])\s*\}}?\s*$", re.DOTALL)
_COLON = re.compile(rf"({_NAME})\s*:\s*(\{{.*\}}|\[.*\])\s*$", re.DOTALL)
_INPUT_LINE = re.compile(rf"({_NAME})\s*\n\s*Action\s+Input\s*:\s*(.*)$", re.DOTALL | re.IGNORECASE)
_CALL = re.compile(rf"({_NAME})\((.*)\)\s*$", re.DOTALL)
_BRACKETS = re.compile(rf"({_NAME})\[(.*)\]\s*$", re.DOTALL)
_LABELLED_FENCE = re.compile(r"[A-Za-z0-9_+-]{1,20}[ \t]*\n\s*(?=```)")
_AUTOGPT = re.compile(r"\{?\s*\"command\"\s*:\s*\{")
_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```\s*$", re.DOTALL)
_FINAL = re.compile(r"(?:Final\s+Answer|Answer|Response)\s*:\s*", re.IGNORECASE)
_UI = re.compile(r"(click|tap|press|open|launch|search|type|input|select|scroll|swipe|drag|go\s+back|go\s+home|"
                 r"navigate(?:_back|_home)?|back|home)\b[ \t]*(.*)$", re.IGNORECASE | re.DOTALL)
_UI_ACTS = re.compile(r"(delete|remove|uninstall|clear|install|download|share|send|allow|grant)[ \t]+(<.*)$",
                      re.IGNORECASE | re.DOTALL)
"""An act on a UI element (`delete <QQ>`, `uninstall <App> AND uninstall <Game>`): only with the element
in angle brackets, so that words ("delete the old files") stay a message."""
_UI_TARGET = re.compile(r"<[^<>\n]{1,300}>|'[^'\n]{0,300}'|\"[^\"\n]{0,300}\"")
_ELEMENT_PATH = re.compile(r"((?:<[^<>\n]{1,200}>\s*-?\s*){1,12})(.*)$", re.DOTALL)
_ACTION_IS = re.compile(r"(?:The\s+)?action\s+is\s*:?\s*(\{.*\})\s*$", re.IGNORECASE | re.DOTALL)
_SHELLS = frozenset({"bash", "sh", "shell", "zsh", "console", "terminal", "cmd", "powershell", "ps1"})
_DIRECTIONS = frozenset({"up", "down", "left", "right"})
_KWARG = re.compile(r"\s*([A-Za-z_]\w*)\s*:(?!=)")
_TOOL_SHAPED = re.compile(r"[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+")
"""A name that can only be an identifier (`SendEmail`, `send_email`), never a word of prose."""
_SHELL_COMMAND = re.compile(r"\{?\s*\"command\"\s*:\s*\"")
_OPEN_CALL = re.compile(rf"({_NAME})\((.*)$", re.DOTALL)


FINAL_ACTIONS = frozenset({"complete", "finish", "finalanswer", "final", "answer", "respond", "respondtouser",
                           "replytouser", "attemptcompletion", "taskcomplete", "done", "submitanswer",
                           "returnanswer"})
"""Names (lower case, `_`, `-` and spaces dropped) harnesses give the action that ends a run with the
agent's answer (ReAct's `Finish[...]`, smolagents' `final_answer`, Cline's `attempt_completion`, ...)."""
ANSWER_ARGS = frozenset({"response", "answer", "final_answer", "result", "output", "text", "message", "content",
                         "reply", "summary", "reason", "_raw"})
"""Arguments of a final-answer action that hold the answer's text."""
ANSWER_EXTRAS = frozenset({"status", "success", "thought", "thoughts", "confidence"})
"""Other arguments a final-answer action may carry beside its text (none of them acts on anything)."""


@dataclass(frozen=True)
class Call:
    """A tool call read from an action string."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Message:
    """Text for the user (a final answer, or any text that is no call)."""

    text: str


def literal(text: str) -> Any:
    """A JSON or Python literal (`{'a': True}`), or None when the text is neither (or too long)."""
    text = text.strip()
    if not text or len(text) > MAX_ARGS_CHARS:
        return None
    try:
        return json.loads(text, strict=False)  # a raw newline inside a string: how models write bodies
    except (ValueError, RecursionError):
        pass
    for attempt in (text, escaped_newlines(text)):
        try:
            return ast.literal_eval(attempt)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            continue
    return None


def escaped_newlines(text: str) -> str:
    """The text with each line break inside a quoted string written as `\\n` (a model's e-mail body in a
    Python literal); one pass over the text."""
    out, quote, escaped = [], "", False
    for char in text:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            elif char == "\n":
                out.append("\\n")
                continue
        elif char in "'\"":
            quote = char
        out.append(char)
    return "".join(out)


def tool_shaped(name: str) -> bool:
    """Whether a name can only be an identifier (`SendEmail`, `send_email`), not a word."""
    return _TOOL_SHAPED.fullmatch(name) is not None


def _object_then_braces(text: str) -> Any:
    """A JSON object followed by nothing but stray closing braces (`{"a": 1}\n  }\n}`: a
    model that closed more than it opened), else None."""
    if not text.startswith("{") or len(text) > MAX_ARGS_CHARS:
        return None
    try:
        value, end = json.JSONDecoder(strict=False).raw_decode(text)
    except (ValueError, RecursionError):
        return None
    return value if not text[end:].replace("}", "").strip() else None


def _as_args(value: dict[str, Any] | list[Any]) -> dict[str, Any]:
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    return {"_raw": value}


def _keyword_args(inner: str) -> dict[str, Any]:
    """`k=v, ...` or `'k': v` or `k: 'v'` inside parentheses; anything else whole under `_raw`."""
    inner = inner.strip()
    if not inner:
        return {}
    if len(inner) <= MAX_ARGS_CHARS:
        try:
            call = ast.parse(f"f({escaped_newlines(inner)})", mode="eval").body
            if isinstance(call, ast.Call) and call.keywords and not call.args:
                return {kw.arg or "_kwargs": ast.literal_eval(kw.value) for kw in call.keywords}
            if isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords:
                value = ast.literal_eval(call.args[0])
                return value if isinstance(value, dict) else {"_raw": value}
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            pass
        mapping = literal("{" + _KWARG.sub(lambda m: f' "{m.group(1)}":', inner) + "}")
        if isinstance(mapping, dict):
            return {str(k): v for k, v in mapping.items()}
    return {"_raw": inner}


def _autogpt(text: str) -> Call | None:
    """`"command": {"name": "Tool", "args": {...}}` (AutoGPT's reply shape), or a shell line as the
    command (`"command": "./run.sh"`), else None."""
    if _SHELL_COMMAND.match(text):
        value = _object_then_braces(text if text.startswith("{") else "{" + text)
        command = value.get("command") if isinstance(value, dict) else None
        return Call("execute_code", {"language": "bash", "command": command}) if isinstance(command, str) else None
    if not _AUTOGPT.match(text):
        return None
    value = _object_then_braces(text if text.startswith("{") else "{" + text)
    command = value.get("command") if isinstance(value, dict) else None
    if not isinstance(command, dict) or not isinstance(command.get("name"), str):
        return None
    args = command.get("args")
    return Call(command["name"], _as_args(args) if isinstance(args, (dict, list)) else {})


def _keyed(text: str) -> Call | None:
    """`{"Tool": {json}}`: a JSON object whose one key is a tool-shaped name and whose value is the
    arguments, else None."""
    if not text.startswith("{"):
        return None
    value = literal(text)
    if not isinstance(value, dict) or len(value) != 1:
        return None
    name, args = next(iter(value.items()))
    if isinstance(name, str) and tool_shaped(name) and isinstance(args, (dict, list)):
        return Call(name, _as_args(args))
    return None


def _fenced(match: re.Match[str]) -> Call:
    language, code = match.group(1).lower(), match.group(2).strip()
    if language in _SHELLS or not language:
        return Call("execute_code", {"language": language or "bash", "command": code})
    return Call("execute_code", {"language": language, "code": code})


def _ui(text: str) -> Call | None:
    found = _ACTION_IS.match(text)
    if found:
        value = literal(found.group(1))
        if isinstance(value, dict) and isinstance(value.get("action_type"), str):
            return Call(value["action_type"], {k: v for k, v in value.items() if k != "action_type"})
        return None
    found = _ELEMENT_PATH.match(text)
    if found and text.startswith("<"):
        targets = [t.strip("<> ") for t in re.findall(r"<[^<>\n]{1,200}>", found.group(1))]
        detail = found.group(2).strip()
        return Call("click", {"target": " > ".join(targets), **({"detail": detail} if detail else {})})
    found = _UI.match(text) or _UI_ACTS.match(text)
    if not found:
        return None
    verb, rest = re.sub(r"\s+", "_", found.group(1).lower()), found.group(2).strip()
    if verb in ("scroll", "swipe") and rest.lower() in _DIRECTIONS:
        return Call(verb, {"direction": rest.lower()})
    targets = _UI_TARGET.findall(rest)
    if not targets and rest:
        return None  # "Open the door for me": words, not a UI element
    words = [t.strip("<>'\" ") for t in targets]
    key = "query" if verb in ("search", "type", "input") else "target"
    return Call(verb, {key: " > ".join(words)} if words else {})


def final_answer(call: Call) -> Message | None:
    """The answer a final-answer action carries (`Complete{"response": "..."}`), else None: its name
    is one of FINAL_ACTIONS and its arguments are the answer's text (ANSWER_ARGS) and nothing but
    ANSWER_EXTRAS beside it."""
    if re.sub(r"[^a-z0-9]", "", call.tool.lower()) not in FINAL_ACTIONS:
        return None
    if not set(call.args) <= ANSWER_ARGS | ANSWER_EXTRAS:
        return None
    parts = []
    for key in (k for k in call.args if k in ANSWER_ARGS):
        value = call.args[key]
        if isinstance(value, list) and len(value) == 1:
            value = value[0]  # `Finish['the answer']`
        parts.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))
    return Message("\n".join(p.strip() for p in parts if p.strip()))


def parse_action(action: str | None, offered: tuple[str, ...] = ()) -> Call | Message | None:
    """The call or message an action string holds (None for an empty action). `offered`: the
    actions the environment listed by name; an action equal to one of them is a call of it. A
    final-answer action (`final_answer`) is the message it carries."""
    parsed = _parse(action, offered)
    if isinstance(parsed, Call):
        return final_answer(parsed) or parsed
    return parsed


def _parse(action: str | None, offered: tuple[str, ...]) -> Call | Message | None:
    text = (action or "").strip()
    if not text:
        return None
    final = _FINAL.match(text)
    if final:
        return Message(text[final.end():].strip())
    command = _autogpt(text)
    if command is not None:
        return command
    keyed = _keyed(text)
    if keyed is not None:
        return keyed
    label = _LABELLED_FENCE.match(text)
    if label and _FENCE.match(text, label.end()):
        return _fenced(_FENCE.match(text, label.end()))  # type: ignore[arg-type]
    for pattern in (_INPUT_LINE, _BRACED, _COLON):
        found = pattern.match(text)
        if not found:
            continue
        body = found.group(2).strip()
        value = literal(body)
        if value is None and text.startswith("{") and body.endswith("}"):
            value = literal(body[:-1])  # `{Tool: {...}}`: the outer brace closes the call
        if value is None:
            value = _object_then_braces(body)
        if isinstance(value, dict) or (isinstance(value, list) and pattern is not _COLON):
            return Call(found.group(1), _as_args(value))
        if pattern is _INPUT_LINE or (value is None and tool_shaped(found.group(1)) and body.startswith("{")):
            return Call(found.group(1), {"_raw": body})  # `Tool: {"amount": 10000/2800.45}`: no literal
    found = _CALL.match(text)
    if found and "\n" not in found.group(1):
        return Call(found.group(1), _keyword_args(found.group(2)))
    found = _OPEN_CALL.match(text)
    if found and tool_shaped(found.group(1)):  # `NewBlog(content="..."`: the closing parenthesis missing
        args = _keyword_args(found.group(2))
        if "_raw" not in args:
            return Call(found.group(1), args)
    found = _BRACKETS.match(text)
    if found:
        value = literal("[" + found.group(2) + "]")
        return Call(found.group(1), {"_raw": value if value is not None else found.group(2)})
    found = _FENCE.match(text)
    if found:
        return _fenced(found)
    lowered = text.lower().rstrip(".")
    for name in offered:
        if lowered == name.lower():
            return Call(offered_tool(name), {})
    return _ui(text) or Message(text)


def offered_tool(action: str) -> str:
    """The tool name of an action the environment offered by name: `check the current temperature`
    -> `check_the_current_temperature`."""
    return re.sub(r"[^a-z0-9]+", "_", action.lower()).strip("_")[:120] or "action"


_OFFERED = re.compile(r"Available\s+actions?\s*:\s*([^\n]{0,2000})", re.IGNORECASE)


def offered_actions(text: str) -> tuple[str, ...]:
    """The actions a harness text offers by name ("Available actions: check the temperature, turn
    on the air conditioner"), in order; JSON templates (`{"action_type": ...}`) are not names."""
    found: list[str] = []
    for match in _OFFERED.finditer(text or ""):
        for part in match.group(1).split(","):
            name = part.strip().strip(".")
            if name and not name.startswith("{") and len(name) <= 120:
                found.append(name)
    return tuple(dict.fromkeys(found))
