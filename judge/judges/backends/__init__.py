"""The built-in judge backends: one module each, holding `SPEC` (judge.judges.spec.BackendSpec).

`BUILT_IN` lists them explicitly: the composition root (judge/__init__.py) hands it to the backend
registry (judge.config.BACKENDS) on its first use; plug-ins come from the `judge.backends` entry-point
group. A new backend's module is added here (tests/test_architecture.py holds the list to the modules).
"""

from __future__ import annotations

from judge.judges.backends import embedding, llm, replay

BUILT_IN = (embedding.SPEC, llm.SPEC, replay.SPEC)
"""The spec of every built-in judge backend."""
