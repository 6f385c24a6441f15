"""A checkpoint's trace slice cut into embeddable units, with the links the offline judge needs.

A unit is one thing an event says: a sentence of assistant or summary text, a tool call rendered
as `tool: arg value, ...`, a tool result as `tool status: field value, ...`, a state write as
`set key to value`. Each unit keeps its event and its role, because only the agent's own units can
uphold or violate an entry: tool output is the environment and user text is the instruction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from judge.judges.base import LedgerRow
from judge.judges.local.params import Thresholds
from judge.model import AssistantEvent, Event, StateWriteEvent, SummaryEvent, ToolCallEvent, ToolResultEvent, UserEvent
from judge.text import cues

ACTION = "action"  # tool call or state write
AGENT_TEXT = "agent-text"  # assistant or summary sentence
TOOL_OUTPUT = "tool-output"
USER = "user"
AGENT_ROLES = (ACTION, AGENT_TEXT)


@dataclass(frozen=True)
class Unit:
    position: int  # position among the slice's units
    index: int  # position of its event in the slice
    event: Any  # one of the judge.model event classes
    role: str
    text: str


@dataclass
class SliceView:
    """The slice as units plus unit-to-entry cosine similarities (filled by the judge), and the
    thresholds the rules decide by (judge.judges.local.params)."""

    events: tuple[Event, ...]
    units: list[Unit]
    thresholds: Thresholds
    similarity: dict[str, list[float]] = field(default_factory=dict)  # key -> one per unit
    # key -> sentence-long value (current or superseded) -> one cosine per unit
    value_similarity: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    # key -> summary event id -> best cosine of the summary's sentences and clauses to the entry
    summary_similarity: dict[str, dict[str, float]] = field(default_factory=dict)
    # key -> (unit, the statement restating the entry, the fact-consistency model's verdict)
    restated: dict[str, list[tuple[Unit, str, Any]]] = field(default_factory=dict)
    unit_vectors: Any = None  # normalised embeddings, one row per unit

    def __post_init__(self) -> None:
        self.results_by_call: dict[str, tuple[int, ToolResultEvent]] = {}
        self.user_turns: dict[int, list[int]] = {}
        for index, event in enumerate(self.events):
            if isinstance(event, ToolResultEvent):
                self.results_by_call.setdefault(event.call_id, (index, event))
            elif isinstance(event, UserEvent):
                self.user_turns.setdefault(event.turn, []).append(index)

    def sim(self, key: str, unit: Unit) -> float:
        return self.similarity[key][unit.position] if key in self.similarity else 0.0

    def scored(self, key: str, roles: Iterable[str] = AGENT_ROLES) -> list[tuple[Unit, float]]:
        wanted = set(roles)
        scores = self.similarity.get(key, [0.0] * len(self.units))
        return [(unit, score) for unit, score in zip(self.units, scores, strict=False) if unit.role in wanted]

    def related(self, key: str, threshold: float,
                roles: Iterable[str] = AGENT_ROLES) -> list[tuple[Unit, float]]:
        return [(unit, score) for unit, score in self.scored(key, roles) if score >= threshold]

    def after(self, unit: Unit, turn: int) -> bool:
        """Whether the unit comes after what was said at `turn` (a supersession's turn).

        Same-turn events count as after, unless a user event of that turn comes later in the
        slice: the correction is usually the turn's first event.
        """
        if unit.event.turn != turn:
            return unit.event.turn > turn
        return not any(index > unit.index for index in self.user_turns.get(turn, []))

    def tool_calls(self, before: int | None = None) -> list[Unit]:
        return [unit for unit in self.units if isinstance(unit.event, ToolCallEvent)
                and (before is None or unit.index < before)]

    def result_of(self, call: ToolCallEvent) -> tuple[int, ToolResultEvent] | None:
        return self.results_by_call.get(call.call_id)


def slice_units(events: Iterable[Event]) -> list[Unit]:
    units: list[Unit] = []
    for index, event in enumerate(events):
        for role, text in _texts_of(event):
            if text.strip():
                units.append(Unit(position=len(units), index=index, event=event, role=role,
                                  text=text))
    return units


def _texts_of(event: Any) -> list[tuple[str, str]]:
    if isinstance(event, (AssistantEvent, SummaryEvent)):
        return [(AGENT_TEXT, sentence) for sentence in cues.sentences(event.text)]
    if isinstance(event, UserEvent):
        return [(USER, sentence) for sentence in cues.sentences(event.text)]
    if isinstance(event, ToolCallEvent):
        return [(ACTION, f"{_spaced(event.tool)}: {cues.render(event.args)}")]
    if isinstance(event, ToolResultEvent):
        name = _spaced(event.tool or "tool")
        return [(TOOL_OUTPUT, f"{name} {event.status}: {cues.render(event.result)}")]
    if isinstance(event, StateWriteEvent):
        return [(ACTION, f"set {_spaced(event.key)} to {cues.render(event.value)}")]
    return []


_CLAUSE = re.compile(r";\s*|,\s+|:\s+|\s+-\s+|\s+and\s+")


def summary_clauses(events: Iterable[Event]) -> list[tuple[str, str]]:
    """(summary event id, clause) for every clause of two words or more of the slice's summaries."""
    out = []
    for event in events:
        if isinstance(event, SummaryEvent):
            for sentence in cues.sentences(event.text):
                parts = [p.strip() for p in _CLAUSE.split(sentence) if len(p.split()) >= 2]
                out += [(event.id, p) for p in dict.fromkeys([sentence] + parts)]
    return out


def _spaced(name: str) -> str:
    return name.replace("_", " ").replace("-", " ")


def entry_text(row: LedgerRow) -> str:
    """What an entry is about, for retrieval: key words, current value and description."""
    parts = [f"{_spaced(row.key)}: {cues.render(row.value)}"]
    if row.description:
        parts.append(row.description)
    return ". ".join(parts)
