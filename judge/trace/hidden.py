"""Values a scenario declares as someone else's (its `no-leak` rules' `values`): redacted as kind
`no_leak` wherever the trace is read for showing or sending (the judge's requests, the run page, the
review page), as the detectors' kinds are.

The rule itself still sees them: the grader's reader hands every record holding one to the rule
before redaction (judge.checks.kinds.no_leak.scan_raw_record). Values are found case-insensitively, by one
RE2 automaton (linear in the text whatever the values); a raw JSONL line is searched for them as
written and as JSON escapes them, so a line the precheck would clear still takes the slow path.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import re2

MAX_VALUES = 10_000


def _options() -> Any:
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    options.max_mem = 64 << 20
    return options


class HiddenValues:
    """A set of values to redact (`spans`) and to look for in raw lines (`in_raw`)."""

    def __init__(self, values: Iterable[str]) -> None:
        self.values = tuple(sorted({v for v in values if isinstance(v, str) and v.strip()}, key=len,
                                   reverse=True)[:MAX_VALUES])
        forms: set[str] = set()
        for value in self.values:
            escaped = json.dumps(value, ensure_ascii=False)[1:-1]
            forms.update((value, escaped, escaped.replace("/", "\\/")))
        self._text = re2.compile("|".join(re2.escape(v) for v in self.values), _options()) if self.values else None
        raw = "|".join(re2.escape(f) for f in sorted(forms, key=len, reverse=True))
        self._raw = re2.compile(raw.encode("utf-8"), _options()) if forms else None

    def __bool__(self) -> bool:
        return bool(self.values)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, "no_leak") of every occurrence in `text`."""
        if self._text is None:
            return []
        return [(m.start(), m.end(), "no_leak") for m in self._text.finditer(text)]

    def in_text(self, text: str) -> bool:
        return self._text is not None and self._text.search(text) is not None

    def in_raw(self, raw: bytes | str) -> bool:
        """Does a raw JSONL line hold a value, as written or JSON-escaped?"""
        if self._raw is None:
            return False
        data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
        return self._raw.search(data) is not None
