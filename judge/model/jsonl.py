r"""JSONL as every writer and reader of judge/ handles it: one JSON value per `\n`-terminated line.

`str.splitlines` also breaks at U+2028, U+2029, U+0085, `\x1c`-`\x1e`, `\v` and `\f`, which JSON
allows raw inside a string: a note holding one would come apart. So readers split on `\n` only
(`split_lines`), and writers escape those three characters (`dumps_line`), so that a reader that
does split on them (a browser's, another tool's) still sees one line. Lone surrogates, which no UTF-8
file can hold, become U+FFFD.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_UNSAFE = re.compile("[\ud800-\udfff\u2028\u2029\x85]")
_ESCAPES = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def escape_line_breaks(text: str) -> str:
    """JSON text with U+2028, U+2029 and U+0085 escaped and lone surrogates replaced."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda m: _ESCAPES.get(m.group(), "\ufffd"), text)


def dumps_line(record: Any, **kwargs: Any) -> str:
    r"""One JSONL line, without its `\n` (UTF-8 text; see the module docstring)."""
    kwargs.setdefault("ensure_ascii", False)
    return escape_line_breaks(json.dumps(record, **kwargs))


def split_lines(text: str) -> Iterator[tuple[int, str]]:
    r"""(1-based line number, line) of JSONL text, split on `\n` only (a `\r` before it dropped)."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line[:-1] if line.endswith("\r") else line
