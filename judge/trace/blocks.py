"""The lines of a trace, a block at a time, each with what the reader should do with it.

A file is read in blocks of about a megabyte of whole lines (hashed on the way when asked: the
suite's sha256 of a trace costs no second pass). One automaton pass over a block finds the lines
that may need redacting (judge.trace.prescan); the line test of judge.trace.precheck decides those,
so a line is flagged exactly when that test says yes. Each line is yielded as
(line number, raw line, flag):

- CLEAN: nothing to redact; decode it straight from its bytes;
- NEEDS_PYDANTIC: nothing to redact, but nested deeply enough that only pydantic's JSON parser,
  whose nesting limit the reader relies on, may decode it fast;
- SLOW: parse, redact and validate it (it may need redacting, is very long, or is no text).

Lines given as an iterable (the HTTP service, tests) are checked CHUNK at a time the same way.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from itertools import count, islice
from pathlib import Path
from typing import Any, BinaryIO

from judge.errors import TraceError
from judge.trace.precheck import CHUNK, found_line_needs_redaction, lines_needing_redaction
from judge.trace.prescan import found_lines

CLEAN, SLOW, NEEDS_PYDANTIC = 0, 1, 2
BLOCK = 1 << 20
# A line this long goes to the slow path straight: the detectors' own gates cost what the
# precheck would.
LONG_LINE = 1 << 16
# Nesting N levels deep takes N opening brackets and 2N bytes: a shorter line, or one with fewer
# brackets, is within pydantic's nesting limit (200), which msgspec's (about 1000) is not.
DEEP_BYTES, DEEP_BRACKETS = 380, 190


def _flag(raw: bytes | str) -> int:
    """CLEAN, or NEEDS_PYDANTIC for a line that might nest too deep (see DEEP_BYTES)."""
    if len(raw) >= DEEP_BYTES:
        if isinstance(raw, bytes):
            if raw.count(b"[") + raw.count(b"{") >= DEEP_BRACKETS:
                return NEEDS_PYDANTIC
        elif raw.count("[") + raw.count("{") >= DEEP_BRACKETS:
            return NEEDS_PYDANTIC
    return CLEAN


def _lines(block: bytes) -> list[bytes]:
    """The lines of a block of whole lines (each ending in a newline), without their newlines."""
    lines = block.split(b"\n")
    lines.pop()  # (the empty piece after the last newline)
    return lines


class BlockReader:
    """The lines of one file; `sha256()` once they were all read (with `digest=True`).

    Where each block began is kept (its byte offset and the number of lines before it: one pair per
    megabyte of trace), so that `lines_from` can read the file again from any line already read,
    without holding a line of it in between."""

    def __init__(self, path: Path, *, max_line: int, digest: bool = False) -> None:
        self.path = path
        self.max_line = max_line
        self._hash = hashlib.sha256() if digest else None
        self._done = False
        self.bytes_read: int | None = None  # once the file was read to its end
        self._starts: list[int] = []   # lines before each block read so far
        self._offsets: list[int] = []  # byte offset of each block read so far

    def sha256(self) -> str | None:
        return self._hash.hexdigest() if self._hash is not None and self._done else None

    def _error(self, message: str, line: int | None = None) -> TraceError:
        return TraceError(message, file=str(self.path), line=line)

    def lines(self) -> Iterator[tuple[int, bytes, int]]:
        try:
            handle = self.path.open("rb")
        except OSError as exc:
            raise self._error(f"cannot read: {exc.strerror}") from None
        with handle:
            data = handle.read(8192)
            if b"\x00" in data:
                raise self._error("binary file, expected JSONL text")
            update = self._hash.update if self._hash is not None else None
            yield from self._lines(handle, data, 0, 0, update, True)
            self._done = True
            self.bytes_read = handle.tell()

    def lines_from(self, line: int) -> Iterator[tuple[int, bytes, int]]:
        """The lines from line number `line` (1-based; a line `lines()` already yielded) to the end,
        read again from the file, with the same flags."""
        at = bisect_right(self._starts, line - 1) - 1
        if at < 0:
            raise ValueError(f"line {line} was not read yet")
        try:
            handle = self.path.open("rb")
        except OSError as exc:
            raise self._error(f"cannot read: {exc.strerror}") from None
        with handle:
            handle.seek(self._offsets[at])
            for item in self._lines(handle, handle.read(BLOCK), self._starts[at], self._offsets[at], None, False):
                if item[0] >= line:
                    yield item

    def _lines(self, handle: BinaryIO, data: bytes, lineno: int, offset: int, update: Callable[[bytes], Any] | None,
               mark: bool) -> Iterator[tuple[int, bytes, int]]:
        """The lines of `handle` from `data` on (`lineno` lines and `offset` bytes before it)."""
        parts: list[bytes] = []
        carried = 0
        while data:
            if update is not None:
                update(data)
            cut = data.rfind(b"\n") + 1
            if not cut:
                parts.append(data)
                carried += len(data)
                if carried > self.max_line:
                    raise self._too_long(lineno + 1)
            else:
                parts.append(data[:cut])
                block = b"".join(parts) if len(parts) > 1 else parts[0]
                parts = [data[cut:]]
                carried = len(parts[0])
                if mark:
                    self._starts.append(lineno)
                    self._offsets.append(offset)
                lines = _lines(block)
                yield from self._block(block, lines, lineno)
                lineno += len(lines)
                offset += len(block)
            data = handle.read(BLOCK)
        if carried:
            if mark:
                self._starts.append(lineno)
                self._offsets.append(offset)
            block = b"".join(parts) + b"\n"
            yield from self._block(block, _lines(block), lineno)

    def _too_long(self, line: int) -> TraceError:
        return self._error(f"line longer than the limit of {self.max_line // (1024 * 1024)} MB", line)

    def _block(self, block: bytes, lines: list[bytes], lineno: int) -> Iterator[tuple[int, bytes, int]]:
        """The lines of `block` (whole lines, each ending in a newline; `lines`, without them) with
        their flags."""
        flags = bytearray(len(lines))
        whole, runs = found_lines(block, lines)
        for indices, runs_only in ((whole, False), (runs, True)):
            for index in indices:
                raw = lines[index]
                try:
                    flags[index] = SLOW if len(raw) >= LONG_LINE else \
                        found_line_needs_redaction(raw.decode("utf-8") + "\n", runs_only)
                except UnicodeDecodeError:
                    flags[index] = SLOW  # the slow path names the line
        limit = self.max_line if len(block) > self.max_line else 0
        first = lineno + 1
        # Only long lines are looked at again (their size limit, their nesting); the block's lines
        # are then handed on by a zip, without a step of Python per line.
        for index in [i for i, size in enumerate(map(len, lines)) if size >= DEEP_BYTES]:
            raw = lines[index]
            if limit and len(raw) >= limit:
                raise self._too_long(first + index)
            if not flags[index]:
                flags[index] = SLOW if len(raw) >= LONG_LINE else _flag(raw)
        return zip(count(first), lines, flags)


def checked_items(items: Iterable[Any]) -> Iterator[tuple[int, Any, int]]:
    """(line number, item, flag) for lines given one by one: text lines are prechecked CHUNK at a
    time; bytes and already parsed objects take the slow path."""
    numbered = enumerate(items, start=1)
    while batch := list(islice(numbered, CHUNK)):
        texts = [raw for _, raw in batch if type(raw) is str and len(raw) < LONG_LINE]
        flags = iter(lines_needing_redaction(texts))
        for lineno, raw in batch:
            if type(raw) is str and len(raw) < LONG_LINE:
                flag = next(flags)
                yield lineno, raw, flag or _flag(raw)
            else:
                yield lineno, raw, SLOW
