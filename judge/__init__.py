"""judge: grade multi-turn agent runs for state drift against a reviewed ledger."""

from collections.abc import Iterable
from typing import Any

from judge.compiled import install as _install_compiled
from judge.registry import BACKENDS as _BACKENDS
from judge.registry import IMPORTERS as _IMPORTERS
from judge.registry import RULE_KINDS as _RULE_KINDS
from judge.registry import provide_built_ins as _provide_built_ins

__version__ = "0.1.0"
# The name to `pip install` (pyproject.toml's [project] name): `judge` on the package index is an
# unrelated project. The import package and the command are `judge`.
DISTRIBUTION = "judge-drift"

# The hot modules compiled by `make install` (judge.compiled), while they match their sources.
_install_compiled()


# The composition root: each registry lives in the layer that needs its specs (the rule kinds in the
# formats, the backends in the configuration, the importers in judge.trace) and imports nothing above
# it; the layer owning the specs lists them (`BUILT_IN`), and they are handed in here, read on the
# registry's first use. These imports are plain statements, so the import contracts see them.
def _rule_kinds() -> Iterable[Any]:
    from judge.checks.kinds import BUILT_IN

    return BUILT_IN


def _backends() -> Iterable[Any]:
    from judge.judges.backends import BUILT_IN

    return BUILT_IN


def _importers() -> Iterable[Any]:
    from judge.trace.importers import BUILT_IN

    return BUILT_IN


_provide_built_ins(_RULE_KINDS, _rule_kinds)
_provide_built_ins(_BACKENDS, _backends)
_provide_built_ins(_IMPORTERS, _importers)
