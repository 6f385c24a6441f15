"""litellm and instructor, imported on first use and configured to stay offline and quiet.

`litellm_lib()` imports litellm alone (about 3 s: the litellm transport, and prices or token counts
judge's own table and counter do not cover, judge.judges.prices and judge.judges.tokens); `libs()`
both, for the instructor path (judge.judges.instructed). The direct client (judge.judges.http)
needs neither.
"""

from __future__ import annotations

import logging
import os
from typing import Any

_OFFLINE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MODE": "PRODUCTION"}
_LITELLM: Any = None
_LIBS: tuple[Any, Any] | None = None


def litellm_lib() -> Any:
    """litellm, imported on first use and kept quiet: no cost-map fetch, no .env loading, no debug
    prints, no log lines unless the application configures logging."""
    global _LITELLM
    if _LITELLM is None:
        for key, value in _OFFLINE_ENV.items():
            os.environ.setdefault(key, value)
        import litellm

        litellm.suppress_debug_info = True
        if not os.environ.get("LITELLM_LOG"):
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
                logging.getLogger(name).setLevel(logging.ERROR)
        _LITELLM = litellm
    return _LITELLM


def libs() -> tuple[Any, Any]:
    """litellm and instructor, imported on first use (see `litellm_lib`)."""
    global _LIBS
    if _LIBS is None:
        litellm = litellm_lib()
        import instructor

        logging.getLogger("instructor").addHandler(logging.NullHandler())
        _LIBS = (litellm, instructor)
    return _LIBS
