"""What a judge sees: the ledger at the checkpoint and the trace slice, blinded and fenced as data.

- `blind` masks the candidate's identity (names the grader passes from the run header, and common
  model family names) inside trace text; the run header itself never reaches a judge.
- Every event becomes one line `<id> t<turn> <kind>: <content>` inside a `<trace_data>` block. Newlines
  in content are escaped, so a planted line cannot pose as another event, and any fence tag inside
  content (`</trace_data>`, `<event>`...) is escaped, so planted text cannot close the fence.
- `build_windows` splits a slice whose rendered request would exceed the token budget into parts
  that are judged separately (see `judge.judges.merge`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from judge.judges.base import JudgeRequest, LedgerRow
from judge.model import Event
from judge.prompts import Prompt

MASK = "[model]"
FENCE_TAGS = ("trace_data", "summary_data", "ledger_data", "event")
_FENCE_RE = re.compile(r"<(\s*/?\s*(?:%s)\b)" % "|".join(FENCE_TAGS), re.IGNORECASE)
_FAMILY_RE = re.compile(
    r"(?<![\w])(?:"
    r"(?:chat)?gpt(?:[-_ ]?(?:\d|o\b|[a-z]+-)(?:[\w-]|\.(?=\w))*)?"  # gpt, gpt-4o, gpt4, chatgpt
    r"|claude(?:[-_ ](?:\d|[a-z]+-?\d)(?:[\w-]|\.(?=\w))*|-(?:[\w-]|\.(?=\w))+)?"  # claude, claude-3-5
    r"|(?:gemini|llama|mistral|mixtral|qwen|deepseek)(?:[-_ ]?\d|-[a-z])(?:[\w-]|\.(?=\w))*"
    r")(?![\w])",
    re.IGNORECASE,
)

TokenCounter = Callable[[list[dict[str, str]]], int]
TextCounter = Callable[[str], int]


# ---------------------------------------------------------------- blinding


def _name_pattern(name: str) -> str:
    core = re.escape(name)
    left = r"(?<![\w])" if re.match(r"\w", name) else ""
    right = r"(?![\w])" if re.search(r"\w$", name) else ""
    return left + core + right


def _names_regex(names: Iterable[str | None]) -> re.Pattern[str] | None:
    found: set[str] = set()
    for name in names:
        if not name or not str(name).strip():
            continue
        name = str(name).strip()
        found.add(name)
        if "/" in name:  # a provider-qualified model string: also mask the bare model name
            found.add(name.rsplit("/", 1)[1])
    found = {n for n in found if n}
    if not found:
        return None
    ordered = sorted(found, key=len, reverse=True)
    return re.compile("|".join(_name_pattern(n) for n in ordered), re.IGNORECASE)


def blind(text: str, names: Iterable[str | None] = ()) -> str:
    """Replace the given names (agent name, version, model) and model family names with `[model]`."""
    pattern = _names_regex(names)
    if pattern is not None:
        text = pattern.sub(MASK, text)
    return _FAMILY_RE.sub(MASK, text)


def blind_value(value: Any, names: Iterable[str | None] = ()) -> Any:
    """`blind` applied to every string inside a JSON-like value."""
    names = tuple(names)
    if isinstance(value, str):
        return blind(value, names)
    if isinstance(value, dict):
        return {k: blind_value(v, names) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [blind_value(v, names) for v in value]
    return value


_BLINDED_FIELDS = ("text", "args", "result", "value", "to")


def blind_events(events: Iterable[Event], names: Iterable[str | None] = ()) -> tuple[Event, ...]:
    """Copies of `events` with the candidate's names masked in every content field. The grader calls
    this with the run header's agent name, version and model before building a JudgeRequest."""
    names = tuple(names)
    out = []
    for event in events:
        update = {f: blind_value(getattr(event, f), names) for f in _BLINDED_FIELDS
                  if getattr(event, f, None) is not None}
        out.append(event.model_copy(update=update))
    return tuple(out)


# ---------------------------------------------------------------- rendering


def escape_data(text: str) -> str:
    """Make `text` safe inside a fenced data block: one line, no fence tags."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return _FENCE_RE.sub(r"&lt;\1", text)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def compact(value: Any) -> str:
    """A short human-readable form: `k: v, k2: v2` for a flat mapping, compact JSON otherwise."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
    return _scalar(value)


def event_line(event: Event, previous: Event | None = None) -> str:
    """One event as one escaped, blinded line."""
    head = f"{event.id} t{event.turn}"
    kind = event.kind
    if kind in ("user", "assistant"):
        body = f"{kind}: {event.text}"
    elif kind == "summary":
        to = f" to {event.to}" if event.to else ""
        body = f"summary ({event.reason}{to}): {event.text}"
    elif kind == "tool-call":
        body = f"call {event.tool}({compact(event.args)})"
    elif kind == "tool-result":
        follows_call = (previous is not None and previous.kind == "tool-call"
                        and previous.call_id == event.call_id)
        label = "" if follows_call else f"result of {event.tool or 'call ' + event.call_id} "
        result = compact(event.result)
        body = f"{label}{event.status}" + (f": {result}" if result else "")
    elif kind == "state-write":
        body = f"state-write {event.key} = {_scalar(event.value)}"
    else:  # pragma: no cover - the Event union is closed
        body = f"{kind}: {compact(event.model_dump(exclude={'id', 'turn', 'kind'}))}"
    return escape_data(blind(f"{head} {body}"))


def event_lines(events: Sequence[Event]) -> list[str]:
    return [event_line(e, events[i - 1] if i else None) for i, e in enumerate(events)]


def ledger_line(row: LedgerRow) -> str:
    status = row.status if row.status != "active" else f"active since t{row.source_turn}"
    line = f"- {row.key} ({row.class_}, {row.sensitivity}, {row.persistence}): {_scalar(row.value)} [{status}]"
    if row.superseded:
        old = "; ".join(f"{_scalar(v)} until t{t}" for v, t in row.superseded)
        line += f" superseded: {old}"
    if row.description:
        line += f" ({row.description})"
    return escape_data(line)


def context(request: JudgeRequest, lines: Sequence[str], *, part: int = 1, parts: int = 1,
            from_turn: int | None = None, to_turn: int | None = None) -> dict[str, Any]:
    """The template variables of a `judge-verdict` prompt (see prompts/goal-fidelity/v1.md)."""
    return {
        "after_turn": request.after_turn,
        "from_turn": request.from_turn if from_turn is None else from_turn,
        "to_turn": request.after_turn if to_turn is None else to_turn,
        "part": part,
        "parts": parts,
        "keys": list(request.keys),
        "ledger": [ledger_line(r) for r in request.ledger],
        "events": list(lines),
    }


# ---------------------------------------------------------------- windows


@dataclass(frozen=True)
class Window:
    part: int
    parts: int
    events: tuple[Event, ...]
    messages: list[dict[str, str]]
    tokens: int
    truncated: int = 0


def _truncate(line: str, tokens: int, room: int, count_text: TextCounter) -> str:
    while tokens > room and len(line) > 80:
        keep = max(80, int(len(line) * room / tokens * 0.9))
        line = line[:keep] + f" …[truncated {len(line) - keep} chars]"
        tokens = count_text(line) + 1
    return line


def _group(costs: Sequence[int], room: int) -> list[list[int]]:
    groups: list[list[int]] = [[]]
    used = 0
    for i, cost in enumerate(costs):
        if groups[-1] and used + cost > room:
            groups.append([])
            used = 0
        groups[-1].append(i)
        used += cost
    return groups


def _window_messages(prompt: Prompt, request: JudgeRequest, events: Sequence[Event], lines: Sequence[str],
                     part: int, parts: int) -> list[dict[str, str]]:
    first = request.from_turn if part == 1 or not events else events[0].turn
    last = request.after_turn if part == parts or not events else events[-1].turn
    return prompt.render(context(request, lines, part=part, parts=parts, from_turn=first, to_turn=last))


def fixed_overhead(prompt: Prompt, request: JudgeRequest, count: TokenCounter) -> int:
    """Tokens of a request with an empty slice: what every window pays before its events."""
    return count(prompt.render(context(request, [], part=99, parts=99)))


def build_windows(prompt: Prompt, request: JudgeRequest, *, budget: int, count: TokenCounter,
                  count_text: TextCounter) -> list[Window]:
    """One window when the whole request fits `budget` tokens, else consecutive parts of the slice,
    each within budget (an event too long for any window is truncated, and counted as such)."""
    events = list(request.events)
    lines = event_lines(events)
    whole = _window_messages(prompt, request, events, lines, 1, 1)
    total = count(whole)
    if total <= budget:
        return [Window(1, 1, tuple(events), whole, total)]
    room = max(budget - fixed_overhead(prompt, request, count), 100)
    costs, cut = [], set()
    for i, line in enumerate(lines):
        cost = count_text(line) + 1
        if cost > room:
            lines[i] = _truncate(line, cost, room, count_text)
            cost = count_text(lines[i]) + 1
            cut.add(i)
        costs.append(cost)
    groups = _group(costs, room)
    while True:
        windows, split = [], None
        for part, idx in enumerate(groups, start=1):
            msgs = _window_messages(prompt, request, [events[i] for i in idx], [lines[i] for i in idx],
                                    part, len(groups))
            tokens = count(msgs)
            if tokens > budget and len(idx) > 1:
                split = part - 1
                break
            windows.append(Window(part, len(groups), tuple(events[i] for i in idx), msgs, tokens,
                                  len(cut.intersection(idx))))
        if split is None:
            return windows
        half = len(groups[split]) // 2
        groups[split:split + 1] = [groups[split][:half], groups[split][half:]]
