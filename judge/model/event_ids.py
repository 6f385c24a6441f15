"""Event ids in trace order, kept compactly: a report's failing slice can be most of a long run.

A `list[str]` of the 650,032 ids of a one-window slice at a million events is ~41 MB of `str` objects
and pointers (issue 26: half a grade's peak memory). `EventIds` holds ids numbered in a row
(`e17`, `e18`, ...: how most traces number their events) as a prefix, a first number and a count,
and any other ids as one string with the end offset of each (a byte or so of text and 8 bytes an
id). It is a read-only `Sequence[str]`: `len`, indexing, slicing (a list), iteration, equality with
any sequence of strings; `in` of ids numbered in a row is arithmetic (`membership` gives what to ask
many questions of: those ids as they are, any others as a set).

`SliceIds` is the field type of a report's slice: validated from a JSON list (then kept as that
list), accepting an `EventIds` as it is, its JSON Schema an array of strings. Serialized to JSON
(`model_dump_json`) it is written one id at a time (the ids are never all made at once);
`model_dump()` gives a list; judge.render.json_text writes a report's indented JSON around it.
"""

from __future__ import annotations

from array import array
from collections.abc import Container, Iterable, Iterator, Sequence
from typing import Annotated, Any, overload

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

_CHUNK = 4096  # ids joined at a time while collecting (what is held besides the result)


class EventIds(Sequence[str]):
    """Event ids, compactly: `EventIds.numbered("e", 17, 3)` is e17, e18, e19;
    `EventIds.collect(ids)` keeps any ids (none is made again until asked for)."""

    __slots__ = ("_prefix", "_first", "_count", "_text", "_ends")

    def __init__(self) -> None:
        self._prefix = ""
        self._first = 0
        self._count = 0
        self._text: str | None = None  # the ids joined (None: numbered in a row)
        self._ends: array[int] = array("Q")  # where each id ends in _text

    @classmethod
    def numbered(cls, prefix: str, first: int, count: int) -> EventIds:
        """`count` ids `{prefix}{first}`, `{prefix}{first + 1}`, ... (first >= 0)."""
        if first < 0 or count < 0:
            raise ValueError(f"numbered ids need first >= 0 and count >= 0, not {first} and {count}")
        ids = cls()
        ids._prefix, ids._first, ids._count = prefix, first, count
        return ids

    @classmethod
    def collect(cls, ids: Iterable[str]) -> EventIds:
        """Any ids, in order, read once from `ids` (an iterator is fine: a window read again)."""
        out = cls()
        ends, chunks, part = out._ends, [], []
        end = 0
        for name in ids:
            end += len(name)
            ends.append(end)
            part.append(name)
            if len(part) == _CHUNK:
                chunks.append("".join(part))
                part.clear()
        chunks.append("".join(part))
        out._text = "".join(chunks)
        out._count = len(ends)
        return out

    def __len__(self) -> int:
        return self._count

    @property
    def in_a_row(self) -> bool:
        """Whether the ids are numbered in a row (made from their numbers when asked for)."""
        return self._text is None

    def _at(self, i: int) -> str:
        if self._text is None:
            return f"{self._prefix}{self._first + i}"
        return self._text[self._ends[i - 1] if i else 0:self._ends[i]]

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(self._count))]
        i = index + self._count if index < 0 else index
        if not 0 <= i < self._count:
            raise IndexError(f"event id index {index} out of range ({self._count} ids)")
        return self._at(i)

    def __iter__(self) -> Iterator[str]:
        if self._text is None:
            prefix, first = self._prefix, self._first
            return (f"{prefix}{first + i}" for i in range(self._count))
        return self._iter_text()

    def _iter_text(self) -> Iterator[str]:
        text, start = self._text, 0
        assert text is not None  # (called only for collected ids)
        for end in self._ends:
            yield text[start:end]
            start = end

    def __contains__(self, value: object) -> bool:
        if self._text is not None:
            return any(value == name for name in self)
        # Numbered in a row: `{prefix}{n}` with n written as str(int) writes it (no sign, no leading
        # zero, ASCII digits), first <= n < first + count; no id is made.
        if not isinstance(value, str) or not value.startswith(self._prefix):
            return False
        digits = value[len(self._prefix):]
        if not (digits.isascii() and digits.isdigit()) or (digits[0] == "0" and len(digits) > 1):
            return False
        return self._first <= int(digits) < self._first + self._count

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # (a sequence compared by value, like a list)

    def __repr__(self) -> str:
        head = ", ".join(repr(name) for name in self[:3])
        return f"EventIds([{head}{', ...' if self._count > 3 else ''}], {self._count} ids)"

    def __reduce__(self) -> tuple[Any, ...]:  # (a suite worker sends a result's slice to its parent)
        if self._text is None:
            return EventIds.numbered, (self._prefix, self._first, self._count)
        return _from_text, (self._text, self._ends)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        as_list = core_schema.list_schema(core_schema.str_schema())
        return core_schema.json_or_python_schema(
            json_schema=as_list,
            python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), as_list]),
            serialization=core_schema.plain_serializer_function_ser_schema(_serialize, info_arg=True))


def membership(ids: Sequence[str]) -> Container[str]:
    """What `id in ...` is asked of, for many questions: ids numbered in a row as they are (a
    question is arithmetic, no id is made), any others as a set."""
    if isinstance(ids, EventIds) and ids.in_a_row:
        return ids
    return set(ids)


def _from_text(text: str, ends: array[int]) -> EventIds:
    out = EventIds()
    out._text, out._ends, out._count = text, ends, len(ends)
    return out


# The serialization context key under which a writer collects compact id lists instead of having
# them made whole (judge.render.json_text): {"nonce": str, "lists": list}.
SPLICE = "judge.event_ids.splice"


def _serialize(ids: Sequence[str], info: core_schema.SerializationInfo) -> Any:
    if isinstance(ids, list):
        return ids
    splice = (info.context or {}).get(SPLICE) if isinstance(info.context, dict) else None
    if splice is not None:  # a writer puts the ids where this mark is, a few thousand at a time
        splice["lists"].append(ids)
        return f"\x00{splice['nonce']}:{len(splice['lists']) - 1}\x00"
    return iter(ids) if info.mode_is_json() else list(ids)  # JSON: written one id at a time


# A report's failing slice: a list as read from JSON, or EventIds as a grade makes it.
SliceIds = Annotated[Sequence[str], EventIds]
