"""User messages that restate a key after a rule found it violated: the seeds' recovery ("if the user
restates a constraint and the agent returns to correct behavior, the run still contains a drift
failure, but recovery quality matters"). The grade report shows, for a recovered key, the user event
that restated it between the violation and the recovery (judge.grade.windows reads `between`).

A user message restates a key when the reviewed fixture has the user state or set that key at the
message's turn (an `add` or `set` delta with `source: user`), or when the message names the key's
value at that turn: a short value (a name, a number, a path) as a whole word, not negated; a
sentence-valued entry by at least half of its content words (at least two).
"""

from __future__ import annotations

from typing import Any

from judge.ledger import ExpectedLedger
from judge.model.event_view import AnyEventLike, UserLike
from judge.text import cues
from judge.text.lexicon import STOPWORDS

KEEP = 64  # restating messages remembered per key (the latest)
MENTIONS = 8


class Restatements:
    """Per key guarded by a rule, while it is violated and not recovered: the user messages
    restating it, as (trace position, event id)."""

    def __init__(self, ledger: ExpectedLedger, keys: set[str]) -> None:
        self.ledger = ledger
        self.keys = keys
        self.watched: set[str] = set()  # keys a rule found violated and no compliant event recovered yet
        self.found: dict[str, list[tuple[int, str]]] = {}
        self._by_user = {(d.key, d.turn) for d in ledger.scenario.deltas
                         if d.source == "user" and d.op in ("add", "set")}
        self._prepared: dict[str, tuple[Any, list[tuple[Any, frozenset[str] | None]]]] = {}

    def observe(self, event: AnyEventLike, index: int, hits: list[Any]) -> None:
        """One event: a violated hit starts watching its key, a compliant hit on an event that broke
        no rule stops it; a user message is checked against the watched keys."""
        if hits:
            broke = any(hit.violated for hit in hits)
            for hit in hits:
                if hit.violated and hit.key in self.keys:
                    self.watched.add(hit.key)
                elif not broke and not hit.violated:
                    self.watched.discard(hit.key)  # recovered (as judge.grade.windows counts it)
        if event.kind != "user" or not self.watched:
            return
        said = _Said(event.text or "")
        for key in self.watched:
            if self.restates(event, key, said):
                seen = self.found.setdefault(key, [])
                seen.append((index, event.id))
                del seen[:-KEEP]

    def restates(self, event: UserLike, key: str, said: _Said | None = None) -> bool:
        """Whether a user message restates the key at its turn (module docstring)."""
        if (key, event.turn) in self._by_user:
            return True
        said = said or _Said(event.text or "")
        for value, wanted in self._values(key, event.turn):
            if wanted is None:
                if said.affirms(value):  # a compiled pattern of the value
                    return True
            elif said.names_most(wanted):
                return True
        return False

    def _values(self, key: str, turn: int) -> list[tuple[Any, frozenset[str] | None]]:
        """The key's matchable values at a turn, prepared once per value: (its pattern, None) for a
        short value, (value, its content words) for a sentence with at least two of them."""
        current = self.ledger.history(key).value_at(turn)
        cached = self._prepared.get(key)
        if cached is None or cached[0] is not current:
            prepared: list[tuple[Any, frozenset[str] | None]] = []
            for value in cues.scalar_values(current):
                if cues.is_short(value):
                    if not cues.is_weak(value):
                        prepared.append((cues.value_pattern(value), None))
                    continue
                wanted = frozenset(w for w in cues.words(value) if len(w) > 3 and w not in STOPWORDS)
                if len(wanted) >= 2:
                    prepared.append((value, wanted))
            cached = self._prepared[key] = (current, prepared)
        return cached[1]

    def between(self, key: str, after: int, before: int) -> str | None:
        """The latest user message restating `key` strictly between two trace positions."""
        found = [eid for index, eid in self.found.get(key, ()) if after < index < before]
        return found[-1] if found else None


class _Said:
    """One user message, its words worked out once for every key it is checked against."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._words: set[str] | None = None
        self._stems: set[str] | None = None

    def affirms(self, pattern: Any) -> bool:
        """The value (its cues.value_pattern) is named, not negated ("not chromium"), in one of its
        first MENTIONS mentions (a bound: each negation test reads the text before the mention)."""
        for n, match in enumerate(pattern.finditer(self.text)):
            if n >= MENTIONS:
                return False
            if not cues.negated_at(self.text, match.start(), match.end()):
                return True
        return False

    def names_most(self, wanted: frozenset[str]) -> bool:
        """At least half of a value's content words occur in the text (a word of five letters or
        more also by its first five: "application" for "applications")."""
        if self._words is None:
            self._words = set(cues.words(self.text))
            self._stems = {w[:5] for w in self._words if len(w) >= 5}
        stems = self._stems or set()
        named = sum(w in self._words or (len(w) >= 5 and w[:5] in stems) for w in wanted)
        return named * 2 >= len(wanted)
