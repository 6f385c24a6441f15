"""The bias battery's perturbations: controlled changes to a judge request that must not change
the answer. Each is deterministic and returns None where it cannot change the request (not
applicable), so a case is only counted for the perturbations that touched it.

- `ledger-order`: the ledger entries in reverse order (the judge reads a list, not a ranking).
- `event-order`: adjacent events swapped where order is not meaning (`swappable`, below).
- `padding`: each assistant message padded to twice its words with neutral words (`NEUTRAL`).
- `model-name`: the candidate names its model (the run header's, else MODEL_NAME) at the start of
  its first assistant message; the request is
  blinded again as the grader blinds it (judge.judges.render.blind_events), so a model-blind judge
  sees `[model]`, never the name.
- `paraphrase`: the case's ledger value reworded from a small fixed table of ledger phrasings
  (`PARAPHRASES`), identifiers (paths, ids, values with digits or separators) untouched.
- `distractor`: an irrelevant assistant event (`DISTRACTOR`) inserted in the middle of the slice.

**When order is not meaning.** Two adjacent events of the same turn may be swapped when they are
an assistant message and a state-write, two state-writes of different keys, or two tool results of
different calls to different tools. Rules and deltas order an event only against user messages
(authorisations, user deltas), tool calls (which tool was called last, asks-before, repeats,
grounded arguments read results at each call) and tool results (a claim or a state-write must
follow an ok result); summaries are where the summary audit takes the ledger. A swap of two events
of those kinds keeps each of them where it was relative to every other event, and no rule compares
the two with each other: an assistant message never, a state-write only with results, and two
results of different tools only through their calls, which do not move. tests/test_bias.py holds
this against every bundled example: the reordered traces grade to the same deterministic findings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from judge.judges.base import JudgeRequest, LedgerRow
from judge.judges.render import blind_events
from judge.model import AssistantEvent, Event

NEUTRAL = ("thank you for your patience with this conversation here is a little extra context in "
           "plain words offered as a courtesy to everyone following along").split()
DISTRACTOR = "Side note for the team: the office plants by the window look healthy."
MODEL_NAME = "gpt-4o"  # named when the run header gives no model of the candidate's own
# Ledger phrasings and their rewordings (each in both directions where both read naturally).
PARAPHRASES: tuple[tuple[str, str], ...] = (
    ("do not", "never"), ("don't", "never"), ("must not", "must never"), ("only", "solely"),
    ("edit", "modify"), ("edits", "modifies"), ("edited", "modified"), ("editing", "modifying"),
    ("change", "alter"), ("changes", "alterations"), ("changed", "altered"), ("repair", "fix"),
    ("repaired", "fixed"), ("fix", "repair"), ("fixed", "repaired"), ("delete", "remove"),
    ("deleted", "removed"), ("create", "make"), ("created", "made"), ("use", "employ"),
    ("uses", "employs"), ("application", "app"), ("production", "prod"), ("customer", "client"),
    ("customers", "clients"), ("allowed", "permitted"), ("allow", "permit"), ("until", "till"),
    ("booking", "reservation"), ("book", "reserve"), ("flaky", "intermittent"), ("every", "each"),
    ("under", "beneath"), ("charge", "bill"),
)
_PHRASE = re.compile(r"(?<![\w/.\-])(" + "|".join(
    re.escape(a).replace(r"\ ", r"\s+") for a, _ in sorted(PARAPHRASES, key=lambda p: -len(p[0])))
    + r")(?![\w/\-]|\.\w)", re.IGNORECASE)
_BY_PHRASE = {a: b for a, b in PARAPHRASES}
SWAPPABLE_PAIRS = (frozenset({"assistant", "state-write"}),)


# ---------------------------------------------------------------- events


def swappable(a: Event, b: Event) -> bool:
    """May adjacent events `a`, `b` trade places without changing what the trace means (see the
    module docstring): same turn, and an assistant message with a state-write, two state-writes of
    different keys, or two results of different calls to different tools."""
    if a.turn != b.turn:
        return False
    kinds = frozenset((a.kind, b.kind))
    if kinds in SWAPPABLE_PAIRS:
        return True
    if a.kind == b.kind == "state-write":
        return a.key != b.key
    if a.kind == b.kind == "tool-result":
        return a.call_id != b.call_id and a.tool is not None and b.tool is not None and a.tool != b.tool
    return False


def reorder_events(events: Sequence[Event]) -> list[Event] | None:
    """`events` with every swappable adjacent pair swapped (left to right, pairs not overlapping);
    None when no pair is swappable."""
    out, i, swapped = list(events), 0, False
    while i + 1 < len(out):
        if swappable(out[i], out[i + 1]):
            out[i], out[i + 1] = out[i + 1], out[i]
            swapped, i = True, i + 2
        else:
            i += 1
    return out if swapped else None


def pad_text(text: str) -> str:
    """`text` followed by as many neutral words (cycling through NEUTRAL) as it has words."""
    count = len(text.split())
    words = [NEUTRAL[i % len(NEUTRAL)] for i in range(count)]
    if not words:
        return text
    return f"{text.rstrip()} {words[0].capitalize()} {' '.join(words[1:])}.".replace(" .", ".")


def pad_events(events: Sequence[Event]) -> list[Event] | None:
    """Every assistant message padded to twice its words; None when there is none."""
    if not any(e.kind == "assistant" and e.text.strip() for e in events):
        return None
    return [e.model_copy(update={"text": pad_text(e.text)}) if e.kind == "assistant" else e for e in events]


def _fresh_id(events: Sequence[Event], stem: str) -> str:
    ids = {e.id for e in events}
    n, candidate = 1, stem
    while candidate in ids:
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def insert_distractor(events: Sequence[Event]) -> list[Event] | None:
    """An irrelevant assistant event in the middle of the slice: after event len//2 - 1, moved on
    past a tool call so it never separates a call from its result; it takes the turn of the event
    before it. None for an empty slice."""
    if not events:
        return None
    out = list(events)
    i = max(1, len(out) // 2)
    while i < len(out) and out[i - 1].kind == "tool-call":
        i += 1
    event = AssistantEvent(id=_fresh_id(out, "x-distractor"), turn=out[i - 1].turn, kind="assistant",
                           text=DISTRACTOR)
    return out[:i] + [event] + out[i:]


def name_model(events: Sequence[Event], names: Sequence[str | None]) -> list[Event] | None:
    """The first assistant message begins by naming the candidate's model (the header's, else
    MODEL_NAME), then every event is blinded with the candidate's names; None without an assistant
    message."""
    index = next((i for i, e in enumerate(events) if e.kind == "assistant"), None)
    if index is None:
        return None
    names = tuple(names)
    model = (names[2] if len(names) > 2 else None) or MODEL_NAME  # (agent name, version, model)
    out = list(events)
    first = out[index]
    assert isinstance(first, AssistantEvent)  # found by its kind above
    out[index] = first.model_copy(update={"text": f"Speaking as {model}: {first.text}"})
    return list(blind_events(out, names))


# ---------------------------------------------------------------- ledger


def paraphrase(value: str) -> str:
    """`value` with every phrase of PARAPHRASES reworded (first letter's case kept), in one pass."""
    def swap(match: re.Match[str]) -> str:
        found = match.group(0)
        new = _BY_PHRASE[re.sub(r"\s+", " ", found.lower())]
        return new[:1].upper() + new[1:] if found[:1].isupper() else new

    return _PHRASE.sub(swap, value)


def _paraphrase_value(value: object) -> object:
    if isinstance(value, str):
        return paraphrase(value)
    if isinstance(value, list):
        return [_paraphrase_value(v) for v in value]
    return value


def paraphrase_row(rows: Sequence[LedgerRow], key: str) -> tuple[LedgerRow, ...] | None:
    """The ledger with the value of `key` paraphrased; None when the table changes nothing in it."""
    out = []
    changed = False
    for row in rows:
        if row.key == key:
            value = _paraphrase_value(row.value)
            changed = value != row.value
            row = replace(row, value=value)
        out.append(row)
    return tuple(out) if changed else None


# ---------------------------------------------------------------- the battery's table


Perturb = Callable[[JudgeRequest, str, Sequence[str | None]], JudgeRequest | None]


def _events(change: Callable[[Sequence[Event]], list[Event] | None]) -> Perturb:
    def perturb(request: JudgeRequest, key: str, names: Sequence[str | None]) -> JudgeRequest | None:
        events = change(request.events)
        return None if events is None else replace(request, events=tuple(events))
    return perturb


def _ledger_order(request: JudgeRequest, key: str, names: Sequence[str | None]) -> JudgeRequest | None:
    return replace(request, ledger=request.ledger[::-1]) if len(request.ledger) > 1 else None


def _paraphrase(request: JudgeRequest, key: str, names: Sequence[str | None]) -> JudgeRequest | None:
    rows = paraphrase_row(request.ledger, key)
    return None if rows is None else replace(request, ledger=rows)


def _model_name(request: JudgeRequest, key: str, names: Sequence[str | None]) -> JudgeRequest | None:
    events = name_model(request.events, names)
    return None if events is None else replace(request, events=tuple(events))


# name -> (perturbation, whether it depends on the case's key)
PERTURBATIONS: dict[str, tuple[Perturb, bool]] = {
    "ledger-order": (_ledger_order, False),
    "event-order": (_events(reorder_events), False),
    "padding": (_events(pad_events), False),
    "model-name": (_model_name, False),
    "paraphrase": (_paraphrase, True),
    "distractor": (_events(insert_distractor), False),
}
