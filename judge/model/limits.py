"""Bounds every reader of user input holds to, so a hostile file is refused, not obeyed.

- `MAX_DEPTH`: JSON/YAML nesting (scenarios, trace lines, labels, imports, request bodies). Real
  files nest a dozen levels; a few hundred thousand `[` would exhaust the interpreter's stack.
- `MAX_LINE_BYTES`: one JSONL line (a trace event, an imported span). A line is parsed whole, so
  a file without newlines (`/dev/zero`, a binary) must not be read into memory as one.
- `MAX_FILE_BYTES`: a file read whole (a scenario, a suite manifest, a labels file).
- `MAX_ANSWER_BYTES`: one HTTP answer of an LLM endpoint, read before it is parsed. An answer bounded
  by `max_tokens` is a few kilobytes (8,192 tokens of escaped JSON stay under 200 KB); a broken or
  hostile server's 200 MB body parsed whole took the process from 0.33 to 2.19 GB.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

MAX_DEPTH = 200
MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_ANSWER_BYTES = 4 * 1024 * 1024


class DepthError(ValueError):
    """A value nested deeper than MAX_DEPTH; `field` is the top-level field it sits under."""

    def __init__(self, depth: int, field: str | None = None) -> None:
        super().__init__(f"nested deeper than {MAX_DEPTH} levels")
        self.depth = depth
        self.field = field


def depth_message() -> str:
    """The one message every reader gives for a value nested deeper than MAX_DEPTH."""
    return f"nested deeper than {MAX_DEPTH} levels (the limit of every reader)"


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise DepthError when `value` (parsed JSON/YAML) nests deeper than `limit`; no recursion."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth >= limit:
            raise DepthError(depth + 1)
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list, tuple)))


def field_depth_error(record: dict[str, Any]) -> DepthError | None:
    """The first top-level field of `record` nested too deep, as a DepthError naming it."""
    for name, value in record.items():
        try:
            check_depth(value, MAX_DEPTH - 1)
        except DepthError as exc:
            exc.field = str(name)
            return exc
    return None


def read_capped(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a file read whole, or OSError/ValueError when it is larger than `limit`
    (a device such as /dev/zero never ends: it is cut at the limit, never read into memory whole)."""
    with path.open("rb") as handle:
        data = handle.read(8192)
        if b"\x00" in data:
            raise ValueError("binary file, expected text")
        data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise ValueError(f"larger than the limit of {limit // (1024 * 1024)} MB")
    return data


def read_json_file(path: str | Path, what: str) -> Any:
    """A JSON file the user named (a report to compare with, a suite part, tool schemas), read whole
    within MAX_FILE_BYTES and MAX_DEPTH; anything else is a JudgeInputError naming the file and
    `what` it should have been ("a JSON suite report")."""
    import json

    from judge.errors import JudgeInputError

    path = Path(path)
    try:
        data = loads_json(read_capped(path).decode("utf-8"))
    except OSError as exc:
        raise JudgeInputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    except DepthError:
        raise JudgeInputError(f"not {what}: {depth_message()}", file=str(path)) from None
    except json.JSONDecodeError as exc:
        raise JudgeInputError(f"not {what}: {exc.msg} (column {exc.colno})", file=str(path), line=exc.lineno) from None
    except (UnicodeDecodeError, ValueError) as exc:  # read_capped's limit, NaN, an over-long integer
        raise JudgeInputError(f"not {what}: {exc}", file=str(path)) from None
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads_json(text: str | bytes) -> Any:
    """Strict JSON within MAX_DEPTH: ValueError for bad JSON (a JSONDecodeError), `NaN`,
    `Infinity` or an integer of more than 4,300 digits; DepthError for deep nesting."""
    import json

    try:
        data = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise DepthError(MAX_DEPTH) from None
    check_depth(data)
    return data


def same_file(a: Path, b: Path) -> bool:
    """Are `a` and `b` the same file: the same path once resolved, or the same inode on the same
    device (a hard link, a bind mount)? False when either does not exist yet (unless same path)."""
    import os

    try:
        if Path(a).resolve() == Path(b).resolve():
            return True
    except (OSError, RuntimeError):
        pass
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False
