"""The fake tools of a run: every call answered from the script's fixtures, in order, errors kept.

For a call of tool T with arguments A in turn N, the fixtures of turn N are tried first, then the
script's (or a `--fixtures FILE`'s), each in file order: the first whose tool glob matches T, whose
argument matchers all match A and which is not used up answers. A fixture with `responses` answers
one matching call with each, in order, and is used up after the last. No fixture: the script's
`default`, an error or a timeout (never a silent success). One book per run: the use counts
start again with every run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from judge.checks.arguments import MISSING, arg_at
from judge.checks.matching import matches, tool_is
from judge.model import Script, ToolFixture, ToolResponse
from judge.model.script import Status


@dataclass
class Answer:
    """What a call got, and which fixture gave it (None: the default)."""

    response: ToolResponse
    fixture: str | None

    @property
    def status(self) -> Status:
        return self.response.status


def fixture_matches(fixture: ToolFixture, tool: str, args: dict[str, Any]) -> bool:
    """Whether the fixture is for this tool and every argument matcher matches."""
    if not tool_is(tool, fixture.tool):
        return False
    for path, expected in (fixture.args or {}).items():
        actual = arg_at(args, path)
        if actual is MISSING or not matches(expected, actual):
            return False
    return True


@dataclass
class FixtureBook:
    """The fixtures of one run and how many responses of each are used."""

    script: Script
    shared: list[ToolFixture] | None = None  # a --fixtures FILE's, in place of the script's
    default: ToolResponse | None = None
    used: dict[str, int] = field(default_factory=dict)

    def _candidates(self, turn: int) -> list[tuple[str, ToolFixture]]:
        own = [(f"turns.{i}.fixtures.{j}", f) for i, t in enumerate(self.script.turns) if t.turn == turn
               for j, f in enumerate(t.fixtures)] if self.shared is None else []
        shared = self.shared if self.shared is not None else self.script.fixtures
        return own + [(f"fixtures.{j}", f) for j, f in enumerate(shared)]

    def answer(self, turn: int, tool: str, args: dict[str, Any]) -> Answer:
        """The response to one call (and the fixture's place in the script, `fixtures.2`)."""
        for where, fixture in self._candidates(turn):
            if not fixture_matches(fixture, tool, args):
                continue
            answers = fixture.answers()
            if fixture.responses is None:
                return Answer(answers[0], where)
            n = self.used.get(where, 0)
            if n < len(answers):
                self.used[where] = n + 1
                return Answer(answers[n], where)
        return Answer(self.default or self.script.default, None)
