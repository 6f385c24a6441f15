"""What the trace reader keeps to validate a trace: seen ids and issued call ids, compactly.

A trace can hold millions of events; numbered ids (`e17`, `c4`) cost a bit or two bytes each
instead of a string in a set.
"""

from __future__ import annotations

from array import array
from typing import Any

_DIGITS = "0123456789"


def _numbered(name: str) -> tuple[str, int] | None:
    """(`e`, 17) for `e17`: a name ending in a decimal number without a leading zero (so that the
    number gives the name back), of at most 9 digits; None otherwise."""
    tail = name[1:]  # the common shape first: one letter, then the number
    if tail.isdigit() and tail.isascii() and 0 < len(tail) <= 9 and tail[0] != "0" and not name[0].isdigit():
        return name[0], int(tail)
    head = name.rstrip(_DIGITS)
    k = len(head)
    d = len(name) - k
    if d == 0 or d > 9 or (d > 1 and name[k] == "0"):
        return None
    return head, int(name[k:])


# IdSet and CallTable start as a plain set and dict (the fastest) and turn compact once they hold
# this many entries: a trace of a few hundred thousand events pays nothing for compactness, and
# what a longer trace keeps stays small (a few MB at most for these two, whatever its length).
PLAIN_LIMIT = 1 << 17


class IdSet:
    """An exact set of ids (`add` says whether the id is new). Past PLAIN_LIMIT ids it keeps a
    numbered id as one bit of a bitmap per prefix, and any other id, or one the bitmaps have no
    room for, as a string. Bitmaps grow only within a budget earned by the ids they hold (16 bytes
    each, plus 64 KiB), so sparse or hostile numbering cannot make them large: such ids go to the
    string set instead."""

    __slots__ = ("_bits", "_strings", "_budget", "_plain", "_expect", "_expect_at")

    def __init__(self) -> None:
        self._bits: dict[str, bytearray] = {}
        self._strings: set[str] = set()
        self._budget = 1 << 16
        self._plain = True
        # The id that follows the last numbered one added (`e18` after `e17`), and where its bit is:
        # a trace numbers its events in a row, and comparing with the foretold id costs less than
        # taking each id apart.
        self._expect = ""
        self._expect_at: tuple[bytearray, int, str] | None = None

    def _compact(self) -> None:
        names, self._strings, self._plain = self._strings, set(), False
        for name in names:
            self.add(name)

    def add(self, name: str) -> bool:
        strings = self._strings
        if self._plain:
            if name in strings:
                return False
            strings.add(name)
            if len(strings) >= PLAIN_LIMIT:
                self._compact()
            return True
        if strings and name in strings:
            return False
        if name == self._expect and self._expect_at is not None:
            foretold, n, head = self._expect_at
            byte, mask = n >> 3, 1 << (n & 7)
            if byte < len(foretold) and not foretold[byte] & mask:
                foretold[byte] |= mask
                self._budget += 16
                self._foretell(foretold, head, n + 1)
                return True
        numbered = _numbered(name)
        if numbered is not None:
            head, n = numbered
            byte, mask = n >> 3, 1 << (n & 7)
            bits = self._bits.get(head)
            if bits is None or byte >= len(bits):
                size = len(bits) if bits is not None else 0
                grow = max(byte + 1 - size, size >> 1, 64)
                if grow > self._budget:
                    strings.add(name)
                    return True
                if bits is None:
                    bits = self._bits[head] = bytearray()
                bits.extend(bytes(grow))
                self._budget -= grow
            elif bits[byte] & mask:
                return False
            bits[byte] |= mask
            self._budget += 16
            self._foretell(bits, head, n + 1)
            return True
        strings.add(name)
        return True

    def _foretell(self, bits: bytearray, head: str, n: int) -> None:
        if n < 1_000_000_000:  # (9 digits at most: what _numbered takes apart)
            self._expect, self._expect_at = f"{head}{n}", (bits, n, head)
        else:
            self._expect, self._expect_at = "", None

    def __contains__(self, name: str) -> bool:
        if name in self._strings:
            return True
        numbered = _numbered(name)
        if numbered is None:
            return False
        bits = self._bits.get(numbered[0])
        byte = numbered[1] >> 3
        return bits is not None and byte < len(bits) and bool(bits[byte] & (1 << (numbered[1] & 7)))


class CallTable:
    """call id -> tool name, exact (a mapping with `get`, `in` and assignment). Past PLAIN_LIMIT
    entries a numbered call id costs two bytes (the tool's number in an array per prefix) instead
    of a dict entry and its string; other ids, ids past the budget (as IdSet's, 32 bytes an entry)
    and tools past the 65535th stay in a plain dict."""

    __slots__ = ("_slots", "_other", "_tools", "_tool_no", "_budget", "_plain", "_taken_apart")

    def __init__(self) -> None:
        self._slots: dict[str, array] = {}
        self._other: dict[str, str] = {}
        self._tools: list[str] = [""]  # number 0: no call
        self._tool_no: dict[str, int] = {}
        self._budget = 1 << 16
        self._plain = True
        self._taken_apart: tuple[str, tuple[str, int] | None] = ("", None)  # the last id `get` took apart

    def _compact(self) -> None:
        entries, self._other, self._plain = self._other, {}, False
        for call_id, tool in entries.items():
            self[call_id] = tool

    def get(self, call_id: str, default: Any = None) -> Any:
        other = self._other
        if self._plain:
            return other.get(call_id, default)
        if other and call_id in other:
            return other[call_id]
        numbered = _numbered(call_id)
        self._taken_apart = (call_id, numbered)  # `add` sets what it got: not taken apart twice
        if numbered is not None:
            slots = self._slots.get(numbered[0])
            n = numbered[1]
            if slots is not None and n < len(slots) and slots[n]:
                return self._tools[slots[n]]
        return default

    def __contains__(self, call_id: str) -> bool:
        return self.get(call_id) is not None

    def tools(self) -> set[str]:
        """Every tool name a call id was mapped to."""
        return {*self._tools[1:], *self._other.values()}

    def add(self, call_id: str, tool: str) -> bool:
        """Map a new call id to its tool; False (and nothing changed) when the id is known."""
        if self.get(call_id) is not None:
            return False
        self[call_id] = tool
        return True

    def __setitem__(self, call_id: str, tool: str) -> None:
        other = self._other
        if self._plain:
            other[call_id] = tool
            if len(other) >= PLAIN_LIMIT:
                self._compact()
            return
        if other and call_id in other:
            other[call_id] = tool
            return
        no = self._tool_no.get(tool)
        if no is None and len(self._tools) < 0xFFFF and isinstance(tool, str):
            no = self._tool_no[tool] = len(self._tools)
            self._tools.append(tool)
        seen, apart = self._taken_apart
        numbered = None if no is None else apart if seen is call_id else _numbered(call_id)
        if numbered is not None and no is not None:  # numbered only when no is set
            head, n = numbered
            slots = self._slots.get(head)
            if slots is None or n >= len(slots):
                size = len(slots) if slots is not None else 0
                grow = max(n + 1 - size, size >> 1, 64)
                if 2 * grow <= self._budget:
                    if slots is None:
                        slots = self._slots[head] = array("H")
                    slots.frombytes(bytes(2 * grow))
                    self._budget -= 2 * grow
                else:
                    slots = None
            if slots is not None:
                if not slots[n]:
                    self._budget += 32
                slots[n] = no
                return
        other[call_id] = tool
