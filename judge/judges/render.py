"""What a judge sees: the ledger at the checkpoint and the trace slice, blinded and fenced as data.

- `blind` masks the candidate's identity (names the grader passes from the run header, and every
  model, family and vendor name of judge.judges.blinding's list) in the text a judge reads (messages,
  summaries, string values of arguments, results and states); keys and identifiers (tool and state
  names, argument keys, `to`, refs, digests) lose only the candidate's own names, so a field named
  `anthropic` stays as the user's schema has it. The run header itself never reaches a judge.
- Every event becomes one line inside a `<trace_data>` block: `e1 t1 user: <text>`,
  `e3 t2 call run_tests(browser: firefox) -> e4 ok: passed: 20` (a result directly following its call
  shares the call's line), `e5 t3 state-write key = value`, `e6 t8 summary (compaction): <text>`. This
  compact form costs about half the tokens of the JSONL. Every Unicode line break in content is
  escaped, so a planted line cannot pose as another event; invisible characters are shown escaped
  (`\\u200b`), never dropped, and fence tags inside content (`</trace_data>`, also full-width or split
  by a zero-width space: found on the folded copy, judge.trace.normal) are escaped, so planted text
  cannot close the fence. Text is never normalised here: the redactor found secrets on the folded
  copy and replaced them in the text as written; folding after it would re-assemble the rest.
- `build_windows` splits a slice whose rendered request would exceed the token budget into parts
  that are judged separately (see `judge.judges.merge`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from judge.judges.base import JudgeRequest, LedgerRow
from judge.judges.blinding import MASK, mask_names  # noqa: F401  (MASK: part of this module's face)
from judge.model import Event
from judge.prompts import Prompt
from judge.trace.normal import fold

RENDER_VERSION = 4  # bump when what a judge sees changes: it is part of the judge fingerprint
FENCE_TAGS = ("trace_data", "summary_data", "ledger_data", "event")
_FENCE_RE = re.compile(r"<(\s*/?\s*(?:{})\b)".format("|".join(FENCE_TAGS)), re.IGNORECASE)
# Every character that starts a new line somewhere (str.splitlines breaks on all of them) and every
# invisible format character (zero-width spaces and joiners, bidi controls: Unicode category Cf).
_BREAKS = re.compile("\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")

RequestCounter = Callable[[list[dict[str, str]], Sequence[Event]], int]
LineCounter = Callable[[str], int]


# ---------------------------------------------------------------- blinding


def blind(text: str, names: Iterable[str | None] = ()) -> str:
    """Replace model, vendor and family names (litellm's model map and data/model_words.txt) and the
    given names (the candidate's agent name, version and model) with `[model]`."""
    return mask_names(text, names)


def blind_identifier(text: str, names: Iterable[str | None] = ()) -> str:
    """A key or an identifier: only the candidate's own names are masked (never the generic list)."""
    return mask_names(text, names, generic=False)


def blind_value(value: Any, names: Iterable[str | None] = ()) -> Any:
    """`blind` applied to every string inside a JSON-like value; its keys get `blind_identifier`."""
    names = tuple(names)
    if isinstance(value, str):
        return blind(value, names)
    if isinstance(value, dict):
        return {(blind_identifier(k, names) if isinstance(k, str) else k): blind_value(v, names)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [blind_value(v, names) for v in value]
    return value


_TEXT_FIELDS = ("text", "args", "result", "value", "state")
_IDENTIFIER_FIELDS = ("to", "ref", "tool", "key", "digest")


def blind_events(events: Iterable[Event], names: Iterable[str | None] = ()) -> tuple[Event, ...]:
    """Copies of `events` with the candidate's names masked in every content field (model names in
    text, the candidate's own names in identifiers too). The grader calls this with the run header's
    agent name, version and model before building a JudgeRequest; `event_lines` with none."""
    names = tuple(names)
    out = []
    for event in events:
        # Only the fields this kind of event has (asking a pydantic model for one it lacks costs an
        # AttributeError inside pydantic's __getattr__: most of the blinding's time, before).
        fields = type(event).model_fields
        update: dict[str, Any] = {}
        for f in _TEXT_FIELDS:
            if f in fields and (value := getattr(event, f)) is not None:
                update[f] = blind_value(value, names)
        for f in _IDENTIFIER_FIELDS:
            if f in fields and isinstance(value := getattr(event, f), str):
                update[f] = blind_identifier(value, names)
        update["meta"] = None  # the model behind an event is the candidate's identity: never shown
        out.append(event.model_copy(update=update))
    return tuple(out)


# ---------------------------------------------------------------- rendering


def escape_data(text: str) -> str:
    """Make `text` safe inside a fenced data block: one line (every Unicode line break escaped),
    invisible format characters (zero-width spaces, bidi controls: Unicode category Cf) shown
    escaped (`\\u200b`, `\\u202e`), and no fence tags: a tag is looked for on the folded copy (a
    full-width `＜/trace_data＞`, or one split by a zero-width space, is one) and its `<` escaped in
    the text as written. The text is not normalised."""
    if text.isascii():
        return _FENCE_RE.sub(r"&lt;\1", _BREAKS.sub(_break, text))
    folded = fold(text)
    if folded.edits:
        out, pos = [], 0
        for match in _FENCE_RE.finditer(folded.text):
            start, end = folded.original(match.start(), match.start() + 1)  # the `<`, as written
            out += [text[pos:start], "&lt;"]
            pos = end
        text = "".join(out) + text[pos:] if out else text
    else:
        text = _FENCE_RE.sub(r"&lt;\1", text)
    if any(unicodedata.category(ch) == "Cf" for ch in text):
        text = "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch) == "Cf" else ch for ch in text)
    return _BREAKS.sub(_break, text)


def _break(match: re.Match[str]) -> str:
    found = match.group()
    return "\\n" if found in ("\r\n", "\n", "\r") else f"\\u{ord(found):04x}"


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


def _content(event: Event, follows_call: bool = False) -> str:
    # `event.kind ==` (not a local) so that the type checker narrows the tagged union.
    if event.kind == "user" or event.kind == "assistant":
        return f"{event.kind}: {event.text}"
    if event.kind == "summary":
        to = f" to {event.to}" if event.to else ""
        return f"summary ({event.reason}{to}): {event.text}"
    if event.kind == "tool-call":
        return f"call {event.tool}({compact(event.args)})"
    if event.kind == "tool-result":
        label = "" if follows_call else f"result of {event.tool or 'call ' + event.call_id} "
        result = compact(event.result)
        return f"{label}{event.status}" + (f": {result}" if result else "")
    if event.kind == "state-write":
        return f"state-write {event.key} = {_scalar(event.value)}"
    hidden = {"id", "turn", "kind", "meta", "ts", "span_id", "parent_span_id"}
    return f"{event.kind}: {compact(event.model_dump(exclude=hidden, exclude_none=True))}"


def _answers(call: Event, event: Event) -> bool:
    return (call.kind == "tool-call" and event.kind == "tool-result" and call.call_id == event.call_id
            and call.turn == event.turn)


def event_lines(events: Sequence[Event]) -> list[tuple[str, tuple[Event, ...]]]:
    """One escaped, blinded line per event, `<id> t<turn> <content>`; a tool result that directly
    follows its call in the same turn joins the call's line as `-> <id> <status>: <result>`."""
    lines: list[tuple[str, tuple[Event, ...]]] = []
    shown = blind_events(events)  # model names in text, field by field (keys and identifiers stay)
    i = 0
    while i < len(events):
        event = shown[i]
        text = f"{event.id} t{event.turn} {_content(event)}"
        group: tuple[Event, ...] = (events[i],)
        if i + 1 < len(events) and _answers(events[i], events[i + 1]):
            text += f" -> {shown[i + 1].id} {_content(shown[i + 1], follows_call=True)}"
            group += (events[i + 1],)
        lines.append((escape_data(text), group))
        i += len(group)
    return lines


def ledger_line(row: LedgerRow) -> str:
    """`key (class, sensitivity): value`, then the status unless active, superseded values and the
    description."""
    line = f"{row.key} ({row.class_}, {row.sensitivity}): {_scalar(row.value)}"
    if row.status != "active":
        line += f" [{row.status}]"
    if row.superseded:
        line += " [superseded: " + "; ".join(f"{_scalar(v)} until t{t}" for v, t in row.superseded) + "]"
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
    tokens: int  # the request as sent: messages and the schema it carries (judge.judges.tokens)
    truncated: int = 0


def _truncate(line: str, tokens: int, room: int, count_line: LineCounter) -> str:
    while tokens > room and len(line) > 80:
        keep = max(80, int(len(line) * room / tokens * 0.9))
        line = line[:keep] + f" …[truncated {len(line) - keep} chars]"
        tokens = count_line(line)
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


def _window_messages(prompt: Prompt, request: JudgeRequest, groups: Sequence[tuple[str, tuple[Event, ...]]],
                     part: int, parts: int) -> tuple[tuple[Event, ...], list[dict[str, str]]]:
    events = tuple(e for _, group in groups for e in group)
    first = request.from_turn if part == 1 or not events else events[0].turn
    last = request.after_turn if part == parts or not events else events[-1].turn
    lines = [line for line, _ in groups]
    return events, prompt.render(context(request, lines, part=part, parts=parts, from_turn=first, to_turn=last))


def fixed_overhead(prompt: Prompt, request: JudgeRequest, count: RequestCounter) -> int:
    """Tokens of a request with an empty slice: what every window pays before its events."""
    return count(prompt.render(context(request, [], part=99, parts=99)), ())


def build_windows(prompt: Prompt, request: JudgeRequest, *, budget: int, count: RequestCounter,
                  count_line: LineCounter, slack: Callable[[list[dict[str, str]]], int] = lambda m: 0
                  ) -> list[Window]:
    """One window when the whole request fits `budget` tokens, else consecutive parts of the slice,
    each within budget (a line too long for any window is truncated, and counted as such).

    `count(messages, events)` is the request as sent (messages and the schema naming `events`),
    `count_line(line)` what one more line costs, `slack(messages)` a margin a window must leave
    (another counter's drift). Lines are packed greedily; a part still over budget hands its last
    line to the next part (a new last part if need be)."""
    lines = event_lines(list(request.events))
    events, whole = _window_messages(prompt, request, lines, 1, 1)
    total = count(whole, events)
    if total + slack(whole) <= budget:
        return [Window(1, 1, events, whole, total)]
    room = max(budget - fixed_overhead(prompt, request, count), 100)
    costs, cut = [], set()
    for i, (line, group) in enumerate(lines):
        cost = count_line(line)
        if cost > room:
            lines[i] = (_truncate(line, cost, room, count_line), group)
            cost = count_line(lines[i][0])
            cut.add(i)
        costs.append(cost)
    return _fit(prompt, request, lines, _group(costs, room), budget, count, slack, cut)


def _fit(prompt: Prompt, request: JudgeRequest, lines: list[tuple[str, tuple[Event, ...]]],
         groups: list[list[int]], budget: int, count: RequestCounter,
         slack: Callable[[list[dict[str, str]]], int], cut: set[int]) -> list[Window]:
    while True:
        windows, over = [], None
        for part, idx in enumerate(groups, start=1):
            events, msgs = _window_messages(prompt, request, [lines[i] for i in idx], part, len(groups))
            tokens = count(msgs, events)
            if tokens + slack(msgs) > budget and len(idx) > 1:
                over = part - 1
                break
            windows.append(Window(part, len(groups), events, msgs, tokens, len(cut.intersection(idx))))
        if over is None:
            return windows
        moved = groups[over].pop()
        if over + 1 == len(groups):
            groups.append([])
        groups[over + 1].insert(0, moved)


def summary_audit_context(after_turn: int, keys: Sequence[str], ledger: Sequence[LedgerRow], summary: Event,
                          names: Iterable[str | None] = ()) -> dict[str, Any]:
    """The template variables of a `summary-audit` prompt (see prompts/summary-audit/v1.md)."""
    return {
        "after_turn": after_turn,
        "keys": list(keys),
        "ledger": [ledger_line(r) for r in ledger],
        "summary_id": escape_data(summary.id),
        "summary_turn": summary.turn,
        "reason": getattr(summary, "reason", "compaction"),
        "summary": escape_data(blind(getattr(summary, "text", ""), names)),
    }
