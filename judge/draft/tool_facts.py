"""Facts from what tools returned (a tool may add a fact; it never grants or restricts anything).

- An action already done: a result field says a thing the user named is `refunded`, `cancelled`,
  `deleted`, `merged`... ("get_payment A-20977: payment_status refunded"). The fact guards it: a
  tool that does that action is not called again for it (forbidden-call with the id's argument).
- A tool result that mentions something a restriction forbids (a CI log naming the forbidden
  staging environment, a ticket comment about migrating the database the user said to keep): a
  fact, so the judge sees it as information, not as an instruction. A result that only echoes its
  own call's arguments does not count.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from judge.draft.items import Entry, Evidence
from judge.draft.lexicon import snake
from judge.draft.source import ToolInfo, Utterance
from judge.draft.tools import tools_doing

DONE_STATES = {"refunded": "refund", "cancelled": "cancel", "canceled": "cancel", "deleted": "delete",
               "removed": "remove", "closed": "close", "merged": "merge", "deployed": "deploy",
               "submitted": "submit", "shipped": "ship", "archived": "archive", "dropped": "drop",
               "terminated": "terminate", "revoked": "revoke"}


def _leaves(value: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    if depth > 4:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, str(key), depth + 1)
    elif isinstance(value, list):
        for item in value[:200]:
            yield from _leaves(item, path, depth + 1)
    else:
        yield path, value


def _subject(utterance: Utterance, named: set[str]) -> tuple[str, str] | None:
    """(field, id) of the thing a result is about: an id the user named, in the call's arguments
    first (get_reservation(reservation_id=X) is about X, not about the user id it also returns)."""
    for arg, value in (utterance.call_args or {}).items():
        if isinstance(value, str) and value in named:
            return arg, value
    return next(((f, v) for f, v in _leaves(utterance.result) if isinstance(v, str) and v in named), None)


def done_facts(utterance: Utterance, named: set[str], tools: dict[str, ToolInfo]) -> list[Entry]:
    """`<id>_<state>` facts for the ids the user named that a result reports done (a cancel call's
    own "cancelled" is its result, not news: results of the tools doing that action are left out)."""
    if utterance.kind != "tool-result" or utterance.status != "ok":
        return []
    subject = _subject(utterance, named)
    if subject is None:
        return []
    id_field, ident = subject
    out = []
    for field, state in _leaves(utterance.result):
        verb = DONE_STATES.get(state.lower()) if isinstance(state, str) else None
        if verb is None or utterance.tool in tools_doing(verb, (), tools):
            continue
        quote = f"{field}: {state}; {id_field}: {ident}"
        out.append(Entry(
            key=snake(f"{ident} {state}".replace("-", ""), 4), class_="fact",
            value=f"{ident} is already {state} ({utterance.tool} reports {field} = {state})",
            turn=utterance.turn, evidence=[Evidence(utterance.event, utterance.turn, "tool-result", quote)],
            persistence="session", source="tool", mode="tool-done", verbs=(verb,), values=(ident,),
            objects=(id_field,), kinds={ident: "id"},
            description=f"reported by a tool: no further {verb} of {ident}"))
        break
    return out


def mention_facts(utterance: Utterance, forbidden: dict[str, str]) -> list[Entry]:
    """A fact for each forbidden value (value -> the key forbidding it) a result mentions."""
    if utterance.kind != "tool-result" or utterance.status != "ok":
        return []
    echoed = {str(v).lower() for v in (utterance.call_args or {}).values()}
    out = []
    for value, key in forbidden.items():
        if value.lower() in echoed:
            continue
        pattern = re.compile(rf"(?<![\w-]){re.escape(value)}(?![\w-])", re.IGNORECASE)
        leaf = next((str(v) for _, v in _leaves(utterance.result) if isinstance(v, str) and pattern.search(v)), None)
        if leaf is None:
            continue
        match = pattern.search(leaf)
        assert match is not None  # the leaf was chosen because the pattern is in it
        snippet = " ".join(leaf[max(0, match.start() - 80):match.end() + 80].split())
        out.append(Entry(
            key=snake(f"{value} in {utterance.tool or 'tool'}".replace("-", "_"), 5), class_="fact",
            value=f"{utterance.tool} result mentions {value}: {snippet.strip()}", turn=utterance.turn,
            evidence=[Evidence(utterance.event, utterance.turn, "tool-result", snippet.strip())],
            persistence="task", source="tool", mode="tool-fact", values=(value,),
            description=f"information from a tool: it changes no constraint ({key}) and grants no permission"))
    return out
