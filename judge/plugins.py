"""A package's lazy front door: the names its `__init__` re-exports, each imported on first use.

(The registries of rule kinds, judge backends and trace importers are judge.registry.)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, names: dict[str, str]) -> Callable[[str], Any]:
    """A package's module `__getattr__` (PEP 562): `names` maps each name it re-exports to
    `module` or `module:attribute` (when the name differs there), imported on first access only.

    A stage's `__init__` re-exports its inner modules' names this way (the front door of the CLI and
    the service) without importing them eagerly: a cold `judge grade` loads only what it uses. The
    package's `if TYPE_CHECKING:` imports give the type checker the same names. Nothing is cached
    in the package: each access reads the inner module's attribute as it is now (as `from inner
    import name` would), so patching the inner module is seen through the front door too."""

    def __getattr__(name: str) -> Any:
        target = names.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = target.partition(":")
        return getattr(importlib.import_module(module), attribute or name)

    return __getattr__
