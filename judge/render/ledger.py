"""Views of the expected ledger for `judge ledger`: JSON and rich tables, turn by turn."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from judge.ledger import EntrySnapshot, ExpectedLedger
from judge.render import style


def _turns(ledger: ExpectedLedger, turn: int | None) -> list[int]:
    if turn is not None:
        return [turn]
    starts = {h.introduced for h in ledger.keys.values()}
    return sorted(starts | {d.turn for d in ledger.scenario.deltas})


def _entry_json(e: EntrySnapshot) -> dict[str, Any]:
    return {"key": e.key, "class": e.class_, "value": e.value, "status": e.status,
            "sensitivity": e.sensitivity, "persistence": e.persistence, "source_turn": e.source_turn,
            "superseded": [{"value": v, "replaced_at": t} for v, t in e.superseded]}


def ledger_json(ledger: ExpectedLedger, turn: int | None) -> dict[str, Any]:
    return {"scenario": ledger.scenario.id, "turns": [
        {"turn": t,
         "delta": [d.model_dump(mode="json", by_alias=True, exclude_none=True) for d in ledger.deltas_at(t)],
         "ledger": [_entry_json(e) for e in ledger.expected_ledger_at(t)]}
        for t in _turns(ledger, turn)]}


def render_ledger(ledger: ExpectedLedger, turn: int | None, console: Console) -> None:
    for t in _turns(ledger, turn):
        deltas = ledger.deltas_at(t)
        title = f"after turn {t}"
        if deltas:
            title += ": " + "; ".join(f"{d.op} {d.key}" + (f" = {d.value!r}" if d.value is not None else "")
                                      + f" ({d.source})" for d in deltas)
        table = style.table("key", "class", "status", "sensitivity", "persistence", "superseded", title=title,
                            note="value")
        table.columns[0].overflow, table.columns[0].no_wrap = "fold", False
        table.columns[5].overflow, table.columns[5].no_wrap = "fold", False
        for e in ledger.expected_ledger_at(t):
            old = ", ".join(f"{v!r}@{r}" for v, r in e.superseded) or "-"
            table.add_row(style.cell(e.key), e.class_, e.status, e.sensitivity, e.persistence, style.cell(old),
                          style.cell(repr(e.value) if not isinstance(e.value, str) else e.value),
                          style="dim" if e.status in ("revoked",) else None)
        style.render(console, table)
        console.print()
