"""What a draft is made of: entries, deltas and rules, each with the evidence it came from.

Every item names the event(s) and the quoted words it was drafted from (`Evidence`), where it came
from (`origin`: the offline cues, the model, or both) and what a reviewer should check about it
(`review`: a guessed sensitivity, an action no known tool performs, a disagreement with the model).
The YAML writer (judge.draft.write) turns these into the scenario file and its comments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

QUOTE_LIMIT = 140  # characters of a quote kept in a comment


@dataclass(frozen=True)
class Evidence:
    """The event an item was drafted from and the words it relied on."""

    event: str
    turn: int
    kind: str  # user | tool-result | policy (a sentence of a policy document)
    quote: str
    section: str | None = None  # policy: the heading the sentence sits under

    def short(self, kind: str | None = None) -> str:
        """`e8 (user, turn 4): "Use Firefox from now on"`; `kind` replaces the event's kind in it; a
        policy sentence: `wiki.md:44 (Modify flight): "..."`."""
        quote = " ".join(self.quote.split())
        if len(quote) > QUOTE_LIMIT:
            quote = quote[: QUOTE_LIMIT - 1] + "…"
        if self.kind == "policy":
            return f'{self.event} ({self.section or "policy"}): "{quote}"'
        return f'{self.event} ({kind or self.kind}, turn {self.turn}): "{quote}"'


@dataclass
class Entry:
    """A ledger entry as drafted: stated at `turn` (the first user turn: a ledger entry; later: an
    `add` delta). The fields after `review` are what the rule drafting needs to know about it."""

    key: str
    class_: str
    value: Any
    turn: int
    evidence: list[Evidence]
    persistence: str = "task"
    sensitivity: str = "normal"
    source: str = "user"
    description: str | None = None
    origin: str = "offline"
    review: list[str] = field(default_factory=list)
    mode: str = ""  # goal | request | prohibit | only | permit | confirm | keep | fact | uncertainty | tool-fact
    verbs: tuple[str, ...] = ()  # canonical action verbs the entry forbids (or requests, for a completion)
    objects: tuple[str, ...] = ()  # content words of the action's object
    values: tuple[str, ...] = ()  # values the forbidden action is about (paths, ids, environments)
    allowed: tuple[str, ...] = ()  # verbs an allow-list or a grant allows
    allowed_values: tuple[str, ...] = ()  # what an allow-list allows ("only edit X": X)
    kinds: dict[str, str] = field(default_factory=dict)  # value -> its kind (path, id, environment, ...)
    value_kind: str | None = None  # facts: the kind of value (browser, path, id, version, ...)
    context: tuple[str, ...] = ()  # facts: the words around the value (to recognise it again)
    alternatives: tuple[str, ...] = ()  # uncertainties: the options the user named
    quantity_one: bool = False  # requests: "one", "a single", "once"
    sensitivity_why: str | None = None  # the cue a non-normal sensitivity was guessed from
    bound: tuple[str, float] | None = None  # limits: ("max" | "min", the number)
    confirmable: bool = False  # limits: the user may allow going beyond the bound ("without asking me")
    value_nouns: dict[str, str] = field(default_factory=dict)  # value -> the noun next to it ("staging cluster")
    policy_actions: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # policy: (verb, object) pairs
    conditional: bool = False  # policy: stated under a condition the drafter cannot check (no rule)

    def note(self, text: str) -> None:
        if text not in self.review:
            self.review.append(text)


@dataclass
class DeltaItem:
    turn: int
    op: str  # set | complete | revoke (an `add` is an Entry with a later turn)
    key: str
    evidence: list[Evidence]
    value: Any = None
    source: str = "user"
    note: str | None = None
    origin: str = "offline"
    review: list[str] = field(default_factory=list)


@dataclass
class RuleItem:
    """A rule as it goes into the file (`data`), why its tool is known (`tool_from`) and its evidence."""

    data: dict[str, Any]
    evidence: list[Evidence]
    tool_from: str | None = None  # "the trace" | "--tools" | None (no tool: e.g. superseded-value on any)
    origin: str = "offline"
    review: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.data["key"]

    def same_as(self, other: RuleItem) -> bool:
        keys = ("check", "key", "tool", "arg", "args", "allow")
        return all(self.data.get(k) == other.data.get(k) for k in keys)


@dataclass
class Draft:
    """A proposed scenario: items with evidence, checkpoints, and notes for the file header."""

    scenario_id: str
    title: str
    first_turn: int
    last_turn: int
    entries: list[Entry] = field(default_factory=list)
    deltas: list[DeltaItem] = field(default_factory=list)
    rules: list[RuleItem] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    checkpoint_why: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)  # provenance lines for the top comment
    notes: list[str] = field(default_factory=list)  # file-level review notes
    dropped: list[str] = field(default_factory=list)  # items the fixture checks refused, with why
    task_event: str | None = None  # no user message: the task statement drafted from in its place
    policy: bool = False  # drafted from a written policy (judge.draft.policy), not from traces

    def entry(self, key: str) -> Entry | None:
        return next((e for e in self.entries if e.key == key), None)

    def keys(self) -> list[str]:
        return [e.key for e in self.entries]

    def new_key(self, base: str) -> str:
        """`base`, or `base_2`, `base_3`... when taken."""
        base = base or "item"
        taken = set(self.keys())
        key, n = base, 2
        while key in taken:
            key, n = f"{base}_{n}", n + 1
        return key
