"""The built-in trace importers of `judge import`: one module each, holding `SPEC`
(judge.trace.import_spec.ImporterSpec); plug-ins come from the `judge.importers` entry-point group.

`BUILT_IN` lists them explicitly: the composition root (judge/__init__.py) hands it to the importer
registry (judge.trace.import_spec.IMPORTERS) on its first use. A new importer's module is added here
(tests/test_architecture.py holds the list to the modules).
"""

from __future__ import annotations

from judge.trace.importers import openai, otel, records, who_and_when

BUILT_IN = (openai.SPEC, otel.SPEC, records.SPEC, who_and_when.SPEC)
"""The spec of every built-in trace importer."""
