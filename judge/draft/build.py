"""From drafted items to a scenario: rules, checkpoints, the scenario mapping, and the fixture check.

Checkpoints sit after the turn that states the ledger, after every turn whose deltas change it, and
after the last turn of the trace(s); each keeps the active goal, constraints, permissions, facts
and open questions, and expects the work completed by then. The result must pass the fixture
rules of judge.ledger (the reducer and the lint): an item that breaks one is dropped and said so
in the file, never written as an error for the reviewer to find.
"""

from __future__ import annotations

from typing import Any

from judge.draft.items import DeltaItem, Draft, Entry, RuleItem
from judge.draft.rules import draft_rules
from judge.draft.source import ToolInfo
from judge.errors import FixtureError
from judge.ledger import lint, validate_scenario

RETAINED = ("goal", "constraint", "permission", "fact", "uncertainty")
Ref = Entry | DeltaItem | RuleItem | None


def _active(draft: Draft, entry: Entry, turn: int) -> bool:
    if entry.turn > turn:
        return False
    return not any(d.key == entry.key and d.op == "revoke" and d.turn <= turn for d in draft.deltas)


def checkpoints(draft: Draft) -> None:
    changes: dict[int, list[str]] = {}
    for entry in draft.entries:
        if entry.turn > draft.first_turn:
            changes.setdefault(entry.turn, []).append(f"add {entry.key}")
    for delta in draft.deltas:
        changes.setdefault(delta.turn, []).append(f"{delta.op} {delta.key}")
    turns = sorted({draft.first_turn, *changes, max(draft.last_turn, draft.first_turn)})
    draft.checkpoints, draft.checkpoint_why = [], []
    for turn in turns:
        retain = [e.key for e in draft.entries if e.class_ in RETAINED and _active(draft, e, turn)]
        done = [d.key for d in draft.deltas if d.op == "complete" and d.turn <= turn]
        point: dict[str, Any] = {"after_turn": turn, "must_retain": retain}
        if done:
            point["expect_completed"] = done
        draft.checkpoints.append(point)
        why = []
        if turn == draft.first_turn:
            why.append("the ledger as first stated")
        if turn in changes and turn != draft.first_turn:
            why.append("turn " + str(turn) + ": " + ", ".join(changes[turn]))
        if turn == turns[-1]:
            why.append("the last turn of the trace")
        draft.checkpoint_why.append("; ".join(why))


def _entry_fields(entry: Entry) -> dict[str, Any]:
    data: dict[str, Any] = {"key": entry.key, "class": entry.class_, "value": entry.value}
    data.update({"persistence": entry.persistence, "sensitivity": entry.sensitivity})
    if entry.source != "user":
        data["source"] = entry.source
    if entry.description:
        data["description"] = entry.description
    return data


def scenario_of(draft: Draft) -> tuple[dict[str, Any], dict[tuple[str, int], Ref]]:
    """The scenario mapping, and which drafted item each ledger entry, delta and rule came from."""
    refs: dict[tuple[str, int], Ref] = {}
    ledger: list[dict[str, Any]] = []
    deltas: list[dict[str, Any]] = []
    for entry in [e for e in draft.entries if e.turn == draft.first_turn]:
        refs[("ledger", len(ledger))] = entry
        fields = _entry_fields(entry)
        ledger.append({**{k: fields[k] for k in ("key", "class", "value")}, "source_turn": entry.turn,
                       **{k: v for k, v in fields.items() if k not in ("key", "class", "value")}})
    later: list[tuple[int, int, Any, Ref]] = [(e.turn, 0, e, e) for e in draft.entries if e.turn > draft.first_turn]
    later += [(d.turn, 1, d, d) for d in draft.deltas]
    for _, _, item, ref in sorted(later, key=lambda t: (t[0], t[1])):
        refs[("deltas", len(deltas))] = ref
        if isinstance(item, Entry):
            fields = _entry_fields(item)
            deltas.append({"turn": item.turn, "op": "add", "key": item.key, "value": item.value,
                           "source": item.source, "class": item.class_,
                           **{k: v for k, v in fields.items() if k in ("persistence", "sensitivity", "description")}})
        else:
            deltas.append({"turn": item.turn, "op": item.op, "key": item.key,
                           **({"value": item.value} if item.op == "set" else {}), "source": item.source,
                           **({"note": item.note} if item.note else {})})
    for i, rule in enumerate(draft.rules):
        refs[("rules", i)] = rule
    scenario = {"id": draft.scenario_id, "title": draft.title, "draft": True, "ledger": ledger, "deltas": deltas,
                "checkpoints": draft.checkpoints, "rules": [r.data for r in draft.rules]}
    return scenario, refs


def _drop(draft: Draft, item: Ref, why: str) -> bool:
    if isinstance(item, Entry) and item.key != "goal":
        draft.entries.remove(item)
        draft.deltas = [d for d in draft.deltas if d.key != item.key]
        draft.rules = [r for r in draft.rules if r.key != item.key]
        draft.dropped.append(f"entry {item.key}: {why}")
        return True
    if isinstance(item, DeltaItem):
        draft.deltas.remove(item)
        draft.dropped.append(f"{item.op} {item.key} at turn {item.turn}: {why}")
        return True
    if isinstance(item, RuleItem):
        draft.rules.remove(item)
        draft.dropped.append(f"rule {item.data.get('check')} on {item.key}: {why}")
        return True
    return False


def finish(draft: Draft, tools: dict[str, ToolInfo], *, with_rules: bool = True,
           with_checkpoints: bool = True) -> dict[str, Any]:
    """Rules, checkpoints and a scenario that passes the fixture checks (offending items dropped).
    A policy (`with_checkpoints` False) has none: an implicit final checkpoint covers the run."""
    if with_rules:
        draft.rules = draft_rules(draft, tools)
    for _ in range(50):
        if with_checkpoints:
            checkpoints(draft)
        scenario, refs = scenario_of(draft)
        try:
            model = validate_scenario(scenario, "draft")
        except FixtureError as exc:
            item = _ref(refs, exc.field)
            if item is None or not _drop(draft, item, exc.message):
                raise
            continue
        errors = [i for i in lint(model)[1] if i.level == "error"]
        if not errors:
            return scenario
        item = _ref(refs, errors[0].field)
        if item is None or not _drop(draft, item, errors[0].message):
            raise FixtureError(f"the draft breaks a fixture rule: {errors[0].message}", field=errors[0].field)
    raise FixtureError("the draft could not be made consistent")  # pragma: no cover - 50 drops


def _ref(refs: dict[tuple[str, int], Ref], field: str | None) -> Ref | None:
    """The drafted item behind a fixture field (`ledger.2.value`), if any."""
    loc = _loc(field)
    return refs.get(loc) if loc is not None else None


def _loc(field: str | None) -> tuple[str, int] | None:
    parts = (field or "").split(".")
    if len(parts) >= 2 and parts[0] in ("ledger", "deltas", "rules") and parts[1].isdigit():
        return parts[0], int(parts[1])
    return None
