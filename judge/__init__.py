"""judge: grade multi-turn agent runs for state drift against a reviewed ledger."""

from judge.compiled import install as _install_compiled

__version__ = "0.1.0"
# The name to `pip install` (pyproject.toml's [project] name): `judge` on the package index is an
# unrelated project. The import package and the command are `judge`.
DISTRIBUTION = "judge-drift"

# The hot modules compiled by `make install` (judge.compiled), while they match their sources.
_install_compiled()
