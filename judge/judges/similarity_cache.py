"""The `similarity` namespace of the run's verdict cache: where `authorised` with `plan: true` keeps the
embeddings of the texts it compares (judge.text.similarity), beside the judge's verdicts.

A grade session opens it from its judge's `cache` setting (true: the SQLite file of the cache folder;
a Redis URL: the cluster's shared server; false: none), and from the cache folder's SQLite file when it
grades with no judge (`--judge none`), so that a rerun over the same traces reads the vectors back
instead of loading and running the text model. Entries are keyed on the model's identity and the
text's sha256 and hold only a vector (never the text), as judge.judges.cache keeps verdicts."""

from __future__ import annotations

from judge.judges.cache import VerdictCache
from judge.judges.redis_cache import RedisVerdictCache, open_cache

NAMESPACE = "similarity"


def similarity_store(setting: bool | str = True) -> VerdictCache | RedisVerdictCache | None:
    """The `similarity` part of the cache a judge's `cache` setting names (None: false)."""
    return open_cache(setting, NAMESPACE)
