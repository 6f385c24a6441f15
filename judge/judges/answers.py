"""What the direct client sends and reads for a structured answer, in each form an endpoint may take.

A *form* is how a request asks for the answer's schema. Servers differ in which they honour:
- `tool`: the response model as one function tool, forced by a named `tool_choice` object (OpenAI's
  form, and instructor's: name = the model's title, description = its docstring, parameters = its
  JSON Schema less title and description, `required` sorted; tests/test_llm_client.py holds them
  equal). The answer is the tool call's arguments; a re-ask is instructor's: the assistant's
  message with its tool call, then a `tool` message carrying the validation error (a plain user
  message when the model called no tool). llama.cpp's llama-server takes `tool_choice` only as a
  string: it drops the object, and the model answers in text.
- `tool_required`: the same tool, forced by `tool_choice: "required"` (one tool: the same force).
- `json_schema`: OpenAI structured outputs, `response_format` json_schema with `strict: true`
  (judge.judges.schema.strict_schema); the answer is the message content. llama-server, vLLM and
  Ollama turn the schema into a grammar that holds types and enums (not ranges, nor "each key once":
  validation does). A re-ask sends the answer back with the validation error as a user message.
- `plain_json`: no schema parameter at all: the schema travels in the system message as text and the
  answer is read from the content (inside a ``` fence, or from its first `{` to its last `}`), then
  validated. Any chat endpoint takes it; only validation holds the answer to the schema.

`mode` picks the ladder of forms the client tries, in order (`LADDERS`; `options.forms` overrides it):
a form the endpoint refuses (HTTP 400/422) or ignores (a forced tool left uncalled) makes the client
try the next, and remember it for the endpoint. Either way the answer is validated once, by the
per-request pydantic model (judge.judges.schema).
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
FORMS = ("tool", "tool_required", "json_schema", "plain_json")
TOOL_FORMS = ("tool", "tool_required")
LADDERS = {"tools": ("tool", "tool_required", "json_schema", "plain_json"), "strict": ("json_schema", "plain_json")}
REASK = ("Your answer does not validate against the response schema:\n{error}\n"
         "Answer again: the corrected JSON only.")
TOOL_REASK = "Validation Error found:\n{error}\nRecall the function correctly, fix the errors"
PLAIN_JSON = ("Answer with one JSON object and nothing else. It must validate against this JSON Schema:\n"
              "{schema}")


def form_of(name: str) -> str:
    """A form's name; a direct mode stands for the first form of its ladder (`tools`: `tool`)."""
    return LADDERS[name][0] if name in LADDERS else name


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


@lru_cache(maxsize=1024)
def schema_text(model_cls: type[BaseModel]) -> str:
    """The `plain_json` form's instruction: the model's JSON Schema as compact text."""
    return PLAIN_JSON.format(schema=json.dumps(json_schema(model_cls), separators=(",", ":")))


def schema_part(form: str, model_cls: type[BaseModel]) -> dict[str, Any]:
    """What a request carries besides its messages to ask for `model_cls` in `form` (or a mode)."""
    form = form_of(form)
    if form == "json_schema":
        return {"response_format": response_format(model_cls)}
    if form == "plain_json":
        return {}
    tool = tool_definition(model_cls)
    choice: Any = "required" if form == "tool_required" else {"type": "function",
                                                              "function": {"name": tool["function"]["name"]}}
    return {"tools": [tool], "tool_choice": choice}


def form_messages(form: str, messages: list[dict[str, Any]], model_cls: type[BaseModel]) -> list[dict[str, Any]]:
    """The messages as sent in `form` (copies): `plain_json` adds the schema to the system message."""
    sent = [dict(m) for m in messages]
    if form_of(form) != "plain_json":
        return sent
    if sent and sent[0].get("role") == "system":
        sent[0]["content"] = f"{sent[0].get('content') or ''}\n\n{schema_text(model_cls)}"
    else:
        sent.insert(0, {"role": "system", "content": schema_text(model_cls)})
    return sent


@dataclass
class Completion:
    """The parts of a chat completion the client reads (from the JSON, or a litellm response)."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    refusal: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Completion:
        """From the JSON body of a chat completion; one without choices is a ValueError."""
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise ValueError("the response has no choices[0].message") from None
        usage = data.get("usage") or {}
        return cls(content=message.get("content"), tool_calls=list(message.get("tool_calls") or []),
                   refusal=message.get("refusal"), input_tokens=usage.get("prompt_tokens") or 0,
                   output_tokens=usage.get("completion_tokens") or 0, finish_reason=choice.get("finish_reason"))

    @classmethod
    def from_response(cls, response: Any) -> Completion:
        """From a litellm (OpenAI SDK shaped) response object."""
        choice = response.choices[0]
        message = choice.message
        counts = getattr(response, "usage", None)
        calls = [call.model_dump() if hasattr(call, "model_dump") else dict(call)
                 for call in (getattr(message, "tool_calls", None) or [])]
        return cls(content=message.content, tool_calls=calls, refusal=getattr(message, "refusal", None),
                   input_tokens=getattr(counts, "prompt_tokens", 0) or 0,
                   output_tokens=getattr(counts, "completion_tokens", 0) or 0,
                   finish_reason=getattr(choice, "finish_reason", None))


def json_in(content: str) -> str:
    """The JSON of a text answer: inside its first ``` fence if it has one, else from its first `{`
    to its last `}` (small models wrap their JSON in prose or fences). str.find only: linear."""
    text = content
    fence = content.find("```")
    if fence >= 0:
        start = content.find("\n", fence)
        end = content.find("```", start) if start >= 0 else -1
        if end >= 0:
            text = content[start + 1:end]
    first, last = text.find("{"), text.rfind("}")
    return text[first:last + 1] if 0 <= first < last else text.strip()


def answer_text(form: str, reply: Completion) -> str:
    """The JSON text of the answer; an answer that has none is a ValueError (it is re-asked)."""
    if form_of(form) not in TOOL_FORMS:
        if reply.content is None:
            raise ValueError(f"no answer content (refusal: {reply.refusal!r})")
        return json_in(reply.content)
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


def reask(form: str, reply: Completion, error: Exception) -> list[dict[str, Any]]:
    """The messages that send an invalid answer back with its validation error (module docs)."""
    if form_of(form) not in TOOL_FORMS:
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
