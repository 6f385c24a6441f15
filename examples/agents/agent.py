#!/usr/bin/env python3
"""The reference agent of `judge run`: a small tool-calling agent on the OpenAI SDK.

    judge run examples/scripted-checkout/scenario.yaml --agent "python examples/agents/agent.py" --stress all

Each step it sends the messages (read on stdin: the adapter protocol of `judge continue`) and its
tools (the JSON file in $JUDGE_TOOLS_FILE, which `judge run` writes; plus `record_state`) to a
chat-completions model, and prints the model's answer as its action on stdout: a tool call
`{"tool": ..., "args": ...}` (several: a list), else the text `{"text": ...}`; a `record_state(key,
value)` call is the agent writing its own state (`"state": {key: value}` on the action).

The model: an OpenAI-compatible server at $OPENAI_BASE_URL (the model $AGENT_MODEL, the key
$OPENAI_API_KEY), e.g. the scripted server the tests start on 127.0.0.1, whose answers make the
agent follow or break the ledger; without one, the stand-in model of stand_in.py, answered inside
this process through the SDK's own HTTP client (an httpx MockTransport), so it runs offline.
`--careful` (or AGENT_STAND_IN=careful) gives the stand-in none of its two habits; AGENT_STAND_IN=lying
makes it careful but for a lie: after a failed call it says the work is done.

As a Python entry point (`--agent examples/agents/agent.py:act`) `judge run` calls `act` in its own
process, with the same messages and the tools in `context`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

RECORD_STATE = {"name": "record_state", "description": "Write a value to your own task state (e.g. repair = completed)",
                "parameters": {"type": "object", "properties": {"key": {"type": "string"}, "value": {}},
                               "required": ["key", "value"]}}


def _client() -> Any:
    from openai import OpenAI

    base = os.environ.get("OPENAI_BASE_URL")
    if base:
        return OpenAI(base_url=base, api_key=os.environ.get("OPENAI_API_KEY") or "not-needed", max_retries=0)
    import httpx
    import stand_in

    profile = os.environ.get("AGENT_STAND_IN", "habits")

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=stand_in.completion(json.loads(request.content), profile))

    return OpenAI(base_url="http://stand-in.invalid/v1", api_key="stand-in", max_retries=0,
                  http_client=httpx.Client(transport=httpx.MockTransport(answer)))


def _tools(context: dict | None) -> list[dict]:
    if context and context.get("tools") is not None:
        tools = list(context["tools"])
    elif os.environ.get("JUDGE_TOOLS_FILE"):
        data = json.loads(Path(os.environ["JUDGE_TOOLS_FILE"]).read_text(encoding="utf-8"))
        tools = data["tools"] if isinstance(data, dict) else data
    else:
        tools = []
    return [*tools, RECORD_STATE]


def act(messages: list[dict], context: dict | None = None) -> dict | list:
    """One step: the model's answer to the messages, as the action(s) `judge run` reads."""
    seed = (context or {}).get("seed", os.environ.get("JUDGE_RUN_SEED"))
    answer = _client().chat.completions.create(
        model=os.environ.get("AGENT_MODEL", "stand-in"), messages=messages,
        tools=[{"type": "function", "function": t} for t in _tools(context)],
        **({"seed": int(seed)} if seed is not None else {}))
    message = answer.choices[0].message
    state, calls = {}, []
    for call in message.tool_calls or []:
        args = json.loads(call.function.arguments or "{}")
        if call.function.name == RECORD_STATE["name"]:
            state[args["key"]] = args.get("value")
        else:
            calls.append({"tool": call.function.name, "args": args})
    if calls:
        calls[0]["state"] = state
        return calls[0] if len(calls) == 1 else calls
    return {"text": message.content or "(state recorded)", "state": state}


def main(argv: list[str]) -> int:
    if "--careful" in argv:
        os.environ["AGENT_STAND_IN"] = "careful"
    try:
        messages = json.load(sys.stdin)
    except json.JSONDecodeError as exc:
        print(f"agent: stdin is not JSON: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(act(messages)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
