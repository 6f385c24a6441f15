"""The agents `judge run` drives, one step at a time: messages in, a Reply out (judge.suite.drive.actions).

`--agent` names one of three kinds:
- a **command** (`python examples/agents/agent.py`): run once per step in a session (and process
  group) of its own, the JSON messages on stdin, the action on stdout (the adapter protocol of
  `judge continue`); when it answers, times out or meets Ctrl-C its whole group is killed, and so is
  any process it left behind that still holds its output (a `setsid` child: judge.suite.drive.child).
  It also finds in its environment JUDGE_TOOLS_FILE (a JSON file of the tools it is given, OpenAI
  function schemas), JUDGE_RUN_SEED, JUDGE_RUN_ID, JUDGE_TURN and JUDGE_RUN_MODE (`record`: run the
  tools yourself and report their results; `replay`: judge answers them);
- a **Python entry point** `module:function` or `path/to/file.py:function`: called in this process
  with the messages (and `context=`, the same facts as a dict, when it takes a `context` argument);
  a call that does not return within the timeout makes the run inconclusive (the thread is left
  behind: Python cannot stop it);
- an **OpenAI-compatible chat endpoint** `http(s)://HOST/v1` with `--model`: asked with the tools,
  its tool calls answered from the fixtures (the key in $OPENAI_API_KEY, if the server needs one).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.errors import UsageError
from judge.suite.drive.actions import MAX_ANSWER_BYTES, AgentFailure, Reply, parse_reply
from judge.suite.drive.child import exchange

ENTRY_POINT = re.compile(r"^(?P<module>[A-Za-z_][\w.]*|[^\s:]+\.py):(?P<function>[A-Za-z_]\w*)$")


@dataclass
class StepContext:
    """What an agent is told besides the messages."""

    tools: list[dict[str, Any]]
    tools_file: str | None
    seed: int
    run_id: str
    turn: int
    mode: str = "replay"

    def as_dict(self) -> dict[str, Any]:
        return {"tools": self.tools, "seed": self.seed, "run_id": self.run_id, "turn": self.turn, "mode": self.mode}

    def environment(self) -> dict[str, str]:
        env = {"JUDGE_RUN_SEED": str(self.seed), "JUDGE_RUN_ID": self.run_id, "JUDGE_TURN": str(self.turn),
               "JUDGE_RUN_MODE": self.mode}
        if self.tools_file:
            env["JUDGE_TOOLS_FILE"] = self.tools_file
        return env


@dataclass
class CommandAgent:
    """A command run once per step, in its own process group."""

    argv: list[str]
    name: str
    kind: str = "command"
    env: dict[str, str] = field(default_factory=dict)

    def act(self, messages: list[dict[str, Any]], context: StepContext, timeout: float) -> Reply:
        shown = f"agent `{' '.join(self.argv)}`"
        try:
            proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True, env={**os.environ, **self.env, **context.environment()})
        except FileNotFoundError:
            raise AgentFailure(f"agent command not found: {self.argv[0]!r}") from None
        except OSError as exc:
            raise AgentFailure(f"{shown} could not start: {exc.strerror}") from None
        done = exchange(proc, json.dumps(messages, ensure_ascii=False).encode(), timeout, MAX_ANSWER_BYTES)
        left = _left_behind(done.left_behind)
        if done.timed_out:
            raise AgentFailure(f"{shown} hung: no answer within {round(timeout, 1):g} s; it was killed with its "
                               f"process group{left}")
        if done.out is None:
            raise AgentFailure(f"{shown} printed more than {MAX_ANSWER_BYTES >> 20} MiB for one action{left}")
        if proc.returncode != 0:
            last = (done.err.decode("utf-8", "replace").strip().splitlines() or ["nothing on stderr"])[-1]
            raise AgentFailure(f"{shown} crashed: exited {proc.returncode}: {last[:300]}{left}")
        try:
            return parse_reply(done.out, shown)
        except AgentFailure as failure:
            raise AgentFailure(failure.reason + left) from None


def _left_behind(processes: list[str]) -> str:
    """What a failure adds when the agent left processes holding its output (they were killed)."""
    if not processes:
        return ""
    shown = ", ".join(processes[:3]) + (", ..." if len(processes) > 3 else "")
    return (f"; {len(processes)} process(es) it left behind held its output open and were killed "
            f"(pid {shown})")


@dataclass
class EntryPointAgent:
    """A Python function called in this process: `function(messages[, context=...]) -> action`."""

    function: Callable[..., Any]
    name: str
    kind: str = "python"

    def act(self, messages: list[dict[str, Any]], context: StepContext, timeout: float) -> Reply:
        shown = f"agent {self.name}"
        box: dict[str, Any] = {}
        takes_context = _takes_context(self.function)

        def call() -> None:
            try:
                box["value"] = (self.function(messages, context=context.as_dict()) if takes_context
                                else self.function(messages))
            except BaseException as exc:  # noqa: BLE001 - any failure of the agent is its run's reason
                box["error"] = exc

        worker = threading.Thread(target=call, daemon=True, name=f"agent-{self.name}")
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            raise AgentFailure(f"{shown} hung: no answer within {timeout:g} s")
        if "error" in box:
            exc = box["error"]
            raise AgentFailure(f"{shown} crashed: {type(exc).__name__}: {str(exc)[:300]}")
        return parse_reply(box.get("value"), shown)


def _takes_context(function: Callable[..., Any]) -> bool:
    try:
        return "context" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def load_entry_point(spec: str) -> Callable[..., Any]:
    """The function an entry point names (`module:function` or `path/to/file.py:function`)."""
    match = ENTRY_POINT.match(spec)
    if match is None:
        raise UsageError(f"not an entry point: {spec!r} (expected module:function)", field="--agent")
    module_name, function_name = match["module"], match["function"]
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise UsageError(f"no such file: {module_name}", field="--agent")
            loader = importlib.util.spec_from_file_location(f"judge_agent_{path.stem}", path)
            module = importlib.util.module_from_spec(loader)  # type: ignore[arg-type]
            sys.path.insert(0, str(path.resolve().parent))  # its own imports beside it
            loader.loader.exec_module(module)  # type: ignore[union-attr]
        else:
            if "" not in sys.path and os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(module_name)
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - an agent that cannot be imported is bad input
        raise UsageError(f"cannot import the agent {spec!r}: {type(exc).__name__}: {exc}", field="--agent") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise UsageError(f"{module_name} has no function {function_name!r}", field="--agent")
    return function


def make_agent(spec: str, *, model: str | None = None, name: str | None = None) -> Any:
    """The agent `--agent SPEC` names: an endpoint URL, an entry point, else a command."""
    spec = spec.strip()
    if not spec:
        raise UsageError("empty agent", field="--agent")
    if spec.startswith(("http://", "https://")):
        from judge.suite.drive.endpoint import EndpointAgent

        if not model:
            raise UsageError("an endpoint agent needs --model NAME (the model the endpoint serves)", field="--model")
        return EndpointAgent(base_url=spec, model=model, name=name or model)
    match = ENTRY_POINT.match(spec)
    if match and " " not in spec:
        function = load_entry_point(spec)
        return EntryPointAgent(function=function, name=name or f"{Path(match['module']).name}:{match['function']}")
    try:
        argv = shlex.split(spec)
    except ValueError as exc:
        raise UsageError(f"cannot split the agent command: {exc}", field="--agent") from None
    interpreter = Path(argv[0]).name.startswith("python") and len(argv) > 1  # `python agent.py`: the script's name
    return CommandAgent(argv=argv, name=name or Path(argv[-1] if interpreter else argv[0]).name)
