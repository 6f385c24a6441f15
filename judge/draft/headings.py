"""Markdown ATX headings (`## Refunds ##`) of one line, read in time linear in the line.

The pattern `^\\s{0,3}#{1,6}\\s+(.*?)\\s*#*\\s*$` backtracks: a heading followed by a few thousand
spaces and a letter took Python's `re` tens of seconds (policy documents and task statements are
user input). The marker is matched here, and the closing hashes and spaces are stripped in code.
"""

from __future__ import annotations

import re

_MARKER = re.compile(r"\s{0,3}(#{1,6})\s")  # linear: bounded repeats, then one whitespace


def heading(line: str) -> tuple[int, str] | None:
    """(level, title) when the line is an ATX heading, else None; the title without its closing
    hashes or surrounding spaces (`## Refunds ##` -> (2, "Refunds"))."""
    marker = _MARKER.match(line)
    if marker is None:
        return None
    return len(marker.group(1)), line[marker.end():].strip().rstrip("#").rstrip()
