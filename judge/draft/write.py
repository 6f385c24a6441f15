"""The draft as a YAML file whose every entry, delta and rule says where it came from.

PyYAML writes each value (so quoting is always right: `'3.11'`, `'01:00'`, `'yes'`); the layout and
the comments are written here, because PyYAML drops comments and ruamel.yaml (which keeps them) is
not a dependency and would need its comment API for every item. Entries are block mappings,
deltas, checkpoints and rules one flow mapping a line, as in the bundled examples. The text is
checked by judge's own loader (judge.ledger) before it is returned.

Comment lines, above the item they describe:
    # e8 (user, turn 4) [offline]: "Use Firefox from now on"     the evidence, one line per event
    # review: browser: ...                                        what to check (`judge lint` lists these)
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from judge.draft.build import scenario_of
from judge.draft.items import DeltaItem, Draft, Entry, Evidence, RuleItem

SCENARIO_ONLY = ("deltas", "checkpoints")
"""Sections a scenario has and a policy never does (a drafted policy's file leaves them out)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
MAX_EVIDENCE = 3


def _flow(value: Any) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10 ** 6, allow_unicode=True)
    text = text.rstrip("\n")
    return text[:-4].rstrip("\n") if text.endswith("\n...") else text


def _comment(text: str, indent: str) -> str:
    return f"{indent}# {_CONTROL.sub(' ', text).strip()}"


TASK_STATEMENT = "task statement"  # the kind shown for evidence from a task statement (no user message)


def _evidence_lines(evidence: list[Evidence], origin: str, indent: str, prefix: str = "",
                    task_event: str | None = None) -> list[str]:
    lines = [_comment(f"{prefix if i == 0 else ''}"
                      + e.short(TASK_STATEMENT if e.event == task_event else None).replace("): ", f") [{origin}]: ", 1),
                      indent)
             for i, e in enumerate(evidence[:MAX_EVIDENCE])]
    if len(evidence) > MAX_EVIDENCE:
        lines.append(_comment(f"... and {len(evidence) - MAX_EVIDENCE} more event(s): "
                              + ", ".join(e.event for e in evidence[MAX_EVIDENCE:]), indent))
    return lines


def _review_lines(key: str, notes: list[str], indent: str) -> list[str]:
    return [_comment(f"review: {key}: {note}", indent) for note in notes]


def _item_comments(item: Entry | DeltaItem | RuleItem | None, indent: str, task_event: str | None = None) -> list[str]:
    if isinstance(item, (Entry, DeltaItem)):
        return _evidence_lines(item.evidence, item.origin, indent, task_event=task_event) + \
            _review_lines(item.key, item.review, indent)
    if isinstance(item, RuleItem):
        tool = item.data.get("tool")
        where = "" if not item.tool_from else (
            f"; any tool (argument names known from {item.tool_from})" if tool == "*" else
            f"; tool {tool} known from {item.tool_from}" if tool else f"; argument known from {item.tool_from}")
        lines = _evidence_lines(item.evidence, item.origin, indent, prefix=f"guards {item.key}{where}; ",
                                task_event=task_event)
        return lines + _review_lines(item.key, item.review, indent)
    return []


def _block(mapping: dict[str, Any]) -> list[str]:
    lines = []
    for i, (field, value) in enumerate(mapping.items()):
        lines.append(("  - " if i == 0 else "    ") + f"{field}: {_flow(value)}")
    return lines


_POLICY_INTRO = [
    "Drafted by `judge draft --policy-doc` from a written policy. Every entry and rule below cites the",
    "sentence it came from (file:line and its section) and how it was found ([offline]: the cue tables).",
    "Sentences with a condition the drafter cannot check are entries without rules, for the judge.",
    "Review each one (keep, fix or delete it), then delete the line `draft: true`: `judge grade`",
    "refuses a draft until then. `judge lint` on this file lists what to check.",
]


def header_lines(draft: Draft) -> list[str]:
    intro = _POLICY_INTRO if draft.policy else [
        "Drafted by `judge draft` from what the user said and what tools returned, never from what the",
        "agent did. Every entry, delta and rule below names the event and the words it came from, and",
        "how it was found: [offline] the cue tables, [model] the model-assisted layer, [offline+model] both.",
        "Review each one (keep, fix or delete it), then delete the line `draft: true`: `judge grade`",
        "refuses a draft until then. `judge lint` on this file lists what to check.",
    ]
    lines = [*intro, *draft.header]
    lines += [f"note: {n}" for n in draft.notes]
    lines += [f"review: dropped {d}" for d in draft.dropped]
    return [_comment(line, "") for line in lines]


def to_yaml(draft: Draft) -> str:
    scenario, refs = scenario_of(draft)
    out = header_lines(draft)
    out += [f"id: {_flow(scenario['id'])}", f"title: {_flow(scenario['title'])}", "draft: true"]
    for section in ("ledger", "deltas", "checkpoints", "rules"):
        if draft.policy and section in SCENARIO_ONLY:
            continue  # a policy has no deltas and no checkpoints: `judge grade --policy` reads the file as it is
        items = scenario[section]
        out.append(f"{section}:" + ("" if items else " []"))
        for i, data in enumerate(items):
            if section == "checkpoints":
                out.append(_comment(draft.checkpoint_why[i], "  "))
                out.append(f"  - {_flow(data)}")
                continue
            out += _item_comments(refs.get((section, i)), "  ", draft.task_event)
            out += _block(data) if section == "ledger" else [f"  - {_flow(data)}"]
    return "\n".join(out) + "\n"
