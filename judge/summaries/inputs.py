"""The inputs of a summary audit: a summary text file, or the summary events of a trace; errors name
the file and the field (exit 2 in the CLI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError, with_article
from judge.ledger import ExpectedLedger
from judge.model import SummaryEvent


def read_summary_file(path: str | Path) -> str:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise JudgeInputError(f"cannot read: {exc.strerror}", file=str(path)) from None
    if b"\x00" in raw[:8192]:
        raise JudgeInputError("binary file, expected the summary as text", file=str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JudgeInputError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from None
    if not text.strip():
        raise JudgeInputError("the summary file is empty", file=str(path))
    return text


def summary_events_of(trace: str | Path, ledger: ExpectedLedger, event_id: str | None = None) -> list[SummaryEvent]:
    """The trace's summary events (or the one named `event_id`); errors name file and field."""
    return positioned_summaries(trace, ledger, event_id)[0]


def positioned_summaries(trace: str | Path, ledger: ExpectedLedger,
                         event_id: str | None = None) -> tuple[list[SummaryEvent], dict[str, Any]]:
    """The trace's summary events (or the one named `event_id`), and for each what came before it
    in its turn (judge.summaries.position), so each is audited against the ledger at its event."""
    from judge.summaries.position import positions
    from judge.trace import read_trace

    _, events, _ = read_trace(trace, expected_scenario=ledger.scenario.id)
    return _chosen(events, trace, event_id), positions(events)


def _chosen(events: list, trace: str | Path, event_id: str | None) -> list[SummaryEvent]:
    if event_id is not None:
        chosen = [e for e in events if e.id == event_id]
        if not chosen:
            raise JudgeInputError(f"no event with id {event_id!r}", file=str(trace), field="id")
        if not isinstance(chosen[0], SummaryEvent):
            raise JudgeInputError(f"event {event_id!r} is {with_article(repr(chosen[0].kind))} event, not a summary",
                                  file=str(trace), field="kind")
        return [chosen[0]]
    found = [e for e in events if isinstance(e, SummaryEvent)]
    if not found:
        raise JudgeInputError("the trace has no summary event", file=str(trace), field="kind")
    return found
