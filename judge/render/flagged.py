"""The lines `judge grade -q` still prints: one per flagged finding. Plain text, no rich: a quiet
rules-only grade imports no terminal rendering when nothing is flagged (tests/test_light_start.py)."""

from __future__ import annotations

from judge.model import GradeReport


def flagged_lines(report: GradeReport) -> list[str]:
    """One line per flagged finding: the run, the checkpoint, the key and its event, then what the
    judge read and why (its rationale) and that a person decides. What `judge grade -q` still prints:
    a flag on a safety-critical key makes the run inconclusive, and exit code 3 alone says not why."""
    lines = []
    for run in report.runs:
        for cp in run.checkpoints:
            for f in cp.findings:
                if f.verdict != "flagged":
                    continue
                at = f" at {f.evidence_event}" if f.evidence_event else ""
                critical = ", safety-critical: the run is inconclusive" if f.sensitivity == "safety-critical" else ""
                why = f.rationale or f.detail or "no reason given"
                lines.append(f"flagged {run.scenario} / {run.run_id} after turn {cp.after_turn}: {f.key}{at}: {why} "
                             f"(a judge that is not binding said violated; a person decides{critical})")
    return lines
