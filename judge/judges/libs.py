"""litellm and instructor, imported on first use and configured to stay offline and quiet."""

from __future__ import annotations

import logging
import os
from typing import Any

_OFFLINE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MODE": "PRODUCTION"}
_LIBS: tuple[Any, Any] | None = None


def libs() -> tuple[Any, Any]:
    """litellm and instructor, imported on first use (about 3 s) and kept quiet: no cost-map fetch,
    no .env loading, no debug prints, no log lines unless the application configures logging."""
    global _LIBS
    if _LIBS is None:
        for key, value in _OFFLINE_ENV.items():
            os.environ.setdefault(key, value)
        import instructor
        import litellm

        litellm.suppress_debug_info = True
        if not os.environ.get("LITELLM_LOG"):
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
                logging.getLogger(name).setLevel(logging.ERROR)
        logging.getLogger("instructor").addHandler(logging.NullHandler())
        _LIBS = (litellm, instructor)
    return _LIBS
