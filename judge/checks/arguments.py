"""A tool argument named by a dotted path: `amount`, `payment.amount`, `items.0.price`.

A name that is itself a key of the arguments wins ("payment.amount" as one key), then each dot
steps into an object by key or into a list by index. Nothing here knows a rule.
"""

from __future__ import annotations

from typing import Any

MISSING: Any = object()
"""What `arg_at` answers for an argument the call does not carry."""


def arg_at(args: Any, path: str) -> Any:
    """The argument at the dotted `path` of a call's `args`, or MISSING."""
    if not isinstance(args, dict):
        return MISSING
    if path in args:
        return args[path]
    node: Any = args
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return MISSING
    return node
