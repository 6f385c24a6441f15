"""A griffe extension for the API reference (mkdocs.yml loads it): a pydantic model's field is
documented by what the model says of it, so that the JSON Schema and the reference read the same.

- A field declared `name: T = Field(..., description="...")` gets that description as its docstring
  (pydantic puts the same text into the JSON Schema); a field with a docstring of its own keeps it.
- Any other field of a pydantic model gets "Required." or "Optional; default: `VALUE`." (its type is
  in its signature), so that every field of every format is listed, with or without words.

griffe-pydantic does the first half, but stops the whole build with a KeyError on a validator that
names a field of its subclasses (`field_validator(..., check_fields=False)` in judge/draft/answer.py),
and mkdocstrings lists an undocumented attribute only with `show_if_no_docstring`, which would also
list every dataclass field a second time below its docstring's `Attributes:` table.
"""

from __future__ import annotations

import ast
from typing import Any

import griffe

MODEL_BASES = ("BaseModel", "Strict")


def _is_model(cls: griffe.Class, models: set[str], depth: int = 0) -> bool:
    """Whether `cls` derives from pydantic's BaseModel: a base named so (or `Strict`), or a base
    already seen to be a model, or one that resolves to a model class."""
    for base in cls.bases:
        name = str(base).rsplit(".", 1)[-1]
        path = getattr(base, "canonical_path", str(base))
        if name in MODEL_BASES or path in models:
            return True
        try:
            resolved = getattr(base, "resolved", None)
        except (KeyError, AttributeError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            resolved = None
        if isinstance(resolved, griffe.Alias):
            try:
                resolved = resolved.final_target
            except (griffe.AliasResolutionError, griffe.CyclicAliasError):
                resolved = None
        if isinstance(resolved, griffe.Class) and depth < 20 and _is_model(resolved, models, depth + 1):
            return True
    return False


def _description(node: Any) -> str | None:
    """The `description=` of a `Field(...)` call, when it is a plain string (or strings joined)."""
    value = getattr(node, "value", None)
    if not isinstance(value, ast.Call) or getattr(value.func, "id", getattr(value.func, "attr", None)) != "Field":
        return None
    for keyword in value.keywords:
        if keyword.arg == "description":
            try:
                text = ast.literal_eval(keyword.value)
            except ValueError:
                return None
            return text if isinstance(text, str) else None
    return None


class PydanticFields(griffe.Extension):
    """Docstrings for pydantic fields: their `Field(description=...)`, else required or default."""

    def __init__(self) -> None:
        super().__init__()
        self.models: set[str] = set()  # canonical paths of the model classes seen so far

    def on_class_members(self, *, node: ast.AST | griffe.ObjectNode, cls: griffe.Class, agent: Any,
                         **kwargs: Any) -> None:
        if not isinstance(node, ast.ClassDef) or not _is_model(cls, self.models):
            return
        self.models.add(cls.canonical_path)
        for statement in node.body:
            if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
                continue
            attr = cls.members.get(statement.target.id)
            if not isinstance(attr, griffe.Attribute) or attr.docstring is not None:
                continue
            name = statement.target.id
            if name == "model_config":
                continue
            text = _description(statement)
            if text is None:
                text = "Required." if statement.value is None else _default(statement.value)
            else:
                text = text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
            alias = _keyword(statement.value, "alias")
            if alias is not None:
                text += f" Written `{ast.literal_eval(alias)}` in files and reports."
            attr.docstring = griffe.Docstring(text, parent=attr)


def _keyword(value: ast.expr | None, name: str) -> ast.expr | None:
    """The `name=` argument of a `Field(...)` call, or None."""
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "Field":
        return next((k.value for k in value.keywords if k.arg == name), None)
    return None


FACTORIES = {"list": "[]", "dict": "{}", "set": "set()", "tuple": "()"}


def _default(value: ast.expr) -> str:
    """"Required." or "Optional; default: ..." for a field's right-hand side."""
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "Field":
        default, factory = _keyword(value, "default"), _keyword(value, "default_factory")
        if default is not None:
            return f"Optional; default: `{ast.unparse(default)}`."
        if factory is not None:
            made = FACTORIES.get(ast.unparse(factory), f"{ast.unparse(factory)}()")
            return f"Optional; default: `{made}`."
        first = value.args[0] if value.args else None
        return "Required." if first is None or ast.unparse(first) == "..." else \
            f"Optional; default: `{ast.unparse(first)}`."
    return f"Optional; default: `{ast.unparse(value)}`."
