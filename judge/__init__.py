"""judge: grade multi-turn agent runs for state drift against a reviewed ledger."""

from judge.compiled import install as _install_compiled

__version__ = "0.1.0"

# The hot modules compiled by `make install` (judge.compiled), while they match their sources.
_install_compiled()
