"""Record and replay: `judge run --record` writes what a run's tools returned as a fixtures file, and
`judge run --fixtures FILE` answers every call from it, so a live run becomes a stable fixture.

A recorded file has one fixture per distinct call (tool and arguments, every argument the call had
as an exact matcher: glob characters in a recorded string are escaped), its results as `responses`
in the order they came (errors and timeouts kept), so a replay answers the same calls the same way
in the same order, and a call the recording never saw gets the default error. Fixtures with more
arguments come first, so a call is answered by the recording of the same call, not of a subset.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judge.errors import JudgeInputError
from judge.ledger import dotted, line_of, read_structured
from judge.model import FixturesFile, Scenario
from judge.model.script import NO_FIXTURE


def load_fixtures(path: str | Path) -> FixturesFile:
    """A fixtures file (YAML or JSON); a JudgeInputError names its line and field."""
    data, lines = read_structured(Path(path))
    try:
        return FixturesFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        message = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
        raise JudgeInputError(message, file=str(path), line=line_of(lines, loc), field=dotted(loc) or None) from None


def with_fixtures(scenario: Scenario, fixtures: FixturesFile) -> Scenario:
    """The scenario with a fixtures file's fixtures and default in place of its script's (its turns'
    own fixtures included): the user messages stay, the tools answer as recorded."""
    script = scenario.script
    assert script is not None
    turns = [t.model_copy(update={"fixtures": []}) for t in script.turns]
    return scenario.model_copy(update={"script": script.model_copy(update={
        "turns": turns, "fixtures": list(fixtures.fixtures), "default": fixtures.default})})


def escape_glob(value: Any) -> Any:
    """A recorded string as a matcher of itself: `*`, `?` and `[` in brackets (fnmatch's escape)."""
    if not isinstance(value, str) or not any(c in value for c in "*?["):
        return value
    return "".join(f"[{c}]" if c in "*?[" else c for c in value)


def recorded_fixtures(scenario: Scenario, run_id: str, uses: list[Any]) -> dict[str, Any]:
    """The fixtures file of one run's tool uses (judge.suite.drive.driver.ToolUse), as plain data."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for use in uses:
        key = (use.tool, json.dumps(use.args, sort_keys=True, default=str))
        fixture = groups.setdefault(key, {"tool": escape_glob(use.tool),
                                          "args": {k: escape_glob(v) for k, v in use.args.items()},
                                          "responses": []})
        fixture["responses"].append({"status": use.status, "result": use.result})
    ordered = sorted(groups.values(), key=lambda f: -len(f["args"]))
    data = {"scenario": scenario.id, "recorded_from": run_id, "fixtures": ordered,
            "default": (scenario.script.default if scenario.script else NO_FIXTURE).model_dump(mode="json")}
    FixturesFile.model_validate(data)  # what is written reads back
    return data
