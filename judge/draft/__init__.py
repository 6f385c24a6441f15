"""Draft a scenario (the reviewed-ledger fixture) from traces, for a test author to review.

    from judge.draft import draft_scenario
    result = draft_scenario(["run.jsonl"])          # offline cue tables only
    result.text                                      # the YAML, `draft: true`, every line with its evidence

Stages: source (what the user said and tools returned) -> extract (goal and work asked, restrictions,
facts, changes, tool facts, sensitivity) -> assist (optional: a model's proposals, merged) -> build
(rules, checkpoints, fixture checks) -> write (YAML with comments). `review_notes` lists what a
reviewer should check in a draft file (`judge lint`). `make_assistant` (the model layer, by judge
name) loads on first use.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.draft.build import finish
from judge.draft.extract import extract
from judge.draft.items import Draft
from judge.draft.review import review_notes
from judge.draft.rules import draft_rules
from judge.draft.source import read_conversation, read_tool_schemas
from judge.draft.write import to_yaml
from judge.model.scenario import DRAFT_SUFFIX
from judge.plugins import lazy_exports

if TYPE_CHECKING:
    from judge.draft.assist import make_assistant

__getattr__ = lazy_exports(__name__, {"make_assistant": "judge.draft.assist"})

OFFLINE_VERSION = 2  # bump when the cue tables or the drafting change what a draft says

__all__ = ["OFFLINE_VERSION", "DraftResult", "draft_policy", "draft_scenario", "make_assistant", "review_notes"]


@dataclass
class DraftResult:
    text: str
    draft: Draft
    scenario: dict[str, Any]
    assist: dict[str, Any] | None = None  # the model layer's fingerprint, usage and error, when it ran
    warnings: list[str] = field(default_factory=list)


def draft_scenario(traces: Iterable[str | Path], *, scenario_id: str | None = None,
                   tools: str | Path | None = None, assistant: Any = None) -> DraftResult:
    """Draft a scenario from `traces` (the first gives the conversation; all give tools), with
    `tools` (OpenAI function schemas) and, when given, a model `assistant` (judge.draft.assist)."""
    conv = read_conversation(traces, scenario_id=scenario_id,
                             tool_schemas=read_tool_schemas(tools) if tools is not None else None)
    draft = extract(conv)
    draft.rules = draft_rules(draft, conv.tools)
    draft.header.append(f"source: {conv.trace} (run {conv.run_id}, sha256 {conv.sha256[:16]}); "
                        f"drafter: offline cues v{OFFLINE_VERSION}")
    if conv.task_statement is not None:
        draft.task_event = conv.task_statement
        draft.header.append(f"no user message: drafted from the first task statement, {conv.task_statement} (an "
                            "agent's message, cited as `task statement`), as if the user had said it: check that it "
                            "speaks for whoever set the task")
    if scenario_id is None:
        reviewed = draft.scenario_id.removesuffix(DRAFT_SUFFIX)
        draft.header.append(f"id {draft.scenario_id}: a draft never takes the id of the scenario its traces name "
                            f"({reviewed}), so it cannot shadow a reviewed one; it grades {reviewed}'s traces all the "
                            f"same. Once reviewed, name it {reviewed} (or another id) yourself")
    if conv.redactions:
        draft.header.append("redacted before drafting: " + ", ".join(f"{k} x{v}" for k, v in conv.redactions.items()))
    draft.notes += conv.disagreements
    assist = None
    if assistant is not None:
        from judge.draft.merge import merge

        outcome = assistant.propose(conv, draft)
        assist = {**outcome.summary(), "fingerprint": assistant.fingerprint()}
        draft.header.append(f"model layer: {assistant.describe()}")
        if outcome.error:
            draft.notes.append(f"the model layer failed, the draft is offline only: {outcome.error}")
        else:
            merge(draft, outcome.answer, conv)
    scenario = finish(draft, conv.tools, with_rules=False)
    return DraftResult(text=to_yaml(draft), draft=draft, scenario=scenario, assist=assist,
                       warnings=list(conv.disagreements))


def draft_policy(document: str | Path, *, traces: Iterable[str | Path] = (), tools: str | Path | None = None,
                 policy_id: str | None = None) -> DraftResult:
    """Draft a policy from a written policy `document` (judge.draft.policy): entries that hold from
    turn 0, each citing its sentence, and rules on the tools `tools` (function schemas) and the
    traces' calls name. Written as a scenario with no checkpoints (an implicit final checkpoint
    covers the run), marked `draft: true`; its id is `<the document's title>-draft` by default."""
    from judge.draft.policy import policy_draft
    from judge.draft.policy_doc import read_policy_document
    from judge.draft.policy_rules import policy_rules
    from judge.draft.source import read_tools
    from judge.draft.write import SCENARIO_ONLY
    from judge.ledger.policy import validate_policy

    doc = read_policy_document(document)
    known = read_tools(traces, read_tool_schemas(tools) if tools is not None else None)
    draft = policy_draft(doc, policy_id or (_slug(doc.title) or "policy") + DRAFT_SUFFIX)
    draft.rules = policy_rules(draft, known)
    draft.header += [
        f"policy: drafted from the written policy {doc.path} (sha256 {doc.sha256[:16]}); drafter: offline cues "
        f"v{OFFLINE_VERSION}. Each entry cites its sentence (file:line, and its section)",
        "a policy holds from turn 0 over the whole run: every entry has source_turn 0, and there are no checkpoints "
        "(an implicit final checkpoint covers the run)",
        f"tools: {', '.join(sorted(known)) or 'none known (give --tools or traces): no rule names a tool'}",
    ]
    scenario = finish(draft, known, with_rules=False, with_checkpoints=False)
    scenario = {k: v for k, v in scenario.items() if k not in SCENARIO_ONLY}  # a policy has neither
    validate_policy(scenario, "draft")  # what `judge grade --policy` reads it with: it grades as it is
    return DraftResult(text=to_yaml(draft), draft=draft, scenario=scenario)


def _slug(text: str) -> str:
    """`Airline Agent Policy` -> `airline-agent-policy` (at most 60 characters)."""
    import re

    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))[:60].strip("-")
