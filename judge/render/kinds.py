"""The rule kinds as a table: `judge rules` in the terminal, and the rule table of docs/scenarios.md."""

from __future__ import annotations

from typing import Any


def kind_rows(specs: dict[str, Any], origin) -> list[dict[str, str]]:
    """One row per registered kind: check, fields, violated when, and where the kind comes from."""
    return [{"check": check, "fields": spec.fields_doc, "violated_when": spec.violated_when,
             "origin": origin(check)} for check, spec in specs.items()]


def markdown_table(rows: list[dict[str, str]]) -> list[str]:
    """The rows as the Markdown table of docs/scenarios.md (scripts/docs_outputs.py keeps it current)."""
    lines = ["| check | fields | violated when |", "|---|---|---|"]
    lines += [f"| `{r['check']}` | {r['fields']} | {r['violated_when']} |" for r in rows]
    return lines
