#!/usr/bin/env python3
"""judge's public surface as Markdown tables, read from the real code: the commands and their flags
(the typer app), the HTTP endpoints (the service's OpenAPI description) and every JSON object of the
file formats with its fields (the JSON Schemas `judge schema` prints).

    .venv/bin/python scripts/surface.py cli|http|formats|objects|rules

docs/contract.md shows each table after a marker `<!-- judge-generated: NAME -->` (up to
`<!-- /judge-generated -->`); scripts/docs_outputs.py runs this script to write them (`--write`) and
fails when one no longer matches (`--check`, run by tests/test_docs.py), so the page that says what
the public contract is cannot drift from the code.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Command:
    path: str             # "judge grade", "judge prompts lock"
    summary: str          # the first sentence of its help
    arguments: list[str]  # SCENARIO, TRACE..., [DIR]
    options: list[str]    # "--judge NAME", "-q, --quiet", "--check"


def _summary(text: str | None) -> str:
    flat = " ".join((text or "").split())
    first = flat.split(". ")[0].rstrip(".")
    return first + "." if first else ""


def _option(param: Any, placeholder: Callable[[Any], str]) -> str:
    names = ", ".join(sorted(param.opts, key=lambda o: (o.startswith("--"), o)))
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    flag = getattr(param, "is_flag", False) or getattr(param, "count", False)
    return names if flag else f"{names} {placeholder(param)}"


def commands() -> list[Command]:
    """Every command of `judge`, the root and the groups included, depth first in name order, with
    the argument and option placeholders `-h` shows (judge.cli.help)."""
    import typer.main

    from judge.cli import app
    from judge.cli.help import argument_name, placeholder

    found: list[Command] = []

    def walk(command: Any, path: str) -> None:
        params = [p for p in command.params if not getattr(p, "hidden", False)]
        found.append(Command(
            path=path, summary=_summary(command.help or command.short_help),
            arguments=[argument_name(p) for p in params if p.param_type_name == "argument"],
            options=[_option(p, placeholder) for p in params if p.param_type_name == "option"] + ["-h, --help"]))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if not getattr(sub, "hidden", False):
                walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "judge")
    return found


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{_cell(text)}`"


def cli_table() -> list[str]:
    """One row per command: the command with its arguments, what it does, its options."""
    lines = ["| command | what it does | options |", "|---|---|---|"]
    for c in commands():
        options = "<br>".join(_code(o) for o in c.options)
        lines.append(f"| {_code(' '.join([c.path, *c.arguments]))} | {_cell(c.summary)} | {options} |")
    return lines


def http_table() -> list[str]:
    """One row per endpoint of the service's OpenAPI description (the docs and assets it serves for
    that description are left out: they are not part of the API)."""
    from judge.service import create_app

    spec = create_app(token="").openapi()
    lines = ["| endpoint | what it does |", "|---|---|"]
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            what = _summary(operation.get("description") or operation.get("summary"))
            lines.append(f"| {_code(f'{method.upper()} {path}')} | {_cell(what)} |")
    return lines


def _schemas() -> dict[str, dict[str, Any]]:
    from judge.api import format_schemas
    from judge.model.schemas import json_schema

    formats = format_schemas()
    return {name: json_schema(name, formats) for name in formats}


def formats_table() -> list[str]:
    """One row per format name `judge schema` knows: the object it is (or the objects of a union)."""
    lines = ["| `judge schema NAME` | the JSON object |", "|---|---|"]
    for name, schema in _schemas().items():
        if "oneOf" in schema:
            members = [ref["$ref"].rsplit("/", 1)[-1] for ref in schema["oneOf"]]
            field = schema.get("discriminator", {}).get("propertyName", "?")
            what = f"one of {', '.join(members)} (by `{field}`)"
        else:
            what = schema.get("title", name)
        lines.append(f"| `{name}` | {what} |")
    return lines


def _fields(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", ()))
    names = [name if name in required else f"{name}?" for name in schema.get("properties", {})]
    return ", ".join(f"`{n}`" for n in names) if names else "(any fields)"


def objects_table() -> list[str]:
    """Every JSON object the formats define, by name, with its fields: `field` is required,
    `field?` optional. A nested object is listed once, whichever format holds it."""
    objects: dict[str, dict[str, Any]] = {}
    for schema in _schemas().values():
        if "properties" in schema:
            objects.setdefault(schema.get("title", ""), schema)
        for name, sub in schema.get("$defs", {}).items():
            if "properties" in sub:
                objects.setdefault(name, sub)
    lines = ["| object | fields (`name?`: optional) |", "|---|---|"]
    lines += [f"| `{name}` | {_fields(objects[name])} |" for name in sorted(objects)]
    return lines


def rules_table() -> list[str]:
    """The rule kinds (docs/scenarios.md): `judge rules --markdown`, from the kinds' specs."""
    from judge.checks import registry
    from judge.render.kinds import kind_rows, markdown_table

    return markdown_table(kind_rows(registry.specs(), registry.origin))


TABLES: dict[str, Callable[[], list[str]]] = {
    "cli": cli_table, "http": http_table, "formats": formats_table, "objects": objects_table, "rules": rules_table}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in TABLES:
        print(f"usage: surface.py {'|'.join(TABLES)}", file=sys.stderr)
        return 2
    print("\n".join(TABLES[argv[0]]()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
