"""Import OpenAI chat-completions message lists (one run, or a file of many runs) as our traces.

**Shapes read.** A file is JSONL when its first non-empty line is a whole JSON value, else one JSON
document. One run: a list of messages (`{"role": ...}` each, as a JSON list or one per JSONL line),
or an object with `messages` (optionally `run_id`/`id`, `scenario`, `task_id`, `model`, `agent`,
`metadata`, and `choices`: a chat-completions response whose first choice's message is appended).
Many runs: a JSON list of such objects, or JSONL with one per line (streamed: memory holds one
run), and tau-bench trajectories (`task_id`, `trial`, `reward`, `info`, `traj`).
One run -> OUT is the trace file; many runs -> OUT is a folder with `<run_id>.jsonl` per run.

**The mapping.** `system`/`developer` messages become no event (their SHA-256 is kept in the run
header's `metadata.system_sha256`); `user` -> `user`; `assistant` -> `assistant` (its text,
prefixed `[name] ` when the message has a `name`) then one `tool-call` per entry of `tool_calls`
(JSON-string `arguments` parsed; a non-object kept under `_raw`; legacy `function_call` too);
`tool` (or legacy `function`) -> `tool-result` for that call id. A result's status is `error`
when the message says so (`status`, `is_error`) or its content starts with `Error` (tau-bench's
tools answer `Error: ...`), else `ok`; content that is JSON is parsed.

**The turn rule.** `turns="user"` (default): turn 0 until the first user message, then a new turn
at each user message; everything the agent does in answer shares that turn. `turns="step"`: also
a new turn at each assistant message that follows a tool result (each further model call).

**tau-bench**: `run_id` `task-<task_id>-trial-<trial>`, header `task_id`, and `metadata` {format,
trial, reward, r_actions, source (what ended the episode), user_id}.
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError
from judge.model.limits import depth_message, read_capped
from judge.trace.build import (
    EventBuilder,
    ImportSummary,
    atomic_import,
    check_text_file,
    maybe_json,
    refuse_input,
    safe_name,
    write_trace,
)

TURN_RULES = ("user", "step")
_SYSTEM_ROLES = ("system", "developer")


class _Where:
    """Names the record an error is about: file, line (JSONL) and field path."""

    def __init__(self, file: str, line: int | None, prefix: str) -> None:
        self.file, self.line, self.prefix = file, line, prefix

    def error(self, field: str, message: str) -> JudgeInputError:
        sep = "" if field.startswith("[") else "."
        path = f"{self.prefix}{sep}{field}" if self.prefix and field else (self.prefix or field or None)
        return JudgeInputError(message, file=self.file, line=self.line, field=path)


def _text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    out.append(part["text"])
                elif isinstance(part.get("content"), str):
                    out.append(part["content"])
                else:
                    out.append(f"[{part.get('type', 'part')}]")
        return "\n".join(out)
    return json.dumps(content, ensure_ascii=False, default=str)


def _status(message: dict[str, Any], text: str) -> str:
    status = message.get("status")
    if status in ("ok", "error", "timeout"):
        return status
    if message.get("is_error") is True:
        return "error"
    head = text.lstrip()[:9].lower()
    return "error" if head.startswith("error") else "ok"


def messages_to_events(messages: Any, where: _Where, *, turns: str = "user") -> tuple[list[dict], dict]:
    """Events of one run's messages, and header metadata learnt from them (system_sha256)."""
    if turns not in TURN_RULES:
        raise JudgeInputError(f"unknown turn rule {turns!r} (expected one of {', '.join(TURN_RULES)})")
    if not isinstance(messages, list):
        raise where.error("messages", "expected a list of chat messages")
    b = EventBuilder()
    system = hashlib.sha256()
    has_system = False
    after_tool = False
    for j, m in enumerate(messages):
        here = f"[{j}]"
        if not isinstance(m, dict):
            raise where.error(here, "a chat message must be a JSON object")
        role = m.get("role")
        if not isinstance(role, str):
            raise where.error(f"{here}.role", "required field is missing")
        if role in _SYSTEM_ROLES:
            system.update(_text(m.get("content")).encode("utf-8") + b"\0")
            has_system = True
        elif role == "user":
            b.next_turn()
            b.add("user", text=_text(m.get("content")))
            after_tool = False
        elif role == "assistant":
            if turns == "step" and after_tool:
                b.next_turn()
            after_tool = False
            _assistant(b, m, where, here)
        elif role in ("tool", "function"):
            _tool_message(b, m, where, here)
            after_tool = True
        else:
            raise where.error(f"{here}.role", f"unknown role {role!r} (expected system, developer, "
                              "user, assistant, tool or function)")
    meta = {"system_sha256": system.hexdigest()} if has_system else {}
    return b.events, meta


def _assistant(b: EventBuilder, m: dict[str, Any], where: _Where, here: str) -> None:
    text = _text(m.get("content"))
    if not text and isinstance(m.get("refusal"), str):
        text = m["refusal"]
    if text:
        name = m.get("name")
        b.add("assistant", text=f"[{name}] {text}" if isinstance(name, str) and name else text)
    calls = m.get("tool_calls") or []
    if not isinstance(calls, list):
        raise where.error(f"{here}.tool_calls", "expected a list")
    for k, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise where.error(f"{here}.tool_calls[{k}].function.name", "required field is missing")
        call_id = call.get("id")
        b.call(fn["name"], fn.get("arguments"), call_id if isinstance(call_id, str) and call_id else None)
    legacy = m.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        b.call(legacy["name"], legacy.get("arguments"))


def _tool_message(b: EventBuilder, m: dict[str, Any], where: _Where, here: str) -> None:
    content = m.get("content")
    text = _text(content)
    call_id = m.get("tool_call_id")
    if m.get("role") == "function" and not call_id:
        # Legacy function messages name the function, not a call: the oldest pending call of it.
        name = m.get("name")
        pending = [c for c in b.pending() if b.events and _tool_of(b, c) == name]
        if not pending:
            raise where.error(f"{here}.name", f"function result for {name!r}, which no earlier call issued")
        call_id = pending[0]
    if not isinstance(call_id, str) or not call_id:
        raise where.error(f"{here}.tool_call_id", "required field is missing")
    if not b.has_call(call_id):
        raise where.error(f"{here}.tool_call_id", f"tool result for call id {call_id!r}, which no "
                          "earlier assistant message issued")
    result = maybe_json(content) if isinstance(content, str) else (text if content is not None else None)
    if b.result(call_id, _status(m, text), result) is None:
        raise where.error(f"{here}.tool_call_id", f"a second result for call id {call_id!r}")


def _tool_of(b: EventBuilder, given_id: str) -> str | None:
    for event in reversed(b.events):
        if event["kind"] == "tool-call" and event["call_id"].split("#")[0] == given_id:
            return event["tool"]
    return None


# ------------------------------------------------------------------ runs


def _is_tau(run: dict[str, Any]) -> bool:
    return "traj" in run and "task_id" in run


def _run_fields(run: Any, where: _Where, index: int, stem: str) -> dict[str, Any]:
    """A run object -> {messages, run_id, task_id, metadata, agent, scenario}."""
    if isinstance(run, list):
        return {"messages": run, "run_id": stem if index == 0 else f"{stem}-{index}"}
    if not isinstance(run, dict):
        raise where.error("", "a run must be a JSON object or a list of messages")
    if _is_tau(run):
        info = run.get("info") or {}
        reward_info = info.get("reward_info") or {}
        task = info.get("task") or {}
        meta = {"format": "tau-bench", "trial": run.get("trial"), "reward": run.get("reward"),
                "r_actions": (reward_info.get("info") or {}).get("r_actions"),
                "source": info.get("source"), "user_id": task.get("user_id")}
        task_id = run["task_id"]
        trial = run.get("trial")
        run_id = f"task-{task_id}" + (f"-trial-{trial}" if trial is not None else "")
        return {"messages": run["traj"], "run_id": run_id, "task_id": str(task_id),
                "trial": trial, "metadata": {k: v for k, v in meta.items() if v is not None}}
    if "messages" not in run:
        raise where.error("messages", "required field is missing (a run holds `messages`, or "
                          "tau-bench's `traj`)")
    messages = run["messages"]
    choices = run.get("choices")
    if isinstance(messages, list) and isinstance(choices, list) and choices:
        first = choices[0]
        if isinstance(first, dict) and isinstance(first.get("message"), dict):
            messages = [*messages, first["message"]]
    run_id = run.get("run_id") or run.get("id") or (stem if index == 0 else f"{stem}-{index}")
    agent = run.get("agent") if isinstance(run.get("agent"), dict) else None
    if agent is None and isinstance(run.get("model"), str):
        agent = {"model": run["model"]}
    metadata = run.get("metadata") if isinstance(run.get("metadata"), dict) else None
    task_id = run.get("task_id")
    return {"messages": messages, "run_id": str(run_id), "task_id": None if task_id is None else str(task_id),
            "scenario": run.get("scenario"), "agent": agent, "metadata": metadata}


def scenario_for(template: str | None, fields: dict[str, Any], stem: str, where: _Where) -> str:
    """`--scenario` may hold {task_id}, {trial}, {run_id}, {index}, {stem}; without it: the run's
    own `scenario`, else `task-<task_id>`, else the file's stem."""
    if template:
        values = {"task_id": fields.get("task_id"), "trial": fields.get("trial"), "run_id": fields.get("run_id"),
                  "index": fields.get("index"), "stem": stem}
        try:
            names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
            missing = sorted(n for n in names if values.get(n) is None)
            if missing:
                raise where.error("", f"the scenario template {template!r} needs {missing[0]}, which this run "
                                  "does not have")
            return template.format(**values)
        except (KeyError, IndexError, ValueError) as exc:
            raise JudgeInputError(f"cannot fill the scenario template {template!r}: {exc}") from None
    if isinstance(fields.get("scenario"), str) and fields["scenario"]:
        return fields["scenario"]
    if fields.get("task_id") is not None:
        return f"task-{fields['task_id']}"
    return stem


def _records(path: Path) -> tuple[str, Iterator[tuple[int | None, Any]]]:
    """('jsonl', lines) or ('json', the document's top value)."""
    try:
        handle = path.open("r", encoding="utf-8")
    except OSError as exc:
        raise JudgeInputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    with handle:
        first = ""
        try:
            for first in handle:
                if first.strip():
                    break
            try:
                json.loads(first)
                jsonl = True
            except json.JSONDecodeError:
                jsonl = False
        except UnicodeDecodeError:
            raise JudgeInputError("not UTF-8 text", file=str(path)) from None
    if not first.strip():
        raise JudgeInputError("empty file: expected chat messages or runs", file=str(path))
    if jsonl:
        return "jsonl", _jsonl(path)
    try:
        doc = json.loads(read_capped(path).decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise JudgeInputError(f"not JSON: {exc.msg} at column {exc.colno}", file=str(path),
                              line=exc.lineno) from None
    except RecursionError:
        raise JudgeInputError(depth_message(), file=str(path)) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # over the size limit, an over-long integer
        raise JudgeInputError(f"cannot read: {exc}", file=str(path)) from None
    return "json", iter([(None, doc)])


def _jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    with path.open("r", encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise JudgeInputError(f"not JSON: {exc.msg} at column {exc.colno}", file=str(path),
                                      line=lineno) from None
            except RecursionError:
                raise JudgeInputError(depth_message(), file=str(path), line=lineno) from None
            except ValueError as exc:  # an integer of more than 4,300 digits
                raise JudgeInputError(f"not JSON: {exc}", file=str(path), line=lineno) from None


def iter_runs(path: Path) -> tuple[bool, Iterator[tuple[_Where, Any, int]]]:
    """(many, runs): whether the file holds many runs, and each run with where it came from. A
    file with a single JSON value is a document, whatever its line breaks."""
    kind, records = _records(path)
    file = str(path)
    first = next(records)
    second = next(records, None) if kind == "jsonl" else None
    if second is None:
        return _document(first[1], file)
    if isinstance(first[1], dict) and "role" in first[1]:
        messages = []
        for lineno, record in _chain(first, _chain(second, records)):
            if not (isinstance(record, dict) and "role" in record):
                raise JudgeInputError("a JSONL file of messages holds a line that is not a message",
                                      file=file, line=lineno)
            messages.append(record)
        return False, iter([(_Where(file, None, "messages"), messages, 0)])

    def runs() -> Iterator[tuple[_Where, Any, int]]:
        for i, (lineno, record) in enumerate(_chain(first, _chain(second, records))):
            yield _Where(file, lineno, ""), record, i
    return True, runs()


def _document(doc: Any, file: str) -> tuple[bool, Iterator[tuple[_Where, Any, int]]]:
    if isinstance(doc, list) and doc and all(isinstance(m, dict) and "role" in m for m in doc):
        return False, iter([(_Where(file, None, "messages"), doc, 0)])
    if isinstance(doc, list):
        return True, ((_Where(file, None, f"[{i}]"), run, i) for i, run in enumerate(doc))
    if isinstance(doc, dict) and isinstance(doc.get("runs"), list):
        return True, ((_Where(file, None, f"runs[{i}]"), run, i) for i, run in enumerate(doc["runs"]))
    return False, iter([(_Where(file, None, ""), doc, 0)])


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


def run_trace(run: Any, where: _Where, index: int, stem: str, *, scenario: str | None = None,
              turns: str = "user") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One run -> (run header, events)."""
    fields = _run_fields(run, where, index, stem)
    fields["index"] = index
    msg_where = _Where(where.file, where.line,
                       ".".join(p for p in (where.prefix, "traj" if isinstance(run, dict) and _is_tau(run)
                                                  else ("messages" if isinstance(run, dict) else "")) if p))
    events, learnt = messages_to_events(fields["messages"], msg_where, turns=turns)
    metadata = {**(fields.get("metadata") or {}), **learnt} or None
    header = {"kind": "run", "run_id": fields["run_id"], "scenario": scenario_for(scenario, fields, stem, where),
              "task_id": fields.get("task_id"), "agent": fields.get("agent"), "metadata": metadata}
    return header, events


@atomic_import
def import_openai(path: str | Path, out: str | Path, *, scenario: str | None = None,
                  turns: str = "user") -> ImportSummary:
    """Import a message list or a file of runs. One run -> `out` is the trace file (or, when `out`
    is an existing folder, `out/<run_id>.jsonl`); many -> `out` is a folder of traces."""
    path, out = Path(path), Path(out)
    refuse_input(out, path)
    check_text_file(path)
    many, runs = iter_runs(path)
    summary = ImportSummary()
    if many and out.exists() and not out.is_dir():
        raise JudgeInputError("the input holds many runs: -o must be a folder", file=str(out))
    stem = path.stem
    seen: set[str] = set()
    for where, run, index in runs:
        header, events = run_trace(run, where, index, stem, scenario=scenario, turns=turns)
        name = safe_name(header["run_id"]) + ".jsonl"
        if many or out.is_dir():
            if name in seen:
                raise where.error("run_id", f"two runs would both be written to {name!r}")
            seen.add(name)
            target = out / name
        else:
            target = out
        refuse_input(target, path)
        write_trace(target, header, events)
        summary.add(target, events)
    return summary
