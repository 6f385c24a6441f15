"""Pydantic models of every file format: the one source of the JSON Schemas (`judge schema`).

Scenario (the reviewed ledger fixture), trace events (JSONL), judge verdicts and the grade report.
Every model forbids unknown fields so that a typo in a fixture is an error, not a silent default.

The bounded JSON read, the depth message and the atomic write are re-exported for the CLI and the
service (their front door), in the `name as name` form and not in `__all__`: not public API.
The JSON Schemas (`SCHEMAS`, `json_schema`, `schema_names`) load on first use, with the corpus
report's models only they name: grading a run builds neither.
"""

from typing import TYPE_CHECKING, Any

from judge.model.atomic import write_atomic as write_atomic
from judge.model.base import (
    Authority,
    DeltaOp,
    EntryClass,
    FindingVerdict,
    Outcome,
    Persistence,
    Sensitivity,
    Source,
    Strict,
    Verdict,
)
from judge.model.events import (
    EVENT_KINDS,
    AgentInfo,
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
from judge.model.fingerprint import (
    JudgeFingerprint,
    ParamsFingerprint,
    PromptFingerprint,
    ReportJudge,
    Sampling,
    as_fingerprint,
)
from judge.model.limits import depth_message as depth_message
from judge.model.limits import read_json_file as read_json_file
from judge.model.limits import same_file as same_file
from judge.model.parts import JsonView, SetFields
from judge.model.policy import Policy, PolicyEntry
from judge.model.provenance import Candidate, InputFile, Inputs, Provenance
from judge.model.report import (
    CheckpointReport,
    Cost,
    Divergence,
    Finding,
    GradeReport,
    JudgeFinding,
    JudgeVerdict,
    Leak,
    Metrics,
    PathReview,
    Recovery,
    RequestUsage,
    RunReport,
    Veto,
)
from judge.model.rules import REGISTRY, Rule, RuleBase, RuleKind, holds_rules, rule_kinds, rule_models
from judge.model.scenario import ActionSet, Checkpoint, Delta, ForbiddenPath, LedgerEntry, PathStep, Scenario, Session
from judge.model.script import FixturesFile, Script, ScriptTurn, ToolFixture, ToolResponse
from judge.model.summary import LayerFinding, SummaryAudit, SummaryAuditReport, SummaryFinding
from judge.model.tools import FunctionTool, ToolEntry, ToolSchema, ToolsFile

if TYPE_CHECKING:
    from judge.model.schemas import SCHEMAS, json_schema, schema_names

# Loaded on first use by a plain import (no load by name: the formats reach nothing a contract cannot see).
_SCHEMA_NAMES = ("SCHEMAS", "json_schema", "schema_names")

__all__ = [
    "ActionSet", "AgentInfo", "AssistantEvent", "Authority", "Candidate", "Checkpoint", "CheckpointReport",
    "Cost", "Delta", "DeltaOp", "Divergence", "EVENT_KINDS", "EntryClass", "Event", "EventMeta", "Finding",
    "FindingVerdict", "FixturesFile", "ForbiddenPath", "FunctionTool", "GradeReport", "InputFile", "Inputs",
    "JsonView", "JudgeFinding", "JudgeFingerprint", "JudgeVerdict", "LayerFinding", "Leak", "LedgerEntry",
    "Metrics", "Outcome", "ParamsFingerprint", "PathReview", "PathStep", "Persistence", "Policy", "PolicyEntry",
    "PromptFingerprint",
    "Provenance", "REGISTRY", "Recovery", "ReportJudge", "RequestUsage", "Rule", "RuleBase", "RuleKind",
    "RunHeader", "RunReport", "SCHEMAS", "Sampling", "Scenario", "Script", "ScriptTurn", "Sensitivity", "Session",
    "SetFields", "SnapshotEvent", "Source", "StateWriteEvent", "Strict", "SummaryAudit", "SummaryAuditReport",
    "SummaryEvent", "SummaryFinding", "ToolCallEvent", "ToolEntry", "ToolFixture", "ToolResponse",
    "ToolResultEvent", "ToolSchema", "ToolsFile", "UserEvent", "Verdict", "Veto", "as_fingerprint", "holds_rules",
    "json_schema", "rule_kinds", "rule_models", "schema_names"
]


def __getattr__(name: str) -> Any:
    """A name loaded on first use (`_SCHEMA_NAMES`), or the model class of a registered rule kind by its
    class name (`judge.model.ScopeRule`): the kinds live beside their checks (judge.checks.kinds) and
    load when first asked for."""
    if name in _SCHEMA_NAMES:
        import judge.model.schemas as schemas  # not `from judge.model import`: that asks this hook first

        return getattr(schemas, name)
    for model in rule_models().values():
        if model.__name__ == name:
            return model
    raise AttributeError(f"module 'judge.model' has no attribute {name!r}")
