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

from typing import Any, Final

from msgspec.structs import astuple

from judge.trace.records import ToolCallRecord

BACKSLASH: Final = 92  # ord("\\")


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
    if isinstance(raw, bytes):  # (a byte as an int: `b"\\" in raw` would first try it as one, raising and
        # clearing an error, ~600 instructions; `raw.find` parses its arguments, ~500)
        return raw.count(b'"') != expected_quotes(event, raw, BACKSLASH in raw)
    return raw.count('"') != expected_quotes(event, raw, "\\" in raw)


def expected_quotes(event: Any, raw: str | bytes, escaped: bool) -> int:
    """The double quotes a record's keys and strings take in JSON, counting a field at its default as
    absent (module docs); `escaped`: count the quotes inside them too (each one is `\\"` in the line)."""
    if escaped and ((raw.find(b"\\u") >= 0) if isinstance(raw, bytes) else ("\\u" in raw)):
        return -1  # a `\\u` escape may write a quote without one: never equal (the line is parsed again)
    n = _fields(astuple(event), escaped)
    if n < 0:  # an empty object: absent, if it is a tool call's `args` (defaulting to one) not written out
        n = -n
        if isinstance(event, ToolCallRecord) and not ((raw.find(b'"args":{}') >= 0 or raw.find(b'"args": {}') >= 0)
                                                       if isinstance(raw, bytes) else
                                                       ('"args":{}' in raw or '"args": {}' in raw)):
            n -= 2  # (in a clean tool call `"args":{}` can stand nowhere but as its `args`)
    return 4 + n  # 4: `"kind": "..."`, the tag (no field of the record)


def _fields(values: tuple[Any, ...], escaped: bool) -> int:
    """The quotes of a record's (or its `meta`'s) field values and their keys, None counting as absent;
    negated when one was an empty object (which may be a default: `expected_quotes` looks)."""
    n = 0
    empty = False
    for value in values:
        if value is None:
            continue
        if isinstance(value, str):
            n += 4 + value.count('"') if escaped else 4
        elif isinstance(value, (int, float)):
            n += 2
        elif isinstance(value, (dict, list)):
            n += 2 + _quotes(value, escaped)
            empty = empty or not value
        else:  # `meta`: a record of its own
            n += 2 + abs(_fields(astuple(value), escaped))
    return -n if empty else n


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
