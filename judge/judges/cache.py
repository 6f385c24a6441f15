"""Verdict cache: one JSON file per judge call, keyed on the full request.

Two levels. A *call* entry is keyed on the sha256 of the canonical JSON of everything that determines the answer: the prompt
fingerprint, the model, the sampling parameters, the rendered messages and the response schema. What is
stored is the *validated* answer (plus usage), not the raw completion, so a hit needs no re-validation
and an unchanged rerun makes no request at all. A *checkpoint* entry, keyed on the judge fingerprint
(prompt hash, model, sampling, render version) and the request's content (ledger rows, slice
events, keys, turns; not the run id), holds the merged verdict, so a rerun skips even rendering and
token counting; when it misses (say one window of a long slice changed) the call entries still
spare every unchanged call. Writes go to a temporary file in the same folder and
are moved into place with `os.replace`, so concurrent writers never leave a torn file; an unreadable
entry is a miss. Requests are built from redacted, blinded events, so the cache holds nothing the
judge was not allowed to see.

Location: `$JUDGE_CACHE_DIR`, else the user cache folder (`platformdirs.user_cache_dir("judge")`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from judge.errors import ConfigError
from judge.judges.base import JudgeRequest


def default_cache_dir() -> Path:
    """$JUDGE_CACHE_DIR, else the user cache folder; one that exists but is not a folder is a ConfigError."""
    env = os.environ.get("JUDGE_CACHE_DIR")
    if env:
        root = Path(env)
    else:
        import platformdirs

        root = Path(platformdirs.user_cache_dir("judge"))
    if root.exists() and not root.is_dir():
        raise ConfigError("the cache folder is not a folder; point JUDGE_CACHE_DIR at a folder", file=str(root))
    return root


def canonical_json(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def request_key(payload: Any) -> str:
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def _row(row: Any) -> dict[str, Any]:
    return {f.name: getattr(row, f.name) for f in dataclasses.fields(row)}  # asdict deep-copies: slow


def checkpoint_key(fingerprint: dict[str, Any], request: JudgeRequest, **extra: Any) -> str:
    """The key of a checkpoint's merged verdict: the judge's identity plus what the judge is shown."""
    return request_key({
        "level": "checkpoint", "judge": fingerprint, **extra,
        "after_turn": request.after_turn, "from_turn": request.from_turn, "keys": list(request.keys),
        "ledger": [_row(row) for row in request.ledger],
        "events": [event.model_dump(mode="json", exclude_none=True) for event in request.events],
    })


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

    def put(self, key: str, entry: dict[str, Any]) -> bool:
        """Store an entry; False when the folder is not writable (a verdict never fails for that)."""
        target = self.path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=target.parent)
        except OSError:
            return False
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(canonical_json({**entry, "key": key}))
            os.replace(tmp, target)
        except OSError:
            Path(tmp).unlink(missing_ok=True)
            return False
        return True
