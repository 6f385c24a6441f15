"""What `judge import` knows about one importer: its spec, declared once beside the importer.

An importer is one module of judge.trace.importers, listed in its `BUILT_IN` (or a third-party module registered in the
`judge.importers` entry-point group) holding `SPEC = ImporterSpec(...)`: its sub-command name, its
help, an example, its options and `run(source, out, **options) -> ImportSummary`. `judge import`'s
sub-commands and their help examples are built from the registered specs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.errors import ConfigError
from judge.registry import IMPORTERS as IMPORTER_ENTRY_POINTS
from judge.registry import Registry


@dataclass(frozen=True)
class ImportOption:
    """One option of an importer's command: its parameter name in `run`, its flags, its help, its
    type (str, int, float, bool or Path) and default."""

    param: str
    flags: tuple[str, ...]
    help: str
    type: type = str
    default: Any = None


@dataclass(frozen=True)
class ImporterSpec:
    """One importer: `judge import NAME SOURCE -o OUT [options]` calls `run(SOURCE, OUT, **options)`."""

    name: str
    short: str
    help: str
    source_help: str
    out_help: str
    run: Callable[..., Any]
    examples: tuple[str, ...] = ()
    options: tuple[ImportOption, ...] = field(default_factory=tuple)
    source_type: type = Path
    source_metavar: str = "FILE"
    position: int = 1000


def _importer_of(spec: Any, where: str) -> ImporterSpec:
    if not isinstance(spec, ImporterSpec):
        raise ConfigError(f"{where} is no trace importer: it needs `SPEC = judge.trace.import_spec.ImporterSpec(...)`")
    return spec


IMPORTERS: Registry[ImporterSpec] = Registry("trace importer", IMPORTER_ENTRY_POINTS,
                                             check=_importer_of, name_of=lambda spec: spec.name,
                                             order=lambda spec: spec.position)
"""The registered trace importers, by sub-command name."""
