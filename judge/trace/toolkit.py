"""The toolkit: the tools an agent was given, read in one place for the rules, the lint and the drafter.

It comes from `--tools FILE` (OpenAI function schemas, judge.model.tools; read whole within the
bounds every JSON file the user names is held to) or from the run header's `tools`. A rule reads it
from its RuleContext (`ctx.toolkit`, None when neither declares one); the lint reads the argument
names its schemas declare, nested ones by dotted path (`address.city`; an array's items are
looked through: `items.sku`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from judge.errors import JudgeInputError
from judge.model import RunHeader
from judge.model.limits import read_json_file
from judge.model.tools import FunctionTool, ToolEntry, ToolSchema, unwrap

MAX_ARGUMENT_PATHS = 10_000
"""Argument paths read from one tool's schema at most (a hostile schema cannot grow without bound)."""

_SCHEMA = TypeAdapter(ToolSchema)
_WRAPPED = TypeAdapter(FunctionTool)


def argument_paths(parameters: Mapping[str, Any] | None) -> frozenset[str]:
    """Every argument a JSON Schema object declares, nested ones by dotted path, through
    `properties`, array `items` and `anyOf`/`oneOf`/`allOf` branches."""
    found: set[str] = set()
    stack: list[tuple[str, Any]] = [("", parameters)]
    while stack and len(found) < MAX_ARGUMENT_PATHS:
        prefix, schema = stack.pop()
        if not isinstance(schema, Mapping):
            continue
        for branch in ("anyOf", "oneOf", "allOf"):
            if isinstance(schema.get(branch), list):
                stack.extend((prefix, s) for s in schema[branch])
        if isinstance(schema.get("items"), Mapping):
            stack.append((prefix, schema["items"]))
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            for name, sub in properties.items():
                path = f"{prefix}.{name}" if prefix else str(name)
                found.add(path)
                stack.append((path, sub))
    return frozenset(found)


def _types(schema: Any) -> set[str]:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kind, str):
        return {kind}
    return {k for k in kind if isinstance(k, str)} if isinstance(kind, list) else set()


@dataclass(frozen=True)
class Toolkit:
    """The tools an agent was given, by name, and where they were declared (`origin`)."""

    schemas: Mapping[str, ToolSchema]
    origin: str
    _arguments: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    def __contains__(self, tool: object) -> bool:
        return tool in self.schemas

    def __len__(self) -> int:
        return len(self.schemas)

    @property
    def names(self) -> list[str]:
        """The tool names, in the order they were declared."""
        return list(self.schemas)

    def arguments(self, tool: str) -> frozenset[str]:
        """The argument paths the tool's schema declares (empty for an unknown tool)."""
        if tool not in self._arguments:
            schema = self.schemas.get(tool)
            self._arguments[tool] = argument_paths(schema.parameters) if schema is not None else frozenset()
        return self._arguments[tool]

    def argument_types(self, tool: str) -> dict[str, set[str]]:
        """The top-level arguments of a tool and the JSON types its schema gives each."""
        schema = self.schemas.get(tool)
        props = (schema.parameters or {}).get("properties") if schema is not None else None
        return {str(name): _types(sub) for name, sub in (props or {}).items()}

    def description(self, tool: str) -> str:
        """The tool's description from its schema ("" when it has none or is unknown)."""
        schema = self.schemas.get(tool)
        return (schema.description or "") if schema is not None else ""


def toolkit_of(entries: Iterable[ToolEntry], origin: str) -> Toolkit:
    """A Toolkit of validated entries, bare or wrapped (the first of a repeated name is kept)."""
    schemas: dict[str, ToolSchema] = {}
    for entry in entries:
        schema = unwrap(entry)
        schemas.setdefault(schema.name, schema)
    return Toolkit(schemas, origin)


def header_toolkit(header: RunHeader) -> Toolkit | None:
    """The toolkit a trace's run header declares (`tools`), or None when it declares none."""
    if header.tools is None:
        return None
    return toolkit_of(header.tools, "the trace header's `tools`")


def _entry(item: Any, i: int, file: str) -> ToolSchema:
    wrapped = isinstance(item, dict) and ("function" in item or "type" in item)
    try:
        return unwrap(_WRAPPED.validate_python(item) if wrapped else _SCHEMA.validate_python(item))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        message = "unknown field" if err["type"] == "extra_forbidden" else \
            "required field is missing" if err["type"] == "missing" else err["msg"]
        raise JudgeInputError(f"not a function schema: {message}", file=file,
                              field=f"tools.{i}" + (f".{loc}" if loc else "")) from None


def _items(data: Any, file: str) -> Iterator[tuple[int, Any]]:
    items = data.get("tools") if isinstance(data, dict) and set(data) == {"tools"} else data
    if not isinstance(items, list):
        raise JudgeInputError('expected a list of function schemas (or {"tools": [...]})', file=file)
    return enumerate(items)


def read_toolkit(path: str | Path) -> Toolkit:
    """The tools of a `--tools FILE`: OpenAI function schemas, a list or `{"tools": [...]}`, each
    bare or `{"type": "function", "function": {...}}`. Bad input is a JudgeInputError naming the
    file and the item's field; a name listed twice too."""
    file = str(path)
    data = read_json_file(path, "a JSON list of function schemas")
    schemas: dict[str, ToolSchema] = {}
    for i, item in _items(data, file):
        schema = _entry(item, i, file)
        if schema.name in schemas:
            raise JudgeInputError(f"tool {schema.name!r} is listed twice", file=file, field=f"tools.{i}.name")
        schemas[schema.name] = schema
    return Toolkit(schemas, f"--tools {file}")
