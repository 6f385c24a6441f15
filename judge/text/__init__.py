"""Text tools shared by the local judge and the summary audit: lexical cues and the MiniLM loader.
No ledger and no judge here.

The MiniLM loader's names load on first use (importing it is cheap, loading a model is not)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from judge.plugins import lazy_exports

if TYPE_CHECKING:
    from judge.text.minilm import load_embedding_model, observe_loading

_EXPORTS = {"load_embedding_model": "judge.text.minilm", "observe_loading": "judge.text.minilm"}
__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["load_embedding_model", "observe_loading"]
