"""The verdict cache in Redis: one cache shared by every machine of a cluster (`cache = "redis://HOST:PORT/DB"`).

The same entries as the SQLite cache (judge.judges.cache: the same keys, the same validated answers
as canonical JSON), stored as Redis strings under `judge:<namespace>:<key>`, so that workers on
several machines (a Ray cluster, CI shards) ask the judge once per distinct request. A worker on one
machine keeps using the SQLite file (`cache = true`): it needs no server.

As with SQLite, a verdict never fails for the cache: an unreadable entry is a miss, a write that
fails returns False, and a server that cannot be reached is a miss for the rest of the process (one
connection attempt, `CONNECT_TIMEOUT_S`, not one per call), never silently: every lookup and write
skipped is counted (`skipped_calls`), and each run graded while one was skipped carries a warning
naming the cache (`skip_warnings`, read by judge.grade.session). The Python client is the optional
`redis` extra (`pip install 'judge-drift[redis]'`); without it a Redis cache is one line naming it (exit 2). Each
process opens its own connection pool (a pool must not cross a fork).
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import urlsplit

from judge.config import check_redis_url
from judge.errors import ConfigError, require_extra
from judge.judges.cache import VerdictCache, canonical_json

CONNECT_TIMEOUT_S = 3.0
SOCKET_TIMEOUT_S = 10.0
KEY_PREFIX = "judge"

# Lookups and writes skipped in this process, by cache (its URL without credentials), and why the
# server could not be reached: a grade compares the counts before and after each run, so that every
# run that went without the cache says so, whichever judge or audit held it.
_SKIPPED: dict[str, int] = {}
_WHY: dict[str, str] = {}


def skipped_calls() -> dict[str, int]:
    """How many lookups and writes each Redis cache of this process skipped, so far (by shown URL)."""
    return dict(_SKIPPED)


def skip_warnings(before: dict[str, int]) -> list[str]:
    """A warning for each Redis cache that skipped lookups or writes since `before` (skipped_calls())."""
    return [f"the Redis verdict cache {where} could not be reached ({_WHY.get(where, 'unreachable')}): "
            f"{count - before.get(where, 0)} cache lookup(s) and write(s) skipped, so every verdict was asked "
            "of the judge and none was kept for the next grade"
            for where, count in _SKIPPED.items() if count > before.get(where, 0)]


def open_cache(setting: bool | str, namespace: str) -> VerdictCache | RedisVerdictCache | None:
    """The verdict cache a judge's `cache` setting names: None (false), the SQLite file (true) or the
    Redis server of a URL."""
    if setting is False:
        return None
    if isinstance(setting, str):
        return RedisVerdictCache(setting, namespace=namespace)
    return VerdictCache(namespace=namespace)


class RedisVerdictCache:
    """The `namespace` part of the verdict cache on the Redis server at `url` (see module docs)."""

    def __init__(self, url: str, *, namespace: str = "llm") -> None:
        problem = check_redis_url(url)
        if problem:
            raise ConfigError(problem, field="cache")
        require_extra("redis", "a Redis cache")
        self.url = url
        self.namespace = namespace
        self._client: Any = None
        self._pid: int | None = None
        self._broken = False  # the server could not be reached: every lookup is a miss

    def __repr__(self) -> str:  # the URL may carry a password: never shown
        return f"RedisVerdictCache({self.shown}, {self.namespace!r})"

    @property
    def shown(self) -> str:
        """The URL without its credentials (`redis://HOST:PORT/DB`)."""
        parts = urlsplit(self.url)
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{parts.hostname or ''}{port}{parts.path}"

    def redis_key(self, key: str) -> str:
        """Where the entry `key` of this namespace lives on the server."""
        return f"{KEY_PREFIX}:{self.namespace}:{key}"

    def get(self, key: str) -> dict[str, Any] | None:
        """The entry stored under `key`, or None (absent, unreadable, or the server unreachable)."""
        raw = self._call("get", self.redis_key(key))
        if raw is None:
            return None
        try:
            entry = json.loads(raw)
        except ValueError:
            return None
        return entry if isinstance(entry, dict) else None

    def put(self, key: str, entry: dict[str, Any]) -> bool:
        """Store an entry; False when the server cannot be written (a verdict never fails for that)."""
        return bool(self._call("set", self.redis_key(key), canonical_json(entry)))

    def close(self) -> None:
        """Close this process's connection pool."""
        if self._client is not None and self._pid == os.getpid():
            self._client.close()
        self._client = None

    def _call(self, method: str, *args: Any) -> Any:
        import redis

        client = self._connection()
        if client is None:
            return self._skipped()
        try:
            return getattr(client, method)(*args)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            self._broken = True
            _WHY[self.shown] = (str(exc).strip() or type(exc).__name__)[:160]
            return self._skipped()
        except redis.RedisError:
            return None

    def _skipped(self) -> None:
        _SKIPPED[self.shown] = _SKIPPED.get(self.shown, 0) + 1

    def _connection(self) -> Any:
        if self._broken:
            return None
        if self._client is None or self._pid != os.getpid():
            import redis

            self._client = redis.Redis.from_url(self.url, socket_connect_timeout=CONNECT_TIMEOUT_S,
                                                socket_timeout=SOCKET_TIMEOUT_S)
            self._pid = os.getpid()
        return self._client
