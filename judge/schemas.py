"""JSON Schemas of the file formats, generated from the pydantic models (judge/model.py)."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from judge.errors import UsageError
from judge.model import SCHEMAS


def schema_names() -> list[str]:
    return list(SCHEMAS)


def json_schema(name: str) -> dict[str, Any]:
    if name not in SCHEMAS:
        raise UsageError(f"unknown schema {name!r}; known: {', '.join(SCHEMAS)}", field="NAME")
    schema = TypeAdapter(SCHEMAS[name]).json_schema(by_alias=True)
    schema.setdefault("title", name)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
