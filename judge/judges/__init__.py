"""Judge backends, one each: llm (direct to OpenAI-compatible endpoints, else litellm + instructor),
local (offline), replay; the verdict cache and the model-blind rendering of a request. A judge answers
one request and knows no grading.

`make_judge` (a configured judge by its config) and `backend_spec` load on first use: importing a
backend's module is the cost of the judge it builds, paid only when one is built."""

from __future__ import annotations

from typing import TYPE_CHECKING

from judge.plugins import lazy_exports

if TYPE_CHECKING:
    from judge.judges.factory import make_judge
    from judge.judges.spec import backend_spec, require_prompted

_EXPORTS = {"make_judge": "judge.judges.factory", "backend_spec": "judge.judges.spec",
            "require_prompted": "judge.judges.spec"}
__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["backend_spec", "make_judge", "require_prompted"]
