"""Audit compaction and handoff summaries against the reviewed ledger: phrase, semantic and judge
layers (judge.summaries.audit), their evaluation on labelled summaries, and behavioural continuation.

Each name loads its module on first use (the semantic layer's model, the judge layer's client)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from judge.plugins import lazy_exports

if TYPE_CHECKING:
    from judge.summaries.audit import SummaryAuditor, audit_summary, audit_summary_events
    from judge.summaries.audit import exit_code as audit_exit_code
    from judge.summaries.continuation import continue_from_summary
    from judge.summaries.evaluation import evaluate as evaluate_layers
    from judge.summaries.evaluation import markdown_table as evaluation_table
    from judge.summaries.inputs import positioned_summaries, read_summary_file
    from judge.summaries.llm import make_summary_judge
    from judge.summaries.semantic import THRESHOLDS_FILE

_EXPORTS = {
    "SummaryAuditor": "judge.summaries.audit", "audit_summary": "judge.summaries.audit",
    "audit_summary_events": "judge.summaries.audit", "audit_exit_code": "judge.summaries.audit:exit_code",
    "continue_from_summary": "judge.summaries.continuation",
    "evaluate_layers": "judge.summaries.evaluation:evaluate",
    "evaluation_table": "judge.summaries.evaluation:markdown_table",
    "positioned_summaries": "judge.summaries.inputs", "read_summary_file": "judge.summaries.inputs",
    "make_summary_judge": "judge.summaries.llm", "THRESHOLDS_FILE": "judge.summaries.semantic",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["THRESHOLDS_FILE", "SummaryAuditor", "audit_exit_code", "audit_summary", "audit_summary_events",
           "continue_from_summary", "evaluate_layers", "evaluation_table", "make_summary_judge",
           "positioned_summaries", "read_summary_file"]
