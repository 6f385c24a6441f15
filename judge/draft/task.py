"""A trace with no user message: its first task statement stands in for the user's words.

Multi-agent logs (Who&When's CaptainAgent teams, for one) often hold no user message at all: the
task reaches the team as the first agent's message ("You are given: (1) a task and advises from
your manager ... # General Task ..."). The drafter then drafts from that message, and the draft
says so in its header and on every line citing it (`task statement`, not `user`): a reviewer must
check that the statement speaks for the person who set the task before trusting any entry from it.

The statement's text is the message without the importer's speaker label (`[Excel_Expert] `);
when it has Markdown headings, the part from the first heading that names a task (task, goal,
objective, request, problem, question) on, without the heading lines (what comes before it is the
framework's boilerplate: "You are given ..."); list items lose their markers ("- Use Python 3.11.").
"""

from __future__ import annotations

import re

from judge.draft.headings import heading

_LABEL = re.compile(r"^\s*\[[^\]\n]{1,80}\]\s*")
_MARKER = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+")  # a list item's marker: "- ", "2. "
_TASKISH = re.compile(r"\b(?:task|goal|objective|request|problem|question|assignment)s?\b", re.IGNORECASE)
MIN_WORDS = 3  # a statement shorter than this is no task ("OK.", "TERMINATE")


def statement_text(text: str) -> str:
    """The task the message states, as plain text (see the module docstring)."""
    body = _LABEL.sub("", text or "", count=1)
    lines = body.splitlines()
    headings = {i: h[1] for i, h in ((i, heading(line)) for i, line in enumerate(lines)) if h}
    start = next((i for i, title in headings.items() if _TASKISH.search(title)), None)
    if start is not None:
        lines = lines[start:]
    kept = [line for line in lines if not heading(line)] if headings else lines
    return "\n".join(_MARKER.sub(r"\1", line) for line in kept).strip()


def is_statement(text: str) -> bool:
    """Whether a message can state a task: a few words at least."""
    return len(statement_text(text).split()) >= MIN_WORDS
