"""The tools the driven agent is given: `--tools FILE`, else the script's `toolkit`, else one bare
schema (no declared arguments) per tool the fixtures or the rules name (globs left out)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judge.model import Scenario
from judge.model.tools import unwrap
from judge.trace.toolkit import read_toolkit

GLOB = "*?["
FUNCTION_FIELDS = {"name", "description", "parameters", "strict"}  # what a chat-completions function carries


def toolkit_of(scenario: Scenario, tools_file: Path | None = None) -> list[dict[str, Any]]:
    """OpenAI function schemas (bare: name, description, parameters), in the order declared."""
    if tools_file is not None:
        return [s.model_dump(include=FUNCTION_FIELDS, exclude_none=True)
                for s in read_toolkit(tools_file).schemas.values()]
    script = scenario.script
    if script is not None and script.toolkit:
        return [unwrap(entry).model_dump(include=FUNCTION_FIELDS, exclude_none=True) for entry in script.toolkit]
    names = list(script.tool_names()) if script is not None else []
    names += [tool for r in scenario.rules if isinstance(tool := getattr(r, "tool", None), str)]
    named = [n for n in dict.fromkeys(names) if not any(c in n for c in GLOB)]
    return [{"name": n, "parameters": {"type": "object", "properties": {}}} for n in named]
