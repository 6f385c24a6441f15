"""Renderings of the library's models: grade reports, suite reports, ledgers and summary audits as
JSON, terminal tables (rich), JUnit XML and Markdown. The library returns models; this turns them into text.

The CLI and the service import every rendering from here (their front door); each name loads its
module on first use (rich tables, the HTML page's templates), so a command imports only what it shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from judge.plugins import lazy_exports

if TYPE_CHECKING:
    from judge.render.config import render_checks, render_settings
    from judge.render.corpus import render_diff as render_corpus_diff
    from judge.render.corpus import render_terminal as render_corpus
    from judge.render.corpus import to_json as corpus_to_json
    from judge.render.drive import render_drive
    from judge.render.flagged import flagged_lines
    from judge.render.history import render_diff as render_runs_diff
    from judge.render.history import render_runs
    from judge.render.html import content_security_policy, corpus_page, grade_page, index_page, suite_page
    from judge.render.json_text import json_chunks
    from judge.render.kinds import kind_rows
    from judge.render.kinds import markdown_table as kinds_markdown
    from judge.render.ledger import ledger_json, render_ledger
    from judge.render.report import render_flagged, run_status
    from judge.render.report import render_terminal as render_report
    from judge.render.report import to_json as report_to_json
    from judge.render.report import to_junit as report_to_junit
    from judge.render.report import to_markdown as report_to_markdown
    from judge.render.style import cell, table
    from judge.render.style import render as render_table
    from judge.render.suite import render_terminal as render_suite
    from judge.render.suite import to_json as suite_to_json
    from judge.render.suite import to_junit as suite_to_junit
    from judge.render.suite import to_markdown as suite_to_markdown
    from judge.render.summary import render_audit, render_continuation
    from judge.render.trust import render_align, render_align_local, render_bias

_EXPORTS = {
    "render_checks": "judge.render.config", "render_settings": "judge.render.config",
    "corpus_to_json": "judge.render.corpus:to_json", "render_corpus": "judge.render.corpus:render_terminal",
    "render_corpus_diff": "judge.render.corpus:render_diff",
    "render_drive": "judge.render.drive",
    "render_runs": "judge.render.history", "render_runs_diff": "judge.render.history:render_diff",
    "content_security_policy": "judge.render.html", "corpus_page": "judge.render.html",
    "grade_page": "judge.render.html", "index_page": "judge.render.html", "suite_page": "judge.render.html",
    "flagged_lines": "judge.render.flagged",
    "json_chunks": "judge.render.json_text",
    "kind_rows": "judge.render.kinds", "kinds_markdown": "judge.render.kinds:markdown_table",
    "ledger_json": "judge.render.ledger", "render_ledger": "judge.render.ledger",
    "render_report": "judge.render.report:render_terminal", "run_status": "judge.render.report",
    "render_flagged": "judge.render.report",
    "report_to_json": "judge.render.report:to_json", "report_to_junit": "judge.render.report:to_junit",
    "report_to_markdown": "judge.render.report:to_markdown",
    "cell": "judge.render.style", "table": "judge.render.style", "render_table": "judge.render.style:render",
    "render_suite": "judge.render.suite:render_terminal", "suite_to_json": "judge.render.suite:to_json",
    "suite_to_junit": "judge.render.suite:to_junit", "suite_to_markdown": "judge.render.suite:to_markdown",
    "render_audit": "judge.render.summary", "render_continuation": "judge.render.summary",
    "render_align": "judge.render.trust", "render_align_local": "judge.render.trust",
    "render_bias": "judge.render.trust",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = [
    "cell", "content_security_policy", "corpus_page", "corpus_to_json", "flagged_lines", "grade_page", "index_page",
    "json_chunks",
    "kind_rows", "kinds_markdown", "ledger_json", "render_align", "render_align_local", "render_audit", "render_bias",
    "render_checks", "render_continuation", "render_corpus", "render_corpus_diff", "render_drive", "render_flagged",
    "render_ledger",
    "render_report", "render_runs", "render_runs_diff", "render_settings", "render_suite", "render_table",
    "report_to_json", "report_to_junit", "report_to_markdown", "run_status", "suite_page", "suite_to_json",
    "suite_to_junit", "suite_to_markdown", "table"
]
