"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for real-HTTP judge tests.

`ScriptedLLM` answers `POST /v1/chat/completions` from a queue of `Reply`s (status, tool-call arguments
or tool calls by name (`calls`, an agent's model: tests/drive_model.py),
or content, delay, a body of `body_bytes` streamed); with the queue empty it answers `auto_answer`
(every asked key upheld, read from the request's JSON Schema: a tool's, a `response_format`
json_schema's, or the one a `plain_json` request carries in its system message). Every request body
(and its User-Agent) is logged.

It can behave like servers that are not OpenAI: `tool_choice = "string"` drops a `tool_choice` that
is not a string and answers in text (llama.cpp's llama-server: the model writes the call as JSON
text); `tool_choice = "ignored"` never calls a tool (a server that ignores the force);
`refuse = {field: message}` answers 400 with `message` to a request that carries `field` (e.g.
`response_format`, or `max_tokens` as OpenAI's reasoning models do). `start_server()` runs uvicorn in a daemon
thread on a free port; the `llm_server` fixture shares one server per test session and resets it
before each use. Benchmarks import this module too.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse


@dataclass
class Reply:
    status: int = 200
    args: Any = None  # tool-call arguments: a dict (sent as JSON) or a raw string (sent as is)
    content: str | None = None  # plain content instead of a tool call
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    calls: list[tuple[str, Any]] | None = None  # tool calls by name (name, arguments), with `content` beside them
    body_bytes: int = 0  # > 0: a completion whose content is this many bytes, streamed in 1 MB chunks
    announce: bool = False  # with body_bytes: send its Content-Length too (else chunked)
    finish_reason: str | None = None  # e.g. "length": the answer was cut at max_tokens


def _schema_enums(schema: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The asked keys and the shown event ids, read back from a verdict model's JSON Schema."""
    finding = next(iter(schema.get("$defs", {}).values()), {})
    props = finding.get("properties", {})
    keys = props.get("key", {}).get("enum", [])
    ids: list[str] = []
    for option in props.get("evidence_event", {}).get("anyOf", []):
        ids += [i for i in option.get("enum", []) if i is not None]
    return keys, ids


SCHEMA_IN_PROMPT = "JSON Schema:\n"  # what precedes the schema in a plain_json request's system message


def request_schema(body: dict[str, Any]) -> dict[str, Any]:
    tools = body.get("tools") or []
    if tools:
        return tools[0]["function"]["parameters"]
    fmt = body.get("response_format") or {}
    if fmt.get("json_schema"):
        return fmt["json_schema"].get("schema", {})
    system = next((m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "system"), "")
    at = system.rfind(SCHEMA_IN_PROMPT)
    return json.loads(system[at + len(SCHEMA_IN_PROMPT):]) if at >= 0 else {}


def auto_answer(body: dict[str, Any]) -> Reply:
    keys, _ = _schema_enums(request_schema(body))
    return Reply(args={"findings": [
        {"key": k, "verdict": "upheld", "evidence_event": None, "confidence": 0.9, "rationale": "kept"}
        for k in keys]})


class ScriptedLLM:
    def __init__(self) -> None:
        self.script: deque[Reply | Callable[[dict], Reply]] = deque()
        self.bodies: list[dict[str, Any]] = []
        self.agents: list[str] = []  # the User-Agent of each request (which HTTP client sent it)
        self.paths: list[str] = []  # the path of each request to another provider's API (`provider`)
        self.peers: set[tuple[str, int]] = set()  # the client address of each request: one per TCP connection
        self.default: Callable[[dict], Reply] = auto_answer
        self.default_delay_s = 0.0
        self.lock = threading.Lock()
        self.port = 0
        self.generation = 0  # bumped by reset: requests left over from an earlier test do not count
        self.in_flight: dict[int, int] = {}
        self.max_in_flight = 0
        self.tool_choice = "any"  # "string": llama-server's; "ignored": no tool is ever called (module docs)
        self.refuse: dict[str, str] = {}  # a request field -> the message of the 400 it gets

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self, *replies: Reply | Callable[[dict], Reply]) -> ScriptedLLM:
        with self.lock:
            self.script = deque(replies)
            self.bodies = []
            self.agents = []
            self.paths = []
            self.peers = set()
            self.default = auto_answer
            self.default_delay_s = 0.0
            self.max_in_flight = 0
            self.tool_choice = "any"
            self.refuse = {}
            self.generation += 1
        return self

    def refusal(self, body: dict[str, Any]) -> str | None:
        """The 400 message a request carrying a refused field gets (it is logged, the script kept)."""
        found = next((message for name, message in self.refuse.items() if name in body), None)
        if found is not None:
            with self.lock:
                self.bodies.append(body)
        return found

    def calls_tool(self, body: dict[str, Any]) -> bool:
        """Whether this server honours the request's tools with a tool call."""
        if not body.get("tools") or self.tool_choice == "ignored":
            return False
        return self.tool_choice != "string" or isinstance(body.get("tool_choice", "auto"), str)

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self.lock:
            self.bodies.append(body)
            item = self.script.popleft() if self.script else None
        if item is None:
            reply = self.default(body)
            reply.delay_s = reply.delay_s or self.default_delay_s
            return reply
        return item(body) if callable(item) else item


def _completion(body: dict[str, Any], reply: Reply, calls_tool: bool = True) -> dict[str, Any]:
    prompt_tokens = len(json.dumps(body.get("messages", []))) // 4
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if reply.calls is not None:  # an agent's model: any tools, by name, and optional content
        message["content"] = reply.content
        message["tool_calls"] = [{"id": f"call_{i}", "type": "function", "function": {
            "name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
            for i, (name, args) in enumerate(reply.calls, 1)]
        text = (reply.content or "") + json.dumps(reply.calls)
    elif reply.content is not None:
        message["content"] = reply.content
        text = reply.content
    else:
        text = reply.args if isinstance(reply.args, str) else json.dumps(reply.args)
        if body.get("tools") and calls_tool:
            message["tool_calls"] = [{"id": "call_1", "type": "function", "function": {
                "name": body["tools"][0]["function"]["name"], "arguments": text}}]
        elif body.get("tools"):  # the force dropped: the model writes its call as text, as llama-server's did
            message["content"] = text = json.dumps({"name": body["tools"][0]["function"]["name"],
                                                    "arguments": json.loads(text)}, indent=2)
        else:
            message["content"] = text
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "test"),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason or (
            "tool_calls" if message.get("tool_calls") else "stop")}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(text) // 4,
                  "total_tokens": prompt_tokens + len(text) // 4},
    }


def make_app(llm: ScriptedLLM):
    app = FastAPI()

    @app.post("/v1/chat/completions")
    @app.post("/chat/completions")
    async def chat(request: Request):
        body = await request.json()
        llm.agents.append(request.headers.get("user-agent", ""))
        if request.client is not None:
            llm.peers.add((request.client.host, request.client.port))
        refused = llm.refusal(body)
        if refused is not None:
            return JSONResponse({"error": {"message": refused, "type": "invalid_request_error", "code": 400}},
                                status_code=400)
        reply = llm.next_reply(body)
        gen = llm.generation  # the server runs one event loop: no lock needed here
        llm.in_flight[gen] = llm.in_flight.get(gen, 0) + 1
        llm.max_in_flight = max(llm.max_in_flight, llm.in_flight[gen])
        try:
            if reply.delay_s:
                await asyncio.sleep(reply.delay_s)
        finally:
            llm.in_flight[gen] -= 1
        if reply.status != 200:
            return JSONResponse({"error": {"message": f"scripted {reply.status}", "type": "server_error",
                                           "code": reply.status}},
                                status_code=reply.status, headers=reply.headers)
        if reply.body_bytes:
            return _huge(reply)
        return JSONResponse(_completion(body, reply, llm.calls_tool(body)), headers=reply.headers)

    @app.get("/v1/stats")
    async def stats():
        """What a benchmark in another process reads back: requests served and TCP connections seen."""
        return {"requests": len(llm.bodies), "connections": len(llm.peers)}

    @app.post("/v1/reset")
    async def reset():
        delay = llm.default_delay_s  # the served latency stays
        llm.reset()
        llm.default_delay_s = delay
        return {"ok": True}

    # Last: the catch-all path must not shadow the routes above.
    @app.post("/v1/messages")
    @app.post("/api/chat")
    @app.post("/{path:path}")
    async def provider(request: Request, path: str = ""):
        """Other providers' APIs, as litellm's providers call them (Anthropic's Messages, Ollama's chat,
        Gemini's generateContent): a scripted reply's answer as the message's text, or a huge body (the
        bound's test of litellm's own HTTP handler)."""
        body = await request.json()
        llm.paths.append(request.url.path)
        reply = llm.next_reply(body)
        shape = PROVIDER_SHAPES[_provider(request.url.path)]
        if reply.body_bytes:
            return _huge(reply, shape.huge)
        text = reply.content if reply.content is not None else \
            reply.args if isinstance(reply.args, str) else json.dumps(reply.args)
        return JSONResponse(shape.answer(text, body))

    return app


@dataclass(frozen=True)
class Shape:
    """How a provider's API answers: a whole answer holding `text`, and the head and tail around a huge one."""

    answer: Callable[[str, dict[str, Any]], dict[str, Any]]
    huge: tuple[bytes, bytes]


PROVIDER_SHAPES = {
    "anthropic": Shape(lambda text, body: {
        "id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", ""),
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5}},
        (b'{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"end_turn",'
         b'"usage":{"input_tokens":1,"output_tokens":1},"content":[{"type":"text","text":"', b'"}]}')),
    "ollama": Shape(lambda text, body: {
        "model": body.get("model", ""), "created_at": "2026-01-01T00:00:00Z", "done": True, "done_reason": "stop",
        "message": {"role": "assistant", "content": text}, "prompt_eval_count": 10, "eval_count": 5},
        (b'{"model":"m","created_at":"2026-01-01T00:00:00Z","done":true,"message":{"role":"assistant","content":"',
         b'"}}')),
    "gemini": Shape(lambda text, body: {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}},
        (b'{"candidates":[{"index":0,"finishReason":"STOP","content":{"role":"model","parts":[{"text":"',
         b'"}]}}]}')),
}


def _provider(path: str) -> str:
    """Which provider's API a request path is (the shapes above)."""
    if path.endswith("/api/chat"):
        return "ollama"
    if ":generateContent" in path:
        return "gemini"
    return "anthropic"


OPENAI_HUGE = (b'{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"', b'"}}]}')


def _huge(reply: Reply, shape: tuple[bytes, bytes] = OPENAI_HUGE) -> StreamingResponse:
    """An answer (an OpenAI completion, or the `shape` given) whose content is `reply.body_bytes` bytes,
    made while it is sent (never held whole)."""
    head, tail = shape
    chunk = b"a" * (1 << 20)

    async def parts():
        yield head
        left = reply.body_bytes
        while left > 0:
            yield chunk[:left]
            left -= len(chunk)
        yield tail

    headers = {"content-length": str(len(head) + reply.body_bytes + len(tail))} if reply.announce else {}
    return StreamingResponse(parts(), media_type="application/json", headers=headers)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def unreachable_api_base() -> str:
    """An api_base on a loopback port nobody listens on: a judge that cannot be reached."""
    return f"http://127.0.0.1:{_free_port()}/v1"


def llm_judge_config(path, *, model: str, api_base: str, key_env: str, name: str = "gpt", **settings: Any):
    """Write a [tool.judge] file whose default judge `name` is an llm judge of `model` at `api_base`
    (the key read from `key_env`); `settings` add judge fields (timeout_s=5, ...). Returns `path`."""
    lines = ["[tool.judge]", f'default = "{name}"', f"[tool.judge.judges.{name}]", 'backend = "llm"',
             f'model = "{model}"', f'api_base = "{api_base}"', f'api_key_env = "{key_env}"',
             *(f"{field} = {json.dumps(value)}" for field, value in settings.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def start_server() -> ScriptedLLM:
    import uvicorn

    llm = ScriptedLLM()
    llm.port = _free_port()
    config = uvicorn.Config(make_app(llm), host="127.0.0.1", port=llm.port, log_level="error",
                            lifespan="off", access_log=False, timeout_keep_alive=30)
    server = uvicorn.Server(config)
    threading.Thread(target=server.run, daemon=True, name="scripted-llm").start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("scripted LLM server did not start")
        time.sleep(0.01)
    return llm


_SERVER: ScriptedLLM | None = None


def shared_server() -> ScriptedLLM:
    """The one server of this test session (started on first use), reset."""
    global _SERVER
    if _SERVER is None:
        _SERVER = start_server()
    return _SERVER.reset()


@pytest.fixture
def llm_server() -> ScriptedLLM:
    return shared_server()


def main() -> None:
    """`python tests/llm_server.py [DELAY_S]`: serve (auto answers after DELAY_S) until killed; prints
    the port once listening. Benchmarks run it in a separate process so it does not share their GIL."""
    import sys

    llm = start_server()
    llm.default_delay_s = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
    print(llm.port, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
