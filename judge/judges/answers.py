"""What the direct client sends and reads for a structured answer, in the two modes it speaks.

- `tools` (the default): the response model travels as one function tool, forced by `tool_choice`;
  the answer is the tool call's arguments. The tool definition is the one instructor builds for the
  same model (name = the model's title, description = its docstring, parameters = its JSON Schema
  less title and description, `required` sorted; tests/test_llm_client.py holds them equal), and a
  re-ask is instructor's: the assistant's message with its tool call, then a `tool` message carrying
  the validation error (a plain user message when the model called no tool). So a provider sees the
  same requests whichever client sends them.
- `strict`: OpenAI structured outputs, `response_format` json_schema with `strict: true`
  (judge.judges.schema.strict_schema); the answer is the message content; a re-ask sends the answer
  back with the validation error as a user message.

Either way the answer is validated once, by the per-request pydantic model (judge.judges.schema).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from judge.judges.schema import json_schema, strict_schema

DIRECT_MODES = ("tools", "strict")
REASK = ("Your answer does not validate against the response schema:\n{error}\n"
         "Answer again: the corrected JSON only.")
TOOL_REASK = "Validation Error found:\n{error}\nRecall the function correctly, fix the errors"


@lru_cache(maxsize=1024)
def tool_definition(model_cls: type[BaseModel]) -> dict[str, Any]:
    """The model as one function tool (what instructor's `openai_schema` gives; read-only)."""
    schema = copy.deepcopy(json_schema(model_cls))
    parameters = {k: v for k, v in schema.items() if k not in ("title", "description")}
    parameters["required"] = sorted(schema.get("required", []))
    name = schema.get("title", model_cls.__name__)
    description = schema.get("description") or (
        f"Correctly extracted `{model_cls.__name__}` with all the required parameters with correct types")
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


@lru_cache(maxsize=1024)
def response_format(model_cls: type[BaseModel]) -> dict[str, Any]:
    """The model as a strict `response_format` (read-only)."""
    return {"type": "json_schema", "json_schema": {"name": model_cls.__name__, "schema": strict_schema(model_cls),
                                                   "strict": True}}


def schema_part(mode: str, model_cls: type[BaseModel]) -> dict[str, Any]:
    """What a request carries besides its messages to ask for `model_cls` in `mode`."""
    if mode == "strict":
        return {"response_format": response_format(model_cls)}
    tool = tool_definition(model_cls)
    return {"tools": [tool], "tool_choice": {"type": "function", "function": {"name": tool["function"]["name"]}}}


@dataclass
class Completion:
    """The parts of a chat completion the client reads (from the JSON, or a litellm response)."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    refusal: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Completion:
        """From the JSON body of a chat completion; one without choices is a ValueError."""
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise ValueError("the response has no choices[0].message") from None
        usage = data.get("usage") or {}
        return cls(content=message.get("content"), tool_calls=list(message.get("tool_calls") or []),
                   refusal=message.get("refusal"), input_tokens=usage.get("prompt_tokens") or 0,
                   output_tokens=usage.get("completion_tokens") or 0)

    @classmethod
    def from_response(cls, response: Any) -> Completion:
        """From a litellm (OpenAI SDK shaped) response object."""
        message = response.choices[0].message
        counts = getattr(response, "usage", None)
        calls = [call.model_dump() if hasattr(call, "model_dump") else dict(call)
                 for call in (getattr(message, "tool_calls", None) or [])]
        return cls(content=message.content, tool_calls=calls, refusal=getattr(message, "refusal", None),
                   input_tokens=getattr(counts, "prompt_tokens", 0) or 0,
                   output_tokens=getattr(counts, "completion_tokens", 0) or 0)


def answer_text(mode: str, reply: Completion) -> str:
    """The JSON text of the answer; an answer that has none is a ValueError (it is re-asked)."""
    if mode == "strict":
        if reply.content is None:
            raise ValueError(f"no answer content (refusal: {reply.refusal!r})")
        return reply.content
    if reply.refusal:
        raise ValueError(f"unable to generate a response due to {reply.refusal}")
    if not reply.tool_calls:
        raise ValueError("no tool call in the answer: call the function with the answer as its arguments")
    arguments = (reply.tool_calls[0].get("function") or {}).get("arguments")
    if arguments is None:
        raise ValueError("the tool call has no arguments")
    if not isinstance(arguments, str):
        return json.dumps(arguments)
    return arguments


def reask(mode: str, reply: Completion, error: Exception) -> list[dict[str, Any]]:
    """The messages that send an invalid answer back with its validation error (module docs)."""
    if mode == "strict":
        return [{"role": "assistant", "content": reply.content or ""},
                {"role": "user", "content": REASK.format(error=error)}]
    said: dict[str, Any] = {"role": "assistant", "content": reply.content or ""}
    if reply.tool_calls:
        said["tool_calls"] = reply.tool_calls
    text = TOOL_REASK.format(error=error)
    if not reply.tool_calls:
        return [said, {"role": "user", "content": text}]
    return [said, *({"role": "tool", "tool_call_id": call.get("id"), "name": (call.get("function") or {}).get("name"),
                     "content": text} for call in reply.tool_calls)]
