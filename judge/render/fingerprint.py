"""A judge's fingerprint as one readable line, for every report header (grade, suite, run log):
`gpt llm openai/gpt-4o-mini goal-fidelity@1 (advisory)`. Never a Python dict: the fingerprint's
nested parts (the prompt) are named by what a reader knows them by."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judge.model import JsonView

# A fingerprint as a report holds it (a model that reads like a mapping) or as a run log's JSON has it.
JudgeFields = Mapping[str, Any] | JsonView


def judge_label(judge: JudgeFields | None) -> str:
    """`none (deterministic checks only)` for no judge; else name, backend, model, prompt id@version
    and whether it was binding."""
    if not judge:
        return "none (deterministic checks only)"
    bits = [str(judge[k]) for k in ("name", "backend", "model") if isinstance(judge.get(k), (str, int, float))
            and judge.get(k) != ""]
    prompt = judge.get("prompt")
    if isinstance(prompt, dict) and prompt.get("id"):
        bits.append(f"{prompt['id']}@{prompt.get('version')}")
    elif isinstance(prompt, str) and prompt:
        bits.append(prompt)
    if "binding" in judge:
        bits.append(f"({'binding' if judge['binding'] else 'advisory'})")
    return " ".join(bits) or "unnamed judge"


def judge_trust(judge: JudgeFields | None) -> str | None:
    """Why the judge was binding or not, for the reports that have room for it."""
    return judge.get("binding_reason") if judge else None
