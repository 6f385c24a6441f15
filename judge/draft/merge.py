"""Merge the model's proposals into the offline draft, each item marked with where it came from.

An entry the model names by an offline key, or that says the same as an offline entry (same class,
same evidence event, a shared content word), confirms it: `offline+model`, with a review note when
the model proposes another class or sensitivity. Anything else the model proposes is added as
`model`, on the turn of the event it cites (a later turn: an `add` delta). Deltas and rules on keys
the draft does not have, rules the rule model rejects, a grant or restriction cited from a tool
result and a revoke not cited from a user message are left out, and the file says so; the fixture
checks (judge.draft.build) then drop whatever still breaks a transition rule.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from judge.checks import spec_for
from judge.draft.items import DeltaItem, Draft, Entry, Evidence, RuleItem
from judge.draft.lexicon import content_words
from judge.draft.source import Conversation
from judge.errors import with_article
from judge.model import Rule

_TOOL_GRANTS = ("goal", "constraint", "permission")


def _mark(item: Entry | DeltaItem | RuleItem, evidence: Evidence) -> None:
    if item.origin == "offline":
        item.origin = "offline+model"
    if all(e.event != evidence.event for e in item.evidence):
        item.evidence.append(evidence)


def _same_entry(draft: Draft, proposal: Any, evidence: Evidence) -> Entry | None:
    named = draft.entry(proposal.key)
    if named is not None:
        return named
    words = set(content_words(proposal.value))
    for entry in draft.entries:
        if entry.class_ == proposal.entry_class and any(e.event == evidence.event for e in entry.evidence) \
                and words & set(content_words(str(entry.value))):
            return entry
    return None


def _entries(draft: Draft, proposals: list[Any], evidence_of) -> None:
    for p in proposals:
        evidence = evidence_of(p)
        same = _same_entry(draft, p, evidence)
        if same is not None:
            _mark(same, evidence)
            if p.entry_class != same.class_:
                same.note(f"the model proposes class {p.entry_class}")
            if p.sensitivity != same.sensitivity:
                same.note(f"the model proposes sensitivity {p.sensitivity}")
            continue
        if p.entry_class == "goal":
            draft.notes.append(f"the model proposes another goal ({p.key}, {evidence.event}): not added")
            continue
        if evidence.kind == "tool-result" and p.entry_class in _TOOL_GRANTS:
            draft.notes.append(f"the model proposes {p.entry_class} {p.key} from a tool result ({evidence.event}): "
                               "a tool never grants or restricts, not added")
            continue
        entry = Entry(key=draft.new_key(p.key), class_=p.entry_class, value=p.value,
                      turn=max(evidence.turn, draft.first_turn), evidence=[evidence], origin="model",
                      persistence="until-replaced" if p.entry_class in ("fact", "uncertainty") else "task",
                      sensitivity=p.sensitivity, source="tool" if evidence.kind == "tool-result" else "user",
                      mode="model")
        if p.sensitivity != "normal":
            entry.note(f"sensitivity {p.sensitivity} is the model's guess: check it")
        draft.entries.append(entry)


def _deltas(draft: Draft, proposals: list[Any], evidence_of) -> None:
    for p in proposals:
        evidence = evidence_of(p)
        if draft.entry(p.key) is None:
            draft.notes.append(f"the model proposes {p.op} of {p.key!r} ({evidence.event}), a key the draft "
                               "does not have: not added")
            continue
        if p.op == "revoke" and evidence.kind != "user":
            draft.notes.append(f"the model proposes revoking {p.key!r} from a tool result ({evidence.event}): "
                               "only a user revokes, not added")
            continue
        same = next((d for d in draft.deltas if d.op == p.op and d.key == p.key and d.turn == evidence.turn), None)
        if same is not None:
            _mark(same, evidence)
            if p.op == "set" and str(p.value) != str(same.value):
                same.review.append(f"the model proposes the value {p.value!r}")
            continue
        draft.deltas.append(DeltaItem(turn=evidence.turn, op=p.op, key=p.key, evidence=[evidence],
                                      value=p.value if p.op == "set" else None, origin="model",
                                      source="tool" if evidence.kind == "tool-result" else "user"))
    draft.deltas.sort(key=lambda d: d.turn)


def _rule_data(p: Any) -> dict[str, Any]:
    """A proposal's fields as a rule of its kind (the kind's DraftSpec says how)."""
    data: dict[str, Any] = {"check": p.check, "key": p.key}
    if p.tool:
        data["tool"] = p.tool
    draft = spec_for(p.check).draft
    if draft is not None:
        data.update(draft.fields(p.arg, list(p.values)))
    return data


def _rule_adapter() -> TypeAdapter:
    return TypeAdapter(Rule)  # built when used: its union is the registered rule kinds


def _rules(draft: Draft, proposals: list[Any], evidence_of, conv: Conversation) -> None:
    for p in proposals:
        evidence = evidence_of(p)
        data = _rule_data(p)
        try:
            _rule_adapter().validate_python(data)
        except ValidationError as exc:
            draft.notes.append(f"the model's {p.check} rule on {p.key!r} is not a valid rule "
                               f"({exc.errors()[0]['msg']}): not added")
            continue
        if draft.entry(p.key) is None:
            draft.notes.append(f"the model proposes {with_article(p.check)} rule on {p.key!r}, a key the draft "
                               "does not have: not added")
            continue
        candidate = RuleItem(data=data, evidence=[evidence], origin="model",
                             tool_from=conv.tools[p.tool].origin if p.tool in conv.tools else None)
        same = next((r for r in draft.rules if r.same_as(candidate)), None)
        if same is not None:
            _mark(same, evidence)
        else:
            draft.rules.append(candidate)


def merge(draft: Draft, answer: Any, conv: Conversation) -> None:
    """Merge a validated `ledger-draft` answer into `draft` (in place)."""
    by_id = conv.by_id()

    def evidence_of(p: Any) -> Evidence:
        u = by_id[p.evidence_event]
        return Evidence(u.event, u.turn, u.kind, p.quote)

    _entries(draft, list(answer.entries), evidence_of)
    _deltas(draft, list(answer.deltas), evidence_of)
    _rules(draft, list(answer.rules), evidence_of, conv)
