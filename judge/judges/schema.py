"""Response models built per request, so that the answer can only name what the judge was shown.

`verdict_model(keys, event_ids)` makes a pydantic model whose `key` is a Literal of the asked keys and
whose `evidence_event` is a Literal of the shown event ids (or null); validators require evidence for
`violated` and allow each key at most once. The schema sent is pydantic's without the property titles
and `null` defaults (they cost tokens and say nothing the names do not); `strict_schema` is its form
for strict structured outputs (every property required, nullable where optional, and at most one
finding per asked key: `maxItems`, so that a server that turns the schema into a grammar, as
llama.cpp's does, ends the answer there instead of repeating keys until `max_tokens`). The client
(judge.judges.client) sends it and re-asks with the validation error when an answer breaks it: a
grammar enforces types and enums, not `confidence`'s range nor "each key once", so validation does.
`answer_tokens(model)` is the default bound of one answer (the request's `max_tokens`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from judge.model import JudgeFinding, JudgeVerdict

VERDICTS = ("violated", "upheld", "not-exercised")
SUMMARY_STATUSES = ("preserved", "missing", "distorted", "obsolete-as-current", "assumption-promoted",
                    "not-required")


def _compact(schema: dict[str, Any]) -> None:
    """pydantic's JSON Schema of a model, less its property titles and `null` defaults."""
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
        if "default" in prop and prop["default"] is None:
            del prop["default"]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_compact)


class _FindingBase(_Closed):
    @model_validator(mode="after")
    def _evidence_for_violations(self) -> _FindingBase:
        if getattr(self, "verdict", None) == "violated" and getattr(self, "evidence_event", None) is None:
            raise ValueError("a violated finding needs evidence_event: the id of the event that violates the entry")
        return self


TOKENS_PER_FINDING = 160  # a finding as small models write it (indented JSON, a 20-word rationale) is 50-70
TOKENS_BASE = 128
TOKENS_OTHER = 8192  # an answer model without findings per key (a ledger draft): lists of at most 60 items


def answer_tokens(model: type[BaseModel]) -> int:
    """The default bound of one answer to `model`, in tokens (the request's `max_tokens` when the
    judge sets none): 128 + 160 per asked key for a verdict or summary audit, else 8,192."""
    count = getattr(model, "key_count", 0)
    return TOKENS_BASE + TOKENS_PER_FINDING * count if count else TOKENS_OTHER


class _AnswerBase(_Closed):
    key_count: ClassVar[int] = 0  # the asked keys: at most one finding each

    if TYPE_CHECKING:  # what every answer model defines (create_model below); not a field here, so
        findings: list[Any]  # the answer models' schemas stay as they are

    @model_validator(mode="after")
    def _each_key_once(self) -> _AnswerBase:
        seen: set[str] = set()
        for finding in getattr(self, "findings", []):
            if finding.key in seen:
                raise ValueError(f"key {finding.key!r} is answered more than once: give one finding per key")
            seen.add(finding.key)
        return self


def _literal(values: Sequence[str]) -> Any:
    if not values:
        raise ValueError("a response model needs at least one value")
    return Literal[tuple(dict.fromkeys(values))]


def verdict_model(keys: Sequence[str], event_ids: Sequence[str]) -> type[BaseModel]:
    """The answer model for one request (one window of one checkpoint); built once per distinct
    (keys, event ids), since creating a pydantic model costs about a millisecond."""
    return _verdict_model(tuple(keys), tuple(event_ids))


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema, computed once per model class."""
    return _json_schema(model)


@lru_cache(maxsize=1024)
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


@lru_cache(maxsize=1024)
def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's schema for strict structured outputs (OpenAI's `strict: true`): every object closed
    and every property required (an optional one is already nullable). Computed once per model;
    treat it as read-only. (openai's own helper for this is private API: `openai.lib._pydantic`.)"""
    schema = copy.deepcopy(json_schema(model))
    for node in [schema, *schema.get("$defs", {}).values()]:
        _strict(node)
    if getattr(model, "key_count", 0):
        schema["properties"]["findings"]["maxItems"] = model.key_count  # type: ignore[attr-defined]
    return schema


def _strict(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _strict(item)
    elif isinstance(node, dict):
        node.pop("default", None)
        if "const" in node:
            node["enum"] = [node.pop("const")]
        if isinstance(node.get("properties"), dict):
            node["additionalProperties"] = False
            node["required"] = list(node["properties"])
        for name in ("properties", "items", "anyOf"):
            value = node.get(name)
            _strict(list(value.values()) if name == "properties" and isinstance(value, dict) else value)


@lru_cache(maxsize=1024)
def _verdict_model(keys: tuple[str, ...], event_ids: tuple[str, ...]) -> type[BaseModel]:
    evidence: Any = _literal(event_ids) | None if event_ids else Literal[None] | None
    finding = create_model(
        "Finding",
        __base__=_FindingBase,
        key=(_literal(keys), Field(description="an asked key")),
        verdict=(_literal(VERDICTS), ...),
        evidence_event=(evidence, Field(default=None, description="id of the deciding event; required when violated")),
        confidence=(float, Field(ge=0.0, le=1.0)),
        rationale=(str, ...),
    )
    return _answer_model("Verdict", finding, len(dict.fromkeys(keys)), "One finding per asked key.")


def _answer_model(name: str, finding: Any, keys: int, doc: str) -> type[BaseModel]:
    model = create_model(name, __base__=_AnswerBase, findings=(list[finding], ...))
    model.__doc__ = doc
    model.key_count = keys
    return model


def answer_findings(answer: BaseModel) -> list[Any]:
    """The findings of an answer made by one of this module's answer models."""
    if not isinstance(answer, _AnswerBase):
        raise TypeError(f"not an answer model of judge.judges.schema: {type(answer).__name__}")
    return answer.findings


def to_judge_verdict(answer: BaseModel) -> JudgeVerdict:
    return JudgeVerdict(findings=[JudgeFinding(**f.model_dump()) for f in answer_findings(answer)])


def summary_audit_model(keys: Sequence[str]) -> type[BaseModel]:
    """The answer model of a `summary-audit` prompt (prompts/summary-audit/v1.md)."""
    finding = create_model(
        "EntryFinding",
        __base__=_Closed,
        key=(_literal(keys), Field(description="an asked key")),
        status=(_literal(SUMMARY_STATUSES), ...),
        evidence=(str, Field(default="", description="the summary words relied on")),
        confidence=(float, Field(ge=0.0, le=1.0)),
        rationale=(str, ...),
    )
    return _answer_model("SummaryAudit", finding, len(dict.fromkeys(keys)), "One finding per asked ledger key.")
