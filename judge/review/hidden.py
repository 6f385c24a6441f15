"""The no-leak values of a graded run's scenario, for the pages that show its trace again.

A page reads the trace through the redacting reader (judge.trace.TraceReader), and the values a
scenario's `no-leak` rules declare as someone else's are redacted there too (judge.trace.hidden):
so a page needs the scenario. It is the file the report's provenance names (its `inputs.scenario`),
else a file with the run's scenario id in the folders given. When the run redacted such values when
it was graded (its `redactions` count `no_leak`) and the scenario cannot be read, the page shows no
event text at all rather than the values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError

WITHHELD = ("event texts are not shown: this run's trace holds values of its scenario's no-leak rules, "
            "and the scenario file ({}) was not found to redact them")


def _get(run: Any, name: str) -> Any:
    return run.get(name) if isinstance(run, dict) else getattr(run, name, None)


def _named_scenario(run: Any) -> str | None:
    inputs = (_get(run, "provenance") or {}).get("inputs") or {}
    scenario = inputs.get("scenario") if isinstance(inputs, dict) else None
    return scenario.get("path") if isinstance(scenario, dict) and isinstance(scenario.get("path"), str) else None


def run_hidden(run: Any, places: Sequence[Path] = (), find: Callable[[str], Path | None] | None = None,
               scenario_id: str | None = None) -> tuple[tuple[str, ...], str | None]:
    """(the no-leak values of the run's scenario, None), or ((), why the page must withhold event
    texts). `find(scenario_id)`: another way to find the scenario file (the review page's index, a
    suite report's `file`); `scenario_id`: the run's scenario when the run does not say (a suite's)."""
    from judge.ledger import hidden_values, load_scenario

    wanted = str(scenario_id or _get(run, "scenario"))
    named = _named_scenario(run)
    candidates: list[Path] = []
    if named:
        given = Path(named)
        candidates += [given] if given.is_absolute() else [Path.cwd() / given, *(Path(p) / given for p in places),
                                                           *(Path(p) / given.name for p in places)]
    if find is not None:
        found = find(wanted)
        if found is not None:
            candidates.append(found)
    for path in candidates:
        try:
            if path.is_file():
                scenario, _ = load_scenario(path)
                if scenario.id == wanted:
                    return hidden_values(scenario), None
        except (JudgeInputError, OSError):
            continue
    if (_get(run, "redactions") or {}).get("no_leak"):
        return (), WITHHELD.format(named or wanted)
    return (), None
