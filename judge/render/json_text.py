"""A report's JSON text in pieces, so that writing it never holds a long run's slice whole.

The JSON a report file holds is `json.dumps(model.model_dump(mode="json", by_alias=True), indent=2,
ensure_ascii=False)`: a contract, byte for byte (the goldens and docs outputs hold it). Made that way
whole, the failing slice of a one-window run of a million events (650,032 ids, kept compactly as
judge.model.event_ids.EventIds) became a list of 650,032 strings and then some two million pieces of
text: ~170 MB for a 12 MB file. `json_chunks` dumps everything else as before, with a mark (holding a
random nonce, so no trace text can forge it) where each compact id list goes, and writes each list
where its mark is, a few thousand ids at a time, indented as `json.dumps` indents it.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any

from pydantic import BaseModel

from judge.model.event_ids import SPLICE

_BATCH = 4096  # ids written per piece


def json_chunks(model: BaseModel) -> Iterator[str]:
    """The pieces of `json.dumps(model.model_dump(mode="json", by_alias=True), indent=2,
    ensure_ascii=False) + "\\n"`, joined: the same text."""
    splice: dict[str, Any] = {"nonce": secrets.token_hex(16), "lists": []}
    data = model.model_dump(mode="json", by_alias=True, context={SPLICE: splice})
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    lists: list[Sequence[str]] = splice["lists"]
    if not lists:
        yield text
        return
    start = 0
    # json.dumps escapes the mark's NUL characters: "\u0000<nonce>:<n>\u0000"
    for found in re.finditer(r'"\\u0000' + splice["nonce"] + r':(\d+)\\u0000"', text):
        yield text[start:found.start()]
        line = text[text.rfind("\n", 0, found.start()) + 1:found.start()]
        indent = len(line) - len(line.lstrip(" "))  # the key's line's indentation
        yield from _list_chunks(lists[int(found.group(1))], indent)
        start = found.end()
    yield text[start:]


def _list_chunks(ids: Sequence[str], indent: int) -> Iterator[str]:
    """`ids` as json.dumps(indent=2) writes a list whose opening line is indented by `indent`."""
    if not len(ids):
        yield "[]"
        return
    inner = "\n" + " " * (indent + 2)
    items = iter(ids)
    first = True
    while batch := list(islice(items, _BATCH)):
        body = ("," + inner).join(json.dumps(i, ensure_ascii=False) for i in batch)
        yield ("[" + inner if first else "," + inner) + body
        first = False
    yield "\n" + " " * indent + "]"
