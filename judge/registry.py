"""Registries of specs: rule kinds, judge backends and trace importers are each one spec per module.

A registry lives in the layer that needs its specs (the scenario format needs the rule kinds' models,
a judge config needs its backend's checks) and imports nothing above it. Its specs are handed in:
- the built-in ones by the composition root (`judge/__init__.py`), which gives each registry, by its
  entry-point group, a function returning the specs that the layer owning them lists explicitly
  (`judge.checks.kinds.BUILT_IN`, `judge.judges.backends.BUILT_IN`, `judge.trace.importers.BUILT_IN`);
  they are read on the registry's first use, so a cold start imports only what it uses;
- third-party ones from the registry's entry-point group, on first use too;
- or one by one with `register` (a plug-in loaded in code, or a test's).

Nothing here loads a module of judge by name: every import of a built-in spec is a plain `import`
statement that the import contracts of pyproject.toml see.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from judge.errors import ConfigError

T = TypeVar("T")

BUILT_IN = "built-in"

RULE_KINDS = "judge.rules"
"""The entry-point group of rule kinds (and the key of the built-in ones)."""
BACKENDS = "judge.backends"
"""The entry-point group of judge backends (and the key of the built-in ones)."""
IMPORTERS = "judge.importers"
"""The entry-point group of trace importers (and the key of the built-in ones)."""

_BUILT_INS: dict[str, Callable[[], Iterable[Any]]] = {}


def provide_built_ins(group: str, built_ins: Callable[[], Iterable[Any]]) -> None:
    """Hand the registry of entry-point group `group` its built-in specs: `built_ins()` returns them,
    called once, on that registry's first use (the composition root, judge/__init__.py, calls this)."""
    _BUILT_INS[group] = built_ins


class Registry(Generic[T]):
    """The specs of one kind of plug-in, by name: the built-in ones, then the entry points.

    `check(obj, where)` turns what is handed in (or what an entry point gives) into a spec, or raises
    ConfigError; `name_of(spec)` is its name; `order(spec)` sorts them (built-in order first, then by
    name)."""

    def __init__(self, what: str, group: str, *, check: Callable[[Any, str], T],
                 name_of: Callable[[T], str], order: Callable[[T], Any] = lambda spec: 0,
                 on_change: Callable[[], None] | None = None) -> None:
        self.what, self.group = what, group
        self._check, self._name_of, self._order, self._on_change = check, name_of, order, on_change
        self._specs: dict[str, T] | None = None
        self._origin: dict[str, str] = {}
        self._lock = threading.RLock()

    def specs(self) -> dict[str, T]:
        """Every registered spec (reading the built-in ones and the entry points on first use)."""
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
        from importlib import metadata

        specs: dict[str, T] = {}
        built_ins = _BUILT_INS.get(self.group)
        for spec in built_ins() if built_ins is not None else ():
            where = f"the built-in {self.what} of {getattr(spec, '__module__', None) or type(spec).__module__}"
            self._add(specs, self._check(spec, where), BUILT_IN)
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
