"""POST /v1/audit-summary: the summary audit of `judge audit-summary`, over HTTP."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class AuditRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario: dict[str, Any] | str = Field(description="the scenario as a JSON object, or its YAML/JSON text")
    scenario_name: str | None = None
    summary: str = Field(min_length=1, description="the summary text")
    after_turn: int = Field(ge=0, description="the turn after which the ledger is compared")
    semantic: bool = Field(default=True, description="run the semantic layer (the embedded MiniLM model)")


def audit_request(request: AuditRequest) -> tuple[str, int]:
    """The audit report as JSON and the CLI's exit code (blocking: run it in a worker thread)."""
    from judge.model import SummaryAuditReport
    from judge.service.grade import request_ledger
    from judge.summaries import audit_exit_code, audit_summary

    ledger = request_ledger(request)
    model = "all-MiniLM-L6-v2" if request.semantic else None
    audit = audit_summary(ledger, request.summary, request.after_turn, model=model)
    report = SummaryAuditReport(audits=[audit], passed=audit.passed)
    return report.model_dump_json(by_alias=True, indent=2) + "\n", audit_exit_code([audit])
