"""Duplicate keys in a trace line are refused: `{"tool": "run_tests", "tool": "lint"}` reads as `lint`
here and as `run_tests` in a reader that keeps the first, so the line says two things at once.

JSON decoders keep the last of a repeated key without a word (msgspec and pydantic too), so each
line the reader decodes is held to a cheap count instead: the double quotes in its raw text against
the quotes its decoded event takes written back (`expected_quotes`: two per key and per string, and
each quote inside one when the line has escapes). Written as it was read, a line has exactly as many;
a repeated key and its value add some that the decoded event no longer has. So when the counts agree
no key repeats, and only a line whose counts differ is parsed again (`duplicate_path`: a JSON null
written out for an optional field, or an unusual escape, also make them differ; such a line costs a
second parse, never a wrong answer). Why the counts cannot agree over a repeated key:

- every `"` byte of a line without escapes opens or closes a key or a string, and a line with
  escapes holds one more for each `\\"` in it; `\\u` escapes, which could write a quote without one,
  never reach this test (the redaction precheck sends every line holding one the slow way, which
  parses with `refuse_duplicates`);
- `expected_quotes` never counts more than the event's keys and strings: a field at its default
  (None, an empty `args`) counts as absent unless its key is certainly in the line.
"""

from __future__ import annotations

from typing import Any

from judge.trace.records import (
    MetaRecord,
    SnapshotRecord,
    StateWriteRecord,
    SummaryRecord,
    ToolCallRecord,
    ToolResultRecord,
)


class DuplicateKey(ValueError):
    """A JSON object with a key twice; `key` is the key."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key


def repeated_message(key: str) -> str:
    """The error's words for a key written twice in one object."""
    return (f"duplicate key {key!r}: JSON readers keep different copies of a repeated key (this one the "
            "last, others the first), so a trace line names each key of an object once")


def refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` for json.loads: the object as a dict, DuplicateKey on a repeated key."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return found


def duplicate_path(raw: str | bytes) -> str | None:
    """The dotted path of the first repeated key of a JSON line (`tool`, `args.path`, `result.items.id`:
    list indices left out), in the order written; None when no key repeats (or it is no JSON)."""
    import json

    try:
        tree = json.loads(raw, object_pairs_hook=tuple)  # an object as its pairs (arrays are lists)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[str, Any]] = [("", tree)]
    while stack:
        base, node = stack.pop()
        if isinstance(node, tuple):
            seen: set[str] = set()
            for key, _ in node:
                if key in seen:
                    return f"{base}.{key}" if base else key
                seen.add(key)
            stack.extend((f"{base}.{key}" if base else key, value) for key, value in reversed(node))
        elif isinstance(node, list):
            stack.extend((base, value) for value in reversed(node))
    return None


def keys_may_repeat(raw: str | bytes, event: Any) -> bool:
    """Whether a decoded line may hold a repeated key: False only when its quotes are exactly the
    event's (module docs). `event`: its record (judge.trace.records)."""
    if isinstance(raw, bytes):
        found = raw.count(b'"')
        escaped = b"\\" in raw
        if escaped and b"\\u" in raw:
            return True
    else:
        found = raw.count('"')
        escaped = "\\" in raw
        if escaped and "\\u" in raw:
            return True
    return found != expected_quotes(event, raw, escaped)


def expected_quotes(event: Any, raw: str | bytes, escaped: bool) -> int:
    """The double quotes a record's keys and strings take in JSON, counting a field at its default as
    absent (module docs); `escaped`: count the quotes inside them too (each one is `\\"` in the line)."""
    # id, turn and kind: three keys, the id's string and the kind's
    n = 10 + _inner(event.id, escaped) + _field(event.ts, escaped) + _field(event.span_id, escaped) \
        + _field(event.parent_span_id, escaped)
    meta = event.meta
    if meta is not None:
        n += 2 + _meta(meta, escaped)
    if isinstance(event, ToolCallRecord):
        n += 8 + _inner(event.call_id, escaped) + _inner(event.tool, escaped)
        if event.args:
            n += 2 + _quotes(event.args, escaped)
        elif (b'"args":{}' in raw or b'"args": {}' in raw) if isinstance(raw, bytes) else \
                ('"args":{}' in raw or '"args": {}' in raw):
            n += 2  # an empty object at the one place `"args":{}` can stand in a clean tool call
        return n
    if isinstance(event, ToolResultRecord):
        return n + 8 + _inner(event.call_id, escaped) + _field(event.tool, escaped) + _field(event.result, escaped)
    if isinstance(event, StateWriteRecord):
        return n + 4 + _inner(event.key, escaped) + _field(event.value, escaped)
    if isinstance(event, SummaryRecord):
        return n + 8 + _inner(event.text, escaped) + _field(event.to, escaped)
    if isinstance(event, SnapshotRecord):
        return n + 4 + _inner(event.ref, escaped) + _field(event.phase, escaped) + _field(event.call_id, escaped) \
            + _field(event.digest, escaped) + _field(event.state, escaped)
    return n + 4 + _inner(event.text, escaped)  # user, assistant


def _inner(text: str, escaped: bool) -> int:
    """The quotes inside a string (each written `\\"`), when the line has escapes."""
    return text.count('"') if escaped else 0


def _field(value: Any, escaped: bool) -> int:
    """A field's key and value, or nothing for None (its default: absent, or a null that makes the
    counts differ)."""
    return 0 if value is None else 2 + _quotes(value, escaped)


def _meta(meta: MetaRecord, escaped: bool) -> int:
    return (_field(meta.model, escaped) + _field(meta.prompt_version, escaped)
            + _field(meta.finish_reason, escaped) + _field(meta.latency_ms, escaped) + _field(meta.usage, escaped))


def _quotes(value: Any, escaped: bool) -> int:
    """The quotes of a decoded JSON value: 2 for a string and for each key, and the ones inside."""
    if isinstance(value, str):
        return 2 + value.count('"') if escaped else 2
    if isinstance(value, dict):
        n = 2 * len(value)
        for key, item in value.items():
            if escaped:
                n += key.count('"')
            if isinstance(item, str):
                n += 2 + item.count('"') if escaped else 2
            elif isinstance(item, (dict, list)):
                n += _quotes(item, escaped)
        return n
    if isinstance(value, list):
        n = 0
        for item in value:
            if isinstance(item, str):
                n += 2 + item.count('"') if escaped else 2
            elif isinstance(item, (dict, list)):
                n += _quotes(item, escaped)
        return n
    return 0
