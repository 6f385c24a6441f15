"""Turns inserted into a scenario: the script gets the new turns, and every turn the ledger names from
there on moves by as many (entries' `source_turn`, deltas, checkpoints, sessions, script turns).

A scenario here is its plain data (the dict a YAML file reads as, aliases as written: `class`), so
that a stressor can edit it and the result validates, reduces and writes back like any scenario.
"""

from __future__ import annotations

from typing import Any

TURN_FIELDS = (("ledger", "source_turn"), ("deltas", "turn"), ("checkpoints", "after_turn"),
               ("sessions", "first_turn"))


def script_turns(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The script's turns (a list of dicts) of a scenario's data."""
    return data["script"]["turns"]


def last_turn(data: dict[str, Any]) -> int:
    """The script's last turn: where inserted turns go (they come before it)."""
    return script_turns(data)[-1]["turn"]


def shift(data: dict[str, Any], at: int, by: int) -> None:
    """Every turn at or after `at` moves `by` turns later, in place."""
    for section, name in TURN_FIELDS:
        for item in data.get(section) or []:
            if item.get(name, -1) >= at:
                item[name] += by
    for turn in script_turns(data):
        if turn["turn"] >= at:
            turn["turn"] += by


def insert_turns(data: dict[str, Any], at: int, turns: list[dict[str, Any]]) -> None:
    """Insert `turns` (without numbers) as turns `at`, `at + 1`, ... and move what was there after them."""
    shift(data, at, len(turns))
    numbered = [{"turn": at + i, **t} for i, t in enumerate(turns)]
    script = script_turns(data)
    where = next((i for i, t in enumerate(script) if t["turn"] > at), len(script))
    script[where:where] = numbered


def insert_delta(data: dict[str, Any], delta: dict[str, Any]) -> None:
    """Add a delta after every delta of an earlier or the same turn (deltas stay in turn order)."""
    deltas = data.setdefault("deltas", [])
    where = next((i for i, d in enumerate(deltas) if d["turn"] > delta["turn"]), len(deltas))
    deltas.insert(where, delta)


class TurnMap:
    """Where a turn of the control is in a scenario that had turns inserted (stressors combined with
    `+` name turns as the control numbers them)."""

    def __init__(self) -> None:
        self.insertions: list[tuple[int, int]] = []

    def add(self, at: int, by: int) -> None:
        self.insertions.append((at, by))

    def __call__(self, turn: int) -> int:
        for at, by in self.insertions:
            if turn >= at:
                turn += by
        return turn
