"""JSON Schemas of the file formats, generated from the pydantic models of this package."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, TypeAdapter

from judge.errors import UsageError
from judge.model.corpus import CorpusDiff, CorpusReport
from judge.model.events import (
    AssistantEvent,
    Event,
    EventMeta,
    RunHeader,
    SnapshotEvent,
    StateWriteEvent,
    SummaryEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserEvent,
)
from judge.model.policy import Policy
from judge.model.report import GradeReport, JudgeVerdict
from judge.model.rules import Rule
from judge.model.scenario import Checkpoint, Delta, LedgerEntry, Scenario, Session
from judge.model.script import FixturesFile, Script, ToolFixture
from judge.model.tools import ToolSchema, ToolsFile

SCHEMAS: dict[str, type[BaseModel] | Any] = {
    "scenario": Scenario,
    "policy": Policy,
    "ledger-entry": LedgerEntry,
    "delta": Delta,
    "checkpoint": Checkpoint,
    "session": Session,
    "rule": Rule,
    "script": Script,
    "tool-fixture": ToolFixture,
    "fixtures": FixturesFile,
    "run-header": RunHeader,
    "event": Event,
    "user": UserEvent,
    "assistant": AssistantEvent,
    "tool-call": ToolCallEvent,
    "tool-result": ToolResultEvent,
    "state-write": StateWriteEvent,
    "summary": SummaryEvent,
    "snapshot": SnapshotEvent,
    "event-meta": EventMeta,
    "tools": ToolsFile,
    "tool": ToolSchema,
    "judge-verdict": JudgeVerdict,
    "grade-report": GradeReport,
    "corpus-report": CorpusReport,
    "corpus-diff": CorpusDiff,
}
"""Every format of this package by the name `judge schema` knows it (the suite's are in judge.suite)."""

def schema_names() -> list[str]:
    """The names of this package's formats, in the order `judge schema` lists them."""
    return list(SCHEMAS)


def json_schema(name: str, formats: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON Schema of a format of `formats` (default: this package's; the CLI adds the suite's)."""
    formats = SCHEMAS if formats is None else formats
    if name not in formats:
        raise UsageError(f"unknown schema {name!r}; known: {', '.join(formats)}", field="NAME")
    schema = TypeAdapter(formats[name]).json_schema(by_alias=True)
    schema.setdefault("title", name)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
