"""Traces: load the native JSONL (streaming, validated, redacted at load time).

`IMPORTERS` (the registry of `judge import`'s formats) loads on first use."""

from typing import TYPE_CHECKING

from judge.plugins import lazy_exports
from judge.trace.load import TraceReader, read_trace

if TYPE_CHECKING:
    from judge.trace.import_spec import IMPORTERS

__getattr__ = lazy_exports(__name__, {"IMPORTERS": "judge.trace.import_spec"})

__all__ = ["IMPORTERS", "TraceReader", "read_trace"]
