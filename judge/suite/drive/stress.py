"""Variants of a scripted scenario: the control, and the control under a stressor (`KIND[:ARG]`, several
combined with `+`, turns always as the control numbers them). Each variant is a whole scenario:
its script and ledger transformed (judge.suite.drive.stressors), then reviewed by the same reducer
and lint as a scenario file (a transformation that breaks a transition rule is a fixture error), so
`judge grade` grades its traces exactly as `judge run` did once it is written out.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from judge.errors import UsageError
from judge.ledger import ExpectedLedger, build_ledger
from judge.model import Scenario
from judge.suite.drive.stressors import STRESSORS, Stage, completions_resting_on

CONTROL = "control"
ALL = "all"


@dataclass
class Variant:
    """A scenario to drive: the control or a stressed copy, with what the stress did."""

    name: str
    scenario: Scenario
    ledger: ExpectedLedger
    notes: list[str] = field(default_factory=list)
    exercise: list[str] = field(default_factory=list)  # tools the agent must call for the stress to bite

    @property
    def slug(self) -> str:
        """The variant's folder name: `control`, `distance-3`, `correction-browser-webkit`."""
        return re.sub(r"[^\w.]+", "-", self.name).strip("-") or CONTROL

    @property
    def is_control(self) -> bool:
        return self.name == CONTROL


def parse_stress(spec: str) -> list[tuple[str, str | None]]:
    """`distance:3+compaction:4` -> [(distance, 3), (compaction, 4)]; a UsageError names a kind that
    does not exist."""
    parts = []
    for piece in spec.split("+"):
        kind, sep, arg = piece.strip().partition(":")
        if kind not in STRESSORS:
            raise UsageError(f"unknown stressor {kind!r} in {spec!r}; known: {', '.join(STRESSORS)} (or `all`)",
                             field="--stress")
        parts.append((kind, arg.strip() if sep else None))
    return parts


def control(scenario: Scenario, ledger: ExpectedLedger) -> Variant:
    """The scenario as written."""
    return Variant(CONTROL, scenario, ledger)


def stressed(scenario: Scenario, ledger: ExpectedLedger, spec: str, *, file: str = "scenario") -> Variant:
    """The scenario under the stressor(s) of `spec`, reviewed by the reducer and the lint."""
    if scenario.script is None:
        raise UsageError("a stressor transforms the scenario's script: this scenario has no `script`", field="--stress")
    parts = parse_stress(spec)
    name = "+".join(kind if arg is None else f"{kind}:{arg}" for kind, arg in parts)
    stage = Stage(data=copy.deepcopy(scenario.model_dump(by_alias=True, exclude_unset=True, mode="json")),
                  ledger=ledger, name=name)
    for kind, arg in parts:
        STRESSORS[kind](stage, arg)
        stage.ledger = _reviewed(stage.data, name, file)
    stage.data["title"] = f"{scenario.title or scenario.id} [stress: {name}]"
    variant_scenario = Scenario.model_validate(stage.data)
    return Variant(name, variant_scenario, _reviewed(stage.data, name, file), stage.notes, stage.exercise)


def _reviewed(data: dict, name: str, file: str) -> ExpectedLedger:
    return build_ledger(Scenario.model_validate(data), file=f"{file} [stress {name}]")


def default_stressors(scenario: Scenario) -> tuple[list[str], list[str]]:
    """What `--stress all` runs after the control: the script's `stressors`, else every stressor whose
    argument can be read off the scenario; and why the others were left out."""
    script = scenario.script
    if script is None:
        return [], []
    if script.stressors is not None:
        return list(script.stressors), []
    turns = script.turn_numbers()
    middle = turns[len(turns) // 2] if len(turns) > 1 else None
    # the tool the fixtures answer most (the agent is likeliest to call it), ties in turn order
    fixtures = [f.tool for t in script.turns for f in t.fixtures] + [f.tool for f in script.fixtures]
    named = sorted(dict.fromkeys(t for t in fixtures if not any(c in t for c in "*?[")),
                   key=lambda t: -fixtures.count(t))
    data = scenario.model_dump(by_alias=True, exclude_unset=True, mode="json")
    completing = [t for t in named if completions_resting_on(data, t)]
    chosen = ["distance:3", "distraction"]
    skipped = ["correction: needs KEY=VALUE (list it under script.stressors, e.g. correction:browser=webkit)"]
    if named:
        chosen.append(f"tool-contradiction:{named[0]}")
    else:
        skipped.append("tool-contradiction: no fixture names a tool")
    if middle is not None:
        chosen.append(f"compaction:{middle}")
    else:
        skipped.append("compaction: the script has one turn")
    if completing:
        chosen.append(f"failed-action:{completing[0]}")
    else:
        skipped.append("failed-action: no completion rule names a tool the fixtures answer")
    if middle is not None:
        chosen.append(f"handoff:{middle}")
    else:
        skipped.append("handoff: the script has one turn")
    return chosen, skipped


def variants(scenario: Scenario, ledger: ExpectedLedger, stresses: list[str], *, file: str = "scenario"
             ) -> tuple[list[Variant], list[str]]:
    """The variants `--stress` asks for (none: the control alone; `all`: the control, then each default
    stressor); and the notes on stressors `all` left out."""
    out: list[Variant] = []
    skipped: list[str] = []
    wanted = list(stresses) or [CONTROL]
    if ALL in wanted:
        chosen, skipped = default_stressors(scenario)
        at = wanted.index(ALL)
        wanted[at:at + 1] = [CONTROL, *chosen]
    for spec in dict.fromkeys(wanted):
        out.append(control(scenario, ledger) if spec == CONTROL else stressed(scenario, ledger, spec, file=file))
    return out, skipped
