"""Write our trace from inside an agent harness as it runs (instrument the adapter, not the logs).

```python
from judge.recorder import Recorder

with Recorder("run.jsonl", run_id="r-1", scenario="refund-agent", agent="shopbot") as rec:
    rec.user("Refund order A-1001, please.")          # a user message starts a new turn
    lookup = rec.wrap(lookup_order)                     # or decorate: @rec.tool
    order = lookup("A-1001")                            # -> tool-call + tool-result (ok, latency)
    rec.assistant("Refunding 20 EUR.", meta={"model": "gpt-4.1", "finish_reason": "stop"})
    rec.state_write("refund", "done")
```

- **Turns**: `turns="user"` (default) starts a new turn at each `user()`, the rule the importers
  use; `rec.next_turn()` starts one by hand, `rec.turn = n` jumps ahead (never back). With
  `turns="manual"` only those two change the turn.
- **Tools**: `rec.wrap(fn)` / `@rec.tool` / `@rec.tool(name="search")` record a `tool-call` with the
  arguments bound to the parameter names, then a `tool-result`: `ok` with the return value, or
  `error` (`timeout` for TimeoutError) with `{"error": type, "message": ...}` when it raises; the
  exception is re-raised. `meta.latency_ms` is the wall time. Coroutine functions are wrapped by a
  coroutine function. For calls the harness makes itself: `rec.tool_call(...)` + `rec.tool_result(...)`.
- **Redaction as it writes**: every content field goes through judge.trace.redact.Redactor
  (`redact=False` to turn it off); `rec.redactions` counts by kind; the header says
  `redaction: "judge-default"` (or `"none"`).
- **Concurrency**: one lock around id assignment and the write, so threads and asyncio tasks may
  record at once; ids (`e<n>`, call ids `c<n>`) are unique. Each line is flushed as it is written, so
  a crashed harness leaves a valid trace of what happened before the crash.
- Every event is validated against the trace format before it is written (a bad status or a
  missing field raises at once, in the harness, not later in CI).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from judge.errors import JudgeInputError
from judge.model import AgentInfo, Event, EventMeta, RunHeader
from judge.model.jsonl import escape_line_breaks
from judge.trace.redact import Redactor, redact_event_dict

F = TypeVar("F", bound=Callable[..., Any])
_EVENT = TypeAdapter(Event)


def _jsonable(value: Any) -> Any:
    """A JSON-safe copy: containers kept, other objects as their repr (never raises)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "model_dump"):
        try:
            return _jsonable(value.model_dump(mode="json"))
        except Exception:  # noqa: BLE001 - a repr is always acceptable
            pass
    return repr(value)


class Recorder:
    """Context manager (sync or async) that writes one run's trace to `path`."""

    def __init__(self, path: str | Path, *, run_id: str, scenario: str, agent: str | dict | AgentInfo | None = None,
                 task_id: str | None = None, trace_id: str | None = None, metadata: dict[str, Any] | None = None,
                 retention: str | None = None, redact: bool = True, turns: str = "user",
                 tool_schemas: Any = None) -> None:
        if turns not in ("user", "manual"):
            raise JudgeInputError(f"unknown turn rule {turns!r} (expected user or manual)")
        if isinstance(agent, str):
            agent = AgentInfo(name=agent)
        elif isinstance(agent, dict):
            agent = AgentInfo.model_validate(agent)
        schema_sha = None
        if tool_schemas is not None:
            schema_sha = hashlib.sha256(json.dumps(_jsonable(tool_schemas), sort_keys=True).encode()).hexdigest()
        try:
            self.header = RunHeader(kind="run", run_id=run_id, scenario=scenario, trace_id=trace_id,
                                    task_id=task_id, agent=agent, tool_schema_sha256=schema_sha,
                                    redaction="judge-default" if redact else "none", retention=retention,
                                    metadata=_jsonable(metadata) if metadata is not None else None)
        except ValidationError as exc:
            raise JudgeInputError(f"bad run header: {exc.errors()[0]['msg']}",
                                  field=".".join(map(str, exc.errors()[0]["loc"]))) from None
        self.path = Path(path)
        self.turns = turns
        self.redactor = Redactor() if redact else None
        self._lock = threading.Lock()
        self._handle: Any = None
        self._turn = 0
        self._n = 0
        self._calls = 0
        self.events_written = 0

    # -------------------------------------------------------------- lifecycle

    def open(self) -> Recorder:
        if self._handle is not None:
            return self
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("w", encoding="utf-8", buffering=1)
        except OSError as exc:
            raise JudgeInputError(f"cannot write: {exc.strerror}", file=str(self.path)) from None
        self._handle.write(escape_line_breaks(self.header.model_dump_json(exclude_none=True)) + "\n")
        return self

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    def __enter__(self) -> Recorder:
        return self.open()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> Recorder:
        return self.open()

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    @property
    def redactions(self) -> dict[str, int]:
        return dict(sorted(self.redactor.counts.items())) if self.redactor else {}

    # -------------------------------------------------------------- turns

    @property
    def turn(self) -> int:
        return self._turn

    @turn.setter
    def turn(self, value: int) -> None:
        with self._lock:
            if not isinstance(value, int) or value < self._turn:
                raise JudgeInputError(f"turn {value!r} would go backwards from {self._turn}")
            self._turn = value

    def next_turn(self) -> int:
        with self._lock:
            self._turn += 1
            return self._turn

    # -------------------------------------------------------------- events

    def _write(self, kind: str, fields: dict[str, Any], *, new_turn: bool = False) -> str:
        """Validate, redact and write one event; returns its id."""
        with self._lock:
            if self._handle is None:
                raise JudgeInputError("the recorder is not open (use it as a context manager)",
                                      file=str(self.path))
            if new_turn:
                self._turn += 1
            self._n += 1
            record = {"id": f"e{self._n}", "turn": self._turn, "kind": kind, "ts": round(time.time(), 6)}
            record.update((k, v) for k, v in fields.items() if v is not None)
            if self.redactor is not None:
                record = redact_event_dict(record, self.redactor)
            try:
                event = _EVENT.validate_python(record)
            except ValidationError as exc:
                self._n -= 1
                err = exc.errors()[0]
                raise JudgeInputError(err["msg"], file=str(self.path),
                                      field=".".join(str(p) for p in err["loc"] if p != kind)) from None
            self._handle.write(escape_line_breaks(event.model_dump_json(exclude_none=True, by_alias=True)) + "\n")
            self.events_written += 1
            return event.id

    @staticmethod
    def _meta(meta: dict[str, Any] | EventMeta | None) -> dict[str, Any] | None:
        if meta is None:
            return None
        if isinstance(meta, EventMeta):
            return meta.model_dump(exclude_none=True)
        return dict(meta)

    def user(self, text: str, **extra: Any) -> str:
        return self._write("user", {"text": text, **extra}, new_turn=self.turns == "user")

    def assistant(self, text: str, *, meta: dict[str, Any] | EventMeta | None = None, **extra: Any) -> str:
        return self._write("assistant", {"text": text, "meta": self._meta(meta), **extra})

    def state_write(self, key: str, value: Any, **extra: Any) -> str:
        return self._write("state-write", {"key": key, "value": _jsonable(value), **extra})

    def summary(self, text: str, *, reason: str = "compaction", to: str | None = None, **extra: Any) -> str:
        return self._write("summary", {"text": text, "reason": reason, "to": to, **extra})

    def snapshot(self, ref: str, *, state: dict[str, Any] | None = None, phase: str | None = None,
                 call_id: str | None = None, digest: str | None = None, **extra: Any) -> str:
        """A reference to an environment state; `digest` defaults to the SHA-256 of `state`'s JSON."""
        state = _jsonable(state) if state is not None else None
        if digest is None and state is not None:
            digest = "sha256:" + hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()
        return self._write("snapshot", {"ref": ref, "state": state, "phase": phase, "call_id": call_id,
                                        "digest": digest, **extra})

    def new_call_id(self) -> str:
        with self._lock:
            self._calls += 1
            return f"c{self._calls}"

    def tool_call(self, tool: str, args: dict[str, Any] | None = None, *, call_id: str | None = None,
                  meta: dict[str, Any] | EventMeta | None = None, **extra: Any) -> str:
        """Record a call; returns its call id (give it to `tool_result`)."""
        call_id = call_id or self.new_call_id()
        self._write("tool-call", {"call_id": call_id, "tool": tool, "args": _jsonable(args or {}),
                                  "meta": self._meta(meta), **extra})
        return call_id

    def tool_result(self, call_id: str, result: Any = None, *, status: str = "ok", tool: str | None = None,
                    latency_ms: float | None = None, **extra: Any) -> str:
        meta = {"latency_ms": round(latency_ms, 3)} if latency_ms is not None else None
        return self._write("tool-result", {"call_id": call_id, "tool": tool, "status": status,
                                           "result": _jsonable(result), "meta": meta, **extra})

    # -------------------------------------------------------------- tools

    def wrap(self, fn: F, *, name: str | None = None) -> F:
        """`fn` recording each call (sync or async)."""
        tool = name or getattr(fn, "__name__", None) or "tool"
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):
            signature = None

        def bind(args: tuple, kwargs: dict) -> dict[str, Any]:
            if signature is not None:
                try:
                    bound = signature.bind(*args, **kwargs)
                    bound.apply_defaults()
                    out = {}
                    for pname, value in bound.arguments.items():
                        kind = signature.parameters[pname].kind
                        if kind is inspect.Parameter.VAR_KEYWORD:
                            out.update(value)
                        else:
                            out[pname] = value
                    return out
                except TypeError:
                    pass
            return {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}

        def failed(exc: BaseException) -> tuple[str, dict[str, str]]:
            status = "timeout" if isinstance(exc, (TimeoutError, asyncio.TimeoutError)) else "error"
            return status, {"error": type(exc).__name__, "message": str(exc)}

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                call_id = self.tool_call(tool, bind(args, kwargs))
                start = time.perf_counter()
                try:
                    result = await fn(*args, **kwargs)
                except BaseException as exc:
                    status, detail = failed(exc)
                    self.tool_result(call_id, detail, status=status, tool=tool,
                                     latency_ms=(time.perf_counter() - start) * 1000)
                    raise
                self.tool_result(call_id, result, tool=tool, latency_ms=(time.perf_counter() - start) * 1000)
                return result
            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            call_id = self.tool_call(tool, bind(args, kwargs))
            start = time.perf_counter()
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                status, detail = failed(exc)
                self.tool_result(call_id, detail, status=status, tool=tool,
                                 latency_ms=(time.perf_counter() - start) * 1000)
                raise
            self.tool_result(call_id, result, tool=tool, latency_ms=(time.perf_counter() - start) * 1000)
            return result
        return wrapper  # type: ignore[return-value]

    def tool(self, fn: F | None = None, *, name: str | None = None) -> Any:
        """Decorator: `@rec.tool` or `@rec.tool(name="search")`."""
        if fn is None:
            return lambda f: self.wrap(f, name=name)
        return self.wrap(fn, name=name)
