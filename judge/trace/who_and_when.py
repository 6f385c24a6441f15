"""Import the Who&When multi-agent failure logs (Hand-Crafted: Magentic-One; Algorithm-Generated:
CaptainAgent teams) as our traces, one per log.

**The mapping.** Each `history` entry is one event, in order: event id `s<step>` and turn `<step>`,
where step is the 0-based index the human labels use (`mistake_step`), so a first divergence's
turn is directly a predicted mistake step. The human's question (role `human`) is a `user` event;
every other entry is an `assistant` event whose text starts with the speaker in brackets:
`[Orchestrator (-> WebSurfer)] Please search ...`, `[Computer_terminal] exitcode: 0 ...`. The
agent is that label up to ` (` (`agent_of`), which is how `mistake_agent` names it.

**Code runs as tool calls** (`code_as_tools=True`, the default): a terminal's entry
(`Computer_terminal`, `ComputerTerminal`) right after an agent message holding a fenced code block
is the result of running that code. The agent's step then also gets a `tool-call` (`execute_code`,
args `{"code": ...}`, id `s<step>.call`) after its text, and the terminal's step is the
`tool-result` (id `s<step>`): `error` for a non-zero `exitcode:`, `timeout` for exit code 124 or a
"timed out" message, else `ok`; its result is the terminal's text. A terminal entry with no code
before it stays an assistant event.

**What is kept as header metadata, never as events**: the labels (`mistake_agent`,
`mistake_step` as an integer, `mistake_reason`, `mistake_type` when given), the `question`,
`ground_truth`, `level`, `subset` (`hand-crafted` / `algorithm-generated`), and `agents` (every
agent that speaks, in order of first appearance). `task_id` is the GAIA/AssistantBench question id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError
from judge.model.limits import depth_message, read_capped
from judge.trace.build import (
    ImportSummary,
    atomic_import,
    check_text_file,
    refuse_input,
    safe_name,
    write_trace,
)

SYSTEMS = {"hand-crafted": "magentic-one", "algorithm-generated": "captain-agent"}
TERMINALS = ("Computer_terminal", "ComputerTerminal")
_CODE = re.compile(r"```[\w+-]*\n(.*?)```", re.DOTALL)
_EXIT = re.compile(r"exitcode:\s*(-?\d+)")


def agent_of(label: str) -> str:
    """`Orchestrator (-> WebSurfer)` -> `Orchestrator`; `WebSurfer` -> `WebSurfer`."""
    return label.split(" (", 1)[0].strip()


def subset_of(path: Path, record: dict[str, Any]) -> str:
    folder = path.parent.name.lower()
    if folder in SYSTEMS:
        return folder
    return "algorithm-generated" if "system_prompt" in record else "hand-crafted"


def _step_int(value: Any, file: str) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise JudgeInputError(f"not a step index: {value!r}", file=file, field="mistake_step") from None


def _terminal_status(text: str) -> str:
    code = _EXIT.search(text)
    if (code and code.group(1) == "124") or "timed out" in text.lower():
        return "timeout"
    return "error" if code and code.group(1) != "0" else "ok"


def log_trace(record: Any, path: Path, *, scenario: str | None = None,
              code_as_tools: bool = True) -> tuple[dict, list[dict]]:
    """One Who&When log -> (run header, events)."""
    file = str(path)
    if not isinstance(record, dict):
        raise JudgeInputError("expected a JSON object (a Who&When log)", file=file)
    history = record.get("history")
    if not isinstance(history, list):
        raise JudgeInputError("required field is missing (a list)", file=file, field="history")
    subset = subset_of(path, record)
    stem = path.stem
    run_id = f"{subset}-{stem}"
    events: list[dict[str, Any]] = []
    agents: list[str] = []
    for step, message in enumerate(history):
        if not isinstance(message, dict):
            raise JudgeInputError("a history entry must be a JSON object", file=file, field=f"history[{step}]")
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)
        role = message.get("role")
        label = message.get("name") or role
        if not isinstance(label, str) or not label:
            raise JudgeInputError("required field is missing", file=file, field=f"history[{step}].role")
        if role == "human":
            events.append({"id": f"s{step}", "turn": step, "kind": "user", "text": text})
            continue
        agent = agent_of(label)
        if agent not in agents:
            agents.append(agent)
        previous = events[-1] if events else None
        if (code_as_tools and label in TERMINALS and previous is not None and previous["kind"] == "assistant"
                and previous["turn"] == step - 1):
            blocks = _CODE.findall(history[step - 1].get("content") or "")
            if blocks:
                call_id = f"s{step - 1}.call"
                events.append({"id": call_id, "turn": step - 1, "kind": "tool-call", "call_id": call_id,
                               "tool": "execute_code", "args": {"code": "\n".join(blocks)}})
                events.append({"id": f"s{step}", "turn": step, "kind": "tool-result", "call_id": call_id,
                               "tool": "execute_code", "status": _terminal_status(text), "result": text})
                continue
        events.append({"id": f"s{step}", "turn": step, "kind": "assistant", "text": f"[{label}] {text}"})
    fields = {"subset": subset, "stem": stem, "run_id": run_id, "question_id": record.get("question_ID")}
    if scenario:
        try:
            scenario_id = scenario.format(**fields)
        except (KeyError, IndexError, ValueError) as exc:
            raise JudgeInputError(f"cannot fill the scenario template {scenario!r}: {exc}") from None
    else:
        scenario_id = f"ww-{run_id}"
    metadata = {
        "format": "who-and-when", "subset": subset, "question": record.get("question"),
        "ground_truth": record.get("ground_truth"), "level": record.get("level"),
        "mistake_agent": record.get("mistake_agent"),
        "mistake_step": _step_int(record.get("mistake_step"), file),
        "mistake_reason": record.get("mistake_reason"), "mistake_type": record.get("mistake_type"),
        "is_correct": record.get("is_correct", record.get("is_corrected")), "agents": agents,
    }
    header = {"kind": "run", "run_id": run_id, "scenario": scenario_id,
              "task_id": record.get("question_ID"), "agent": {"name": SYSTEMS[subset]},
              "metadata": {k: v for k, v in metadata.items() if v is not None}}
    return header, events


def _numeric_key(path: Path) -> tuple:
    return (path.parent.name, int(path.stem) if path.stem.isdigit() else 1 << 30, path.stem)


def log_files(src: Path) -> list[Path]:
    if src.is_file():
        return [src]
    if not src.is_dir():
        raise JudgeInputError("no such file or folder", file=str(src))
    files = sorted((p for p in src.rglob("*.json") if p.is_file()), key=_numeric_key)
    if not files:
        raise JudgeInputError("no Who&When logs (*.json) in this folder", file=str(src))
    return files


@atomic_import
def import_who_and_when(src: str | Path, out: str | Path, *, scenario: str | None = None,
                        code_as_tools: bool = True) -> ImportSummary:
    """Every log under `src` (a folder, searched recursively, or one file) -> `out/<subset>/<n>.jsonl`.
    `scenario` may hold {subset}, {stem}, {run_id}, {question_id}; default `ww-<subset>-<n>`."""
    src, out = Path(src), Path(out)
    if out.exists() and not out.is_dir():
        raise JudgeInputError("-o must be a folder", file=str(out))
    summary = ImportSummary()
    logs = log_files(src)
    for path in logs:
        check_text_file(path)
        try:
            record = json.loads(read_capped(path).decode("utf-8"))
        except json.JSONDecodeError as exc:
            raise JudgeInputError(f"not JSON: {exc.msg} at column {exc.colno}", file=str(path),
                                  line=exc.lineno) from None
        except RecursionError:
            raise JudgeInputError(depth_message(), file=str(path)) from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise JudgeInputError(f"cannot read: {exc}", file=str(path)) from None
        header, events = log_trace(record, path, scenario=scenario, code_as_tools=code_as_tools)
        target = out / header["metadata"]["subset"] / (safe_name(path.stem) + ".jsonl")
        refuse_input(target, *logs)
        write_trace(target, header, events)
        summary.add(target, events)
    return summary
