"""Regular expressions compiled on first use instead of at import.

A rules-only `judge grade` imports the checks of every rule kind (the scenario format's rule union
needs their models) but runs only those its scenario uses; a module-level `re.compile` made every
grade pay for the patterns of every kind (Python's regex compiler is pure Python: the date, amount,
question and confirmation patterns took ~2% of a 20-event grade). judge.text.cues keeps its own:
its source is part of the local judge's fingerprint (code_sha256), so editing it would make the
shipped calibration record stale. `lazy(pattern, flags)` is typed as the compiled
pattern it stands for: the first attribute read compiles it, and each attribute it hands out
(`search`, `finditer`, ...) is kept on the object, so a hot loop pays one attribute lookup, as it
would on the compiled pattern. Only attributes are forwarded: pass `lazy(...)` where a pattern's
methods are called, never to `re.sub(pattern, ...)` and the like, which want a real `re.Pattern`.
"""

from __future__ import annotations

import re
from typing import Any, cast


class _LazyPattern:
    """The pattern and flags, compiled the first time one of the compiled pattern's attributes is read."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # called only for what the instance does not hold yet
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = re.compile(*self._source)
        value = getattr(compiled, name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r}, {self._source[1]})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, compiled when first used."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags))
