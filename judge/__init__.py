"""judge: grade multi-turn agent runs for state drift against a reviewed ledger."""

__version__ = "0.1.0"
