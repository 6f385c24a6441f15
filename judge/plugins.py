"""Registries of specs: rule kinds, judge backends and trace importers are each one spec per module.

A registry loads its built-in specs from the modules of one package (every module not starting with
`_` holds a module-level `SPEC`) and third-party specs from one entry-point group, once, on first use.
It is the one place that loads code by name: formats (the scenario's rule union, a judge config's
backend) need the specs, which live beside the code they describe, in the layers above.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable
from importlib import metadata
from typing import Any, Generic, TypeVar

from judge.errors import ConfigError

T = TypeVar("T")

BUILT_IN = "built-in"


class Registry(Generic[T]):
    """The specs of one kind of plug-in, by name: built-in first, then the entry points.

    `check(obj, where)` turns what a module or entry point gives into a spec, or raises ConfigError;
    `name_of(spec)` is its name; `order(spec)` sorts them (built-in order first, then by name)."""

    def __init__(self, what: str, package: str, group: str, *, check: Callable[[Any, str], T],
                 name_of: Callable[[T], str], order: Callable[[T], Any] = lambda spec: 0,
                 on_change: Callable[[], None] | None = None) -> None:
        self.what, self.package, self.group = what, package, group
        self._check, self._name_of, self._order, self._on_change = check, name_of, order, on_change
        self._specs: dict[str, T] | None = None
        self._origin: dict[str, str] = {}
        self._lock = threading.RLock()

    def specs(self) -> dict[str, T]:
        """Every registered spec (loading the built-in modules and the entry points on first use)."""
        if self._specs is None:
            with self._lock:
                if self._specs is None:
                    self._specs = self._sorted(self._load())
        return self._specs

    def origin(self, name: str) -> str:
        """Where a spec comes from: `built-in`, or the entry point (or caller) that registered it."""
        self.specs()
        return self._origin.get(name, BUILT_IN)

    def register(self, spec: Any, origin: str = "registered") -> None:
        """Add one spec by hand (a plug-in loaded in code, or a test's)."""
        with self._lock:
            specs = dict(self.specs())
            self._add(specs, self._check(spec, origin), origin)
            self._specs = self._sorted(specs)
        if self._on_change is not None:
            self._on_change()

    def unregister(self, name: str) -> None:
        """Remove a spec added with `register`; built-in ones stay."""
        with self._lock:
            specs = dict(self.specs())
            if self._origin.get(name, BUILT_IN) != BUILT_IN:
                specs.pop(name, None)
                self._origin.pop(name, None)
            self._specs = specs
        if self._on_change is not None:
            self._on_change()

    def _sorted(self, specs: dict[str, T]) -> dict[str, T]:
        return dict(sorted(specs.items(), key=lambda item: (self._order(item[1]), item[0])))

    def _load(self) -> dict[str, T]:
        specs: dict[str, T] = {}
        package = importlib.import_module(self.package)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if not info.name.startswith("_"):
                module = importlib.import_module(f"{self.package}.{info.name}")
                self._add(specs, self._check(getattr(module, "SPEC", module), module.__name__), BUILT_IN)
        for entry in metadata.entry_points(group=self.group):
            where = f"entry point {entry.name!r} ({entry.value}) of group {self.group!r}"
            try:
                loaded = entry.load()
            except Exception as exc:  # a broken plug-in is a configuration error, named, not a crash
                raise ConfigError(f"cannot load the {self.what} of {where}: {type(exc).__name__}: {exc}") from exc
            self._add(specs, self._check(getattr(loaded, "SPEC", loaded), where), where)
        return specs

    def _add(self, specs: dict[str, T], spec: T, origin: str) -> None:
        name = self._name_of(spec)
        if name in specs:
            raise ConfigError(f"{self.what} {name!r} of {origin} is already registered by "
                              f"{self._origin.get(name, BUILT_IN)}")
        specs[name] = spec
        self._origin[name] = origin


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
