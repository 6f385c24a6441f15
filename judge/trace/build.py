"""What the importers share: an event builder that keeps a trace valid, and the trace writer.

`EventBuilder` numbers events (`e1`, `e2`, ...), keeps the turn from going backwards, makes call ids
unique within the trace (a framework that reuses `call_1` in every step gets `call_1`, `call_1#2`,
...) and pairs each result with the latest call of that id. It never redacts: the grader redacts
when it reads a trace (judge.trace.load), so an importer writes what it was given.
"""

from __future__ import annotations

import contextvars
import functools
import json
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from judge.errors import JudgeInputError
from judge.model.jsonl import dumps_line
from judge.model.limits import MAX_DEPTH, DepthError, check_depth, depth_message


@dataclass
class ImportSummary:
    """What an import wrote: runs, events by kind, the files, and what was skipped (by reason)."""

    runs: int = 0
    events: Counter = field(default_factory=Counter)
    files: list[Path] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)

    def add(self, path: Path, events: list[dict[str, Any]]) -> None:
        self.runs += 1
        self.files.append(path)
        self.events.update(e["kind"] for e in events)

    def as_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "events": dict(sorted(self.events.items())),
                "files": [str(p) for p in self.files], "skipped": dict(sorted(self.skipped.items())),
                "warnings": list(self.warnings)}


class EventBuilder:
    """Collects the events of one trace with unique ids, never-decreasing turns, unique call ids."""

    def __init__(self, turn: int = 0) -> None:
        self.events: list[dict[str, Any]] = []
        self.turn = turn
        self._calls: dict[str, str] = {}   # call id as written -> tool
        self._latest: dict[str, str] = {}  # call id as given -> call id as written
        self._answered: set[str] = set()

    def next_turn(self) -> int:
        self.turn += 1
        return self.turn

    def add(self, kind: str, **fields: Any) -> dict[str, Any]:
        event = {"id": f"e{len(self.events) + 1}", "turn": self.turn, "kind": kind}
        event.update((k, v) for k, v in fields.items() if v is not None)
        self.events.append(event)
        return event

    def has_call(self, given_id: str) -> bool:
        return given_id in self._latest

    def call(self, tool: str, args: Any, call_id: str | None = None, **fields: Any) -> str:
        """A tool-call; returns the call id as written (unique in the trace)."""
        given = call_id or f"call-{len(self.events) + 1}"
        written, n = given, 2
        while written in self._calls:
            written, n = f"{given}#{n}", n + 1
        self._calls[written] = tool
        self._latest[given] = written
        self.add("tool-call", call_id=written, tool=tool, args=as_args(args), **fields)
        return written

    def result(self, given_id: str, status: str, result: Any, *, tool: str | None = None,
               **fields: Any) -> dict[str, Any] | None:
        """The tool-result of the latest call issued with `given_id`; None when that call already
        has its result (a repeated copy), KeyError when no call was issued with that id."""
        written = self._latest[given_id]
        if written in self._answered:
            return None
        self._answered.add(written)
        return self.add("tool-result", call_id=written, tool=self._calls[written], status=status,
                        result=result, **fields)

    def answered(self, given_id: str) -> bool:
        written = self._latest.get(given_id)
        return written is not None and written in self._answered

    def pending(self) -> list[str]:
        """Call ids (as given) still without a result, oldest first."""
        return [g for g, w in self._latest.items() if w not in self._answered]


def as_args(value: Any) -> dict[str, Any]:
    """Tool arguments as a JSON object: a JSON string is parsed; anything that is not an object is
    kept whole under `_raw` (our trace format wants an object)."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return {}
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return {"_raw": value}
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    return {"_raw": value}


def maybe_json(value: Any) -> Any:
    """A string holding a JSON object or list, parsed; anything else unchanged."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                return value
    return value


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str) -> str:
    """A file name for a run id (letters, digits, `.`, `_`, `-`; never empty, never hidden)."""
    cleaned = _UNSAFE.sub("_", name).strip("._") or "run"
    return cleaned[:120]


def dumps(record: dict[str, Any]) -> str:
    """One JSONL line (judge.model.jsonl: line breaks escaped, lone surrogates replaced)."""
    return dumps_line(record, separators=(",", ":"), default=str)


def _validate(path: Path, header: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """The trace format itself, before a byte is written: an importer never writes a trace the
    grader would refuse (nesting beyond MAX_DEPTH, an event that is not one)."""
    from pydantic import TypeAdapter, ValidationError

    from judge.model import Event, RunHeader

    adapter = TypeAdapter(Event)
    for index, record in enumerate([header, *events]):
        where = "run header" if index == 0 else f"event {record.get('id', index)}"
        try:
            check_depth(record, MAX_DEPTH)
            if index == 0:
                RunHeader.model_validate({k: v for k, v in record.items() if v is not None})
            else:
                adapter.validate_python(record)
        except DepthError:
            raise JudgeInputError(f"{where}: {depth_message()}", file=str(path)) from None
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise JudgeInputError(f"{where} would not be a valid trace line: {err['msg']}", file=str(path),
                                  field=field or None) from None


# The files an import has written so far (temporary name -> final name): they are moved into place
# together when the import succeeds, and removed when it fails, so a failed import leaves nothing.
_STAGED: contextvars.ContextVar[list[tuple[Path, Path]] | None] = contextvars.ContextVar("staged", default=None)
F = TypeVar("F", bound=Callable[..., Any])


def atomic_import(fn: F) -> F:
    """Run an import so that it writes all of its traces or none (see `_STAGED`)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        staged: list[tuple[Path, Path]] = []
        token = _STAGED.set(staged)
        try:
            result = fn(*args, **kwargs)
        except RecursionError:
            _discard(staged)
            raise JudgeInputError(depth_message(), file=str(args[0]) if args else None) from None
        except BaseException:
            _discard(staged)
            raise
        finally:
            _STAGED.reset(token)
        try:
            for tmp, final in staged:
                os.replace(tmp, final)
        except OSError as exc:
            _discard(staged)
            raise JudgeInputError(f"cannot write: {exc.strerror}", file=str(exc.filename)) from None
        return result
    return wrapper  # type: ignore[return-value]


def _discard(staged: list[tuple[Path, Path]]) -> None:
    for tmp, _ in staged:
        tmp.unlink(missing_ok=True)


def write_trace(path: Path, header: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """Validate, then write one trace (inside `atomic_import`: to a temporary file moved into place
    when the whole import succeeded)."""
    _validate(path, header, events)
    staged = _STAGED.get()
    target = path.with_name(f".{path.name}.partial-{os.getpid()}") if staged is not None else path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8") as handle:
            if staged is not None:
                staged.append((target, path))
            handle.write(dumps({k: v for k, v in header.items() if v is not None}) + "\n")
            for event in events:
                handle.write(dumps(event) + "\n")
    except OSError as exc:
        raise JudgeInputError(f"cannot write: {exc.strerror}", file=str(path)) from None


def refuse_input(out: Path, *inputs: Path) -> None:
    """Nothing the user gave is overwritten: the same path, or the same file by inode (a hard link)."""
    from judge.model.limits import same_file

    for path in inputs:
        if same_file(out, path):
            raise JudgeInputError("refusing to write over an input file", file=str(out))


def check_text_file(path: Path) -> None:
    """A binary file or device (`/dev/zero`) is refused before any line of it is read."""
    try:
        with path.open("rb") as handle:
            head = handle.read(8192)
    except OSError as exc:
        raise JudgeInputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    if b"\x00" in head:
        raise JudgeInputError("binary file, expected JSON text", file=str(path))
