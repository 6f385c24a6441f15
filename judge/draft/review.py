"""What a reviewer should check in a draft: `judge lint` shows these for a file marked `draft: true`.

- every key no rule guards (the judge alone would decide it), from the scenario itself;
- every `# review:` comment the drafter wrote: sensitivities it guessed, actions no known tool
  performs, items the fixture checks dropped, disagreements with the model layer.
A reviewed file (no `draft: true`) gets none of these.
"""

from __future__ import annotations

import re
from pathlib import Path

from judge.ledger import LintIssue, line_of, load_scenario

_REVIEW = re.compile(r"^\s*#\s*review:\s*(.+?)\s*$")


def review_notes(path: str | Path) -> list[LintIssue]:
    """Review notes of a draft file (none when the file is not a draft)."""
    scenario, lines = load_scenario(path)
    if not scenario.draft:
        return []
    notes: list[LintIssue] = []
    guarded = {rule.key for rule in scenario.rules}
    for i, entry in enumerate(scenario.ledger):
        if entry.key not in guarded:
            notes.append(LintIssue("review", f"no rule guards {entry.key!r} ({entry.class_}, {entry.sensitivity}): "
                                   "the judge alone decides it; add a rule where the mechanics are clear",
                                   f"ledger.{i}.key", line_of(lines, ("ledger", i, "key"))))
    for i, delta in enumerate(scenario.deltas):
        if delta.op == "add" and delta.key not in guarded:
            notes.append(LintIssue("review", f"no rule guards {delta.key!r} ({delta.class_}, "
                                   f"{delta.sensitivity or 'normal'}): the judge alone decides it",
                                   f"deltas.{i}.key", line_of(lines, ("deltas", i, "key"))))
    text = Path(path).read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        match = _REVIEW.match(line)
        if match:
            notes.append(LintIssue("review", match.group(1), None, number))
    return sorted(notes, key=lambda n: n.line or 0)
