"""The tools an agent was given: OpenAI function schemas, in a `--tools FILE` or the run header.

One tool is `{"name", "description"?, "parameters"?}` (parameters: a JSON Schema object), bare or
wrapped as `{"type": "function", "function": {...}}` (the chat-completions `tools` list); a file
is a list of them or `{"tools": [...]}`. Anthropic's `input_schema` and MCP's `inputSchema` are
read as `parameters`, so an MCP `tools/list` result reads as it is. judge.trace.toolkit reads the file; the rules read
the resulting Toolkit.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field, field_validator

from judge.model.base import Strict


class ToolSchema(Strict):
    """One tool the agent was given (an OpenAI function schema)."""

    name: str = Field(min_length=1)
    description: str | None = None
    parameters: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("parameters", "input_schema", "inputSchema"),
        description="a JSON Schema object; its `properties` name the arguments (nested ones by dotted path)")
    strict: bool | None = None
    title: str | None = Field(default=None, description="a display name (MCP)")
    annotations: dict[str, Any] | None = Field(default=None, description="hints about the tool's behaviour (MCP)")
    output_schema: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("output_schema", "outputSchema"),
        description="a JSON Schema of the tool's result (MCP's outputSchema)")

    @field_validator("parameters")
    @classmethod
    def _properties_are_an_object(cls, parameters: dict[str, Any] | None) -> dict[str, Any] | None:
        if parameters is not None and not isinstance(parameters.get("properties", {}), dict):
            raise ValueError("`parameters.properties` must be an object (argument name -> JSON Schema)")
        return parameters


class FunctionTool(Strict):
    """A tool as the chat-completions API lists it: `{"type": "function", "function": {...}}`."""

    type: Literal["function"] = "function"
    function: ToolSchema


ToolEntry = FunctionTool | ToolSchema
"""One tool of a toolkit: a bare schema, or the `{"type": "function", "function": {...}}` wrapper."""


class ToolsFile(Strict):
    """A `--tools FILE` (also accepted: a bare list of tools)."""

    tools: list[ToolEntry]


def unwrap(entry: ToolEntry) -> ToolSchema:
    """The function schema of a tool, bare or wrapped."""
    return entry.function if isinstance(entry, FunctionTool) else entry
