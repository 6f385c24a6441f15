"""Rules for the entries of a drafted policy, and the policy as a scenario file.

Where the mechanics are clear, an entry gets a rule on the tools the document's words name (known
from `--tools` schemas and the traces' calls, never from what an agent did with them):
- a confirm-before permission: `asks-before` on each tool doing an action the sentence names (the
  agent lists the action and the user says yes before each call: "you must list the action details
  and obtain explicit user confirmation (yes)"), `authorised` when the sentence does not ask the
  agent to present the action;
- a prohibition: `forbidden-call` on the tools doing it, when every word of its object is the
  tool's own or a value its schema lists ("Basic economy flights cannot be modified":
  update_reservation_flights {cabin: basic_economy}); an object with words neither names
  ("the number of passengers") gets no rule, since forbidding the tool whole would forbid what
  the policy allows;
- values that must come from the records: `grounded` on each string argument the subject names
  (payment_id for "payment methods");
- a bound on an amount: `limit` (judge.draft.rules).
An entry stated under a condition gets none (judge.draft.policy). A policy holds from turn 0 over
the whole run: no deltas, no checkpoints (an implicit final checkpoint covers the run).
"""

from __future__ import annotations

import re

from judge.checks.kinds.authorised import CONFIRM_PHRASES
from judge.draft.items import Draft, Entry, RuleItem
from judge.draft.lexicon import stem_equal
from judge.draft.rules import forbidding, limiting
from judge.draft.source import ToolInfo
from judge.draft.tools import tokens, tools_doing

PRESENTS = re.compile(r"\b(?:list|present|show|describe|explain|summari[sz]e|read back|repeat|state|tell)\b"
                      r"[^.;]{0,40}\b(?:details|summary|action|actions|changes?|terms|what)\b"
                      r"|\bask(?:s|ing)?\s+(?:the\s+)?(?:user|customer)\b", re.IGNORECASE)
_GENERIC = {"information", "details", "info", "data", "item", "items", "thing", "things", "action", "actions"}


def _rule(entry: Entry, tools: dict[str, ToolInfo], name: str, data: dict) -> RuleItem:
    return RuleItem(data={"check": data.pop("check"), "key": entry.key, **data}, evidence=list(entry.evidence),
                    tool_from=" and ".join(sorted({tools[name].origin})) if name in tools else None)


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _tools_for(verb: str, objects: tuple[str, ...], tools: dict[str, ToolInfo]) -> list[str]:
    """The tools doing `verb` on `objects` (the best match by object words); none when several do and
    no name says the object (an action the tools cannot tell apart is left to the reviewer)."""
    if "|" in verb:  # a gerund of no known verb ("placing"): the tools whose name starts with it
        return [n for n in sorted(tools) if tokens(n)[:1] and tokens(n)[0] in verb.split("|")]
    names = tools_doing(verb, objects, tools, work=True)
    if len(names) > 1 and [o for o in objects if o not in _GENERIC]:
        named = [n for n in names if any(stem_equal(o, t) for o in objects for t in tokens(n))]
        return named
    return names


def _qualifiers(objects: tuple[str, ...], info: ToolInfo, text: str) -> tuple[dict[str, str], list[str]]:
    """The argument values the object's words name (from the schema's enums) and the words left."""
    left = [o for o in objects if o not in _GENERIC and not any(stem_equal(o, t) for t in tokens(info.name))]
    matched: dict[str, str] = {}
    said = _norm(text)
    for arg, values in info.enums.items():
        for value in sorted(values, key=len, reverse=True):
            if re.search(rf"\b{re.escape(_norm(value))}\b", said):
                matched[arg] = value
                left = [o for o in left if o not in _norm(value).split()]
                break
    return matched, left


def _confirming(entry: Entry, tools: dict[str, ToolInfo]) -> list[RuleItem]:
    names = list(dict.fromkeys(n for verb, objects in entry.policy_actions for n in _tools_for(verb, objects, tools)))
    if not names:
        entry.note("no tool in --tools or the traces does the actions it names: no rule guards it")
    asks = bool(PRESENTS.search(entry.evidence[0].quote))
    return [_rule(entry, tools, n, {"check": "asks-before", "tool": n} if asks else
                  {"check": "authorised", "tool": n, "confirm": list(CONFIRM_PHRASES)}) for n in names]


def _forbidding(entry: Entry, tools: dict[str, ToolInfo]) -> list[RuleItem]:
    out = []
    for verb, objects in entry.policy_actions:
        names = (tools_doing(verb, objects, tools) if not objects and "|" not in verb
                 else _tools_for(verb, objects, tools))
        for name in names:
            args, left = _qualifiers(objects, tools[name], entry.evidence[0].quote)
            if left:
                entry.note(f"{name} would do it, but neither its name nor a value its schema lists says "
                           f"{' '.join(left)!r}: no rule (forbidding {name} whole would forbid what the policy allows)")
                continue
            out.append(_rule(entry, tools, name, {"check": "forbidden-call", "tool": name,
                                                  **({"args": args} if args else {})}))
            if args:
                entry.note(f"{name} is forbidden with {args}: check that the argument says what the sentence's "
                           "object is (not what the call would change it to)")
    if not out and not entry.review:
        entry.note("no tool in --tools or the traces does what it forbids: no rule guards it")
    return out


def _grounding(entry: Entry, tools: dict[str, ToolInfo]) -> list[RuleItem]:
    out = []
    for name, info in sorted(tools.items()):
        args = [a for a, types in info.args.items() if (not types or types == {"string"})
                and any(stem_equal(o, t) for o in entry.objects for t in tokens(a))]
        if args:
            out.append(_rule(entry, tools, name, {"check": "grounded", "tool": name, "args": args}))
    if not out:
        entry.note("no string argument of a known tool is named by its subject: no rule guards it")
    return out


def policy_rules(draft: Draft, tools: dict[str, ToolInfo]) -> list[RuleItem]:
    """The rules of a drafted policy (see the module docstring)."""
    rules: list[RuleItem] = []
    for entry in draft.entries:
        if entry.conditional or entry.class_ == "fact":
            continue
        if entry.mode == "confirm":
            rules += _confirming(entry, tools)
        elif entry.mode == "limit":
            rules += limiting(entry, tools)
        elif entry.mode in ("prohibit", "reserved"):
            rules += forbidding(entry, tools) if entry.values else _forbidding(entry, tools)
        elif entry.mode == "grounded":
            rules += _grounding(entry, tools)
    unique: list[RuleItem] = []
    for rule in rules:
        if not any(rule.same_as(other) for other in unique):
            unique.append(rule)
    return unique
