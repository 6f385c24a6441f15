"""The lint of a scenario's `script:` against its ledger: the script's user messages are what the
ledger's user-stated turns refer to, and `judge run` drives only as far as the script goes."""

from __future__ import annotations

from collections.abc import Callable

from judge.model import Scenario

Add = Callable[[str, str, tuple], None]


def lint_script(scenario: Scenario, add: Add) -> None:
    """Warnings: a user-stated entry or delta at a turn where the script says nothing; a checkpoint
    after the script's last turn; `to` on a turn that hands nothing over."""
    script = scenario.script
    if script is None:
        return
    said = {t.turn for t in script.turns if t.messages}
    first, last = script.turns[0].turn, script.turns[-1].turn
    for i, entry in enumerate(scenario.ledger):
        if entry.source == "user" and entry.source_turn >= first and entry.source_turn not in said:
            add("warning", f"stated by the user at turn {entry.source_turn}, where the script has no user message "
                "(`source_turn` refers to the script's turns)", ("ledger", i, "source_turn"))
    for i, delta in enumerate(scenario.deltas):
        if delta.source == "user" and delta.turn not in said:
            add("warning", f"a user delta at turn {delta.turn}, where the script has no user message",
                ("deltas", i, "turn"))
    for i, checkpoint in enumerate(scenario.checkpoints):
        if checkpoint.after_turn > last:
            add("warning", f"after the script's last turn ({last}): `judge run` never reaches it",
                ("checkpoints", i, "after_turn"))
    for i, turn in enumerate(script.turns):
        if turn.to is not None and turn.reset != "handoff":
            add("warning", "`to` names who takes over at a handoff; this turn hands nothing over",
                ("script", "turns", i, "to"))
