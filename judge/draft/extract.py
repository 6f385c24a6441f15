"""The offline drafter: a conversation in, entries and deltas out (rules and checkpoints: build.py).

Messages are read in order. The first user message states the goal and the ledger as first stated;
a later message may replace a value (`set`), lift a restriction (`revoke`), settle an open question,
or add new entries (`add` deltas at its turn). A tool result may add a fact (an action it reports
already done; a mention of something a restriction forbids) and completes the work asked when the
tool that does that work returns ok.
"""

from __future__ import annotations

from typing import Any

from judge.draft import sensitivity
from judge.draft.changes import REPLACE, current_value, revokes_in, sets_in
from judge.draft.clauses import split_sentence
from judge.draft.facts import facts_in, uncertainty_in
from judge.draft.items import DeltaItem, Draft, Entry, Evidence
from judge.draft.lexicon import stem_equal, words
from judge.draft.limits import limit_in
from judge.draft.requests import completion_of, goal_entry, requests_in
from judge.draft.restrictions import narrow_grants, sentence_entries
from judge.draft.source import Conversation, Utterance
from judge.draft.tool_facts import done_facts, mention_facts
from judge.draft.tools import tools_doing
from judge.draft.values import canonical, find_values
from judge.text.cues import sentences


def add_entry(draft: Draft, entry: Entry) -> Entry:
    """Add an entry; one restating an active entry of the same class and value only adds evidence."""
    same = next((e for e in draft.entries if e.key == entry.key or (
        e.class_ == entry.class_ and e.value == entry.value and e.class_ != "completion")), None)
    if same is not None and same.class_ == entry.class_ and str(current_value(draft, same)) == str(entry.value) \
            and not any(d.key == same.key and d.op == "revoke" for d in draft.deltas):
        same.evidence += [e for e in entry.evidence if e not in same.evidence]
        return same
    entry.key = draft.new_key(entry.key)
    draft.entries.append(entry)
    return entry


def _known_values(draft: Draft) -> set[str]:
    out: set[str] = set()
    for entry in draft.entries:
        value = current_value(draft, entry)
        for item in value if isinstance(value, list) else [value]:
            out.add(str(item).lower())
    return out


def _user_message(draft: Draft, utterance: Utterance, named: set[str]) -> None:
    later = utterance.turn > draft.first_turn
    restrictions: list[Entry] = []
    for sentence in sentences(utterance.text):
        values = find_values(sentence)
        named.update(canonical(v) for v in values if v.kind in ("id", "code"))
        used: set[str] = set()
        if later:
            found = sets_in(draft, sentence, values, utterance.turn, utterance.event)
            draft.deltas += found.deltas
            used |= found.used
            draft.deltas += revokes_in(draft, sentence, values, utterance.turn, utterance.event)
        bounded = limit_in(sentence, values, utterance.turn, utterance.event)
        clauses = split_sentence(sentence, utterance.event, utterance.turn)
        if bounded is not None:  # the clause stating the bound states no other restriction ("without asking me")
            add_entry(draft, bounded)
            used |= set(bounded.values)
            clauses = [c for c in clauses if not any(v.text in bounded.values for v in c.values)]
        entries, taken = sentence_entries(clauses) if clauses else ([], set())
        restrictions += entries
        used |= taken
        open_question = uncertainty_in(sentence, utterance.turn, utterance.event)
        if open_question is not None:
            add_entry(draft, open_question)
        if not (later and REPLACE.search(sentence)):
            for request in requests_in(sentence):
                completion = completion_of(request, utterance.turn, utterance.event)
                if completion is not None:
                    add_entry(draft, completion)
        known = _known_values(draft) if later else set()
        fresh = [v for v in values if canonical(v).lower() not in known]
        for fact in facts_in(sentence, fresh, used, utterance.turn, utterance.event):
            add_entry(draft, fact)
    for entry in narrow_grants(restrictions):
        add_entry(draft, entry)


def _forbidden_values(draft: Draft) -> dict[str, str]:
    revoked = {d.key for d in draft.deltas if d.op == "revoke"}
    return {v: e.key for e in draft.entries if e.class_ in ("constraint", "permission") and e.key not in revoked
            for v in e.values}


def _tool_result(draft: Draft, conv: Conversation, utterance: Utterance, named: set[str], seen: set[str]) -> None:
    for fact in done_facts(utterance, named, conv.tools) + mention_facts(utterance, _forbidden_values(draft)):
        identity = fact.key if fact.mode == "tool-done" else fact.values[0]
        if identity not in seen:
            seen.add(identity)
            add_entry(draft, fact)


def _words_of(value: Any) -> set[str]:
    """The words of an argument mapping's values (not its names)."""
    if isinstance(value, dict):
        return {w for item in value.values() for w in _words_of(item)}
    if isinstance(value, list):
        return {w for item in value for w in _words_of(item)}
    return set(words(str(value)))


def _created_id(utterance: Utterance) -> tuple[str, str] | None:
    """(field, id) of what an ok result says it created: an `id` or `*_id` field of the result."""
    result = utterance.result if isinstance(utterance.result, dict) else {}
    for field, value in result.items():
        if isinstance(value, str) and value and (field == "id" or field.endswith("_id")) \
                and value not in {str(v) for v in (utterance.call_args or {}).values()}:
            return field, value
    return None


def _completions_done(draft: Draft, conv: Conversation) -> None:
    """`complete` when the tool that does the work asked returns ok (the call's arguments pick the
    piece of work when several share a tool: "suite: smoke" completes the smoke suite)."""
    by_tool: dict[str, list[Entry]] = {}
    for entry in [e for e in draft.entries if e.class_ == "completion"]:
        names = {n for v in entry.verbs for n in tools_doing(v, entry.objects, conv.tools, work=True)}
        for name in names:
            by_tool.setdefault(name, []).append(entry)
    done: set[str] = set()
    for utterance in conv.utterances:
        if utterance.kind != "tool-result" or utterance.status != "ok" or utterance.tool not in by_tool:
            continue
        open_ = [e for e in by_tool[utterance.tool] if e.key not in done and e.turn <= utterance.turn]
        if len(open_) > 1:
            args = _words_of(utterance.call_args)
            open_ = [e for e in open_ if any(stem_equal(o, a) for o in e.objects for a in args)]
        if len(open_) != 1:
            continue
        entry = open_[0]
        done.add(entry.key)
        draft.deltas.append(DeltaItem(
            turn=utterance.turn, op="complete", key=entry.key, source="tool",
            evidence=[Evidence(utterance.event, utterance.turn, "tool-result", f"{utterance.tool} returned ok")],
            note=f"{utterance.tool} returned ok"))
        created = _created_id(utterance)
        if created is not None:
            field, ident = created
            add_entry(draft, Entry(
                key=f"{entry.key}_id", class_="fact", value=ident, turn=utterance.turn,
                evidence=[Evidence(utterance.event, utterance.turn, "tool-result", f"{field}: {ident}")],
                persistence="task", source="tool", mode="created", values=(ident,), value_kind="id",
                description=f"what {utterance.tool} created for {entry.key}: a summary must keep it"))


def extract(conv: Conversation) -> Draft:
    """Entries and deltas of a conversation, with guessed sensitivities (rules: judge.draft.build)."""
    users = conv.user()
    first = users[0]
    draft = Draft(scenario_id=conv.scenario_id, title="", first_turn=first.turn, last_turn=conv.last_turn)
    draft.entries.append(goal_entry(first.text, first.turn, first.event))
    named: set[str] = set()
    seen: set[str] = set()
    for utterance in conv.utterances:
        if utterance.kind == "user":
            _user_message(draft, utterance, named)
        else:
            _tool_result(draft, conv, utterance, named, seen)
    _completions_done(draft, conv)
    for entry in draft.entries:
        sensitivity.apply(entry)
    draft.deltas.sort(key=lambda d: d.turn)
    goal = str(draft.entries[0].value)
    draft.title = "Drafted: " + (goal if len(goal) <= 90 else goal[:89] + "…")
    return draft
