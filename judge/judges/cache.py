"""Verdict cache: one JSON file per judge call, keyed on the full request.

The key is the sha256 of the canonical JSON of everything that determines the answer: the prompt
fingerprint, the model, the sampling parameters, the rendered messages and the response schema. What is
stored is the *validated* answer (plus usage), not the raw completion, so a hit needs no re-validation
and an unchanged rerun makes no request at all. Writes go to a temporary file in the same folder and
are moved into place with `os.replace`, so concurrent writers never leave a torn file; an unreadable
entry is a miss. Requests are built from redacted, blinded events, so the cache holds nothing the
judge was not allowed to see.

Location: `$JUDGE_CACHE_DIR`, else the user cache folder (`platformdirs.user_cache_dir("judge")`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def default_cache_dir() -> Path:
    env = os.environ.get("JUDGE_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("judge"))


def canonical_json(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def request_key(payload: Any) -> str:
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class VerdictCache:
    """A folder of `<namespace>/<2 hex>/<sha256>.json` entries."""

    def __init__(self, root: str | Path | None = None, *, namespace: str = "llm") -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.namespace = namespace

    def path(self, key: str) -> Path:
        return self.root / self.namespace / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) and entry.get("key") == key else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        target = self.path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(canonical_json({**entry, "key": key}))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
