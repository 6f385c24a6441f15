"""Cosine similarities of texts with the local text model (`authorised` with `plan: true`, judge.text.serves),
each text embedded once per process and, with a store, once per cache.

**Kept with the run's cache.** While a store is in use (`using_store`: judge.grade.GradeSession opens
the `similarity` namespace of the run's verdict cache, judge.judges.similarity_cache), the embedding
of every text is written there, keyed on the sha256 of the model's identity (name, package, weights'
and graph's sha256, runtime) and the text, so a rerun over the same traces reads the vectors back and
never loads the model. A text is looked up in this process's table first, then in the store; only the
texts neither holds are embedded. What is stored is the vector (384 float32, base64) of an already
redacted text, never the text; a store that cannot be read or written is a miss, never an error.

**Batched.** The texts a call needs that are not held are embedded in one batch (its requests and its
act), and the model is loaded only when one is missing: a rerun from the cache, or a trace whose
calls are all steps, never loads it.

**The same floats, batched or not.** The bundled model on ONNX Runtime gives every text the same
vector whether it is embedded alone or in a batch of any size (padding is masked; measured bit for bit
on R-Judge's texts, tests/test_similarity.py), so a score, and so a decision or a message's rounded
score, never depends on which texts happened to share a batch, nor on whether the vector came from
the store. Embeddings do not tell a request from its negation (NOTES.md): the decision is the rule's.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

MAX_VECTORS = 20_000
"""The in-process table is cleared past this many texts (a corpus of long runs stays bounded)."""


class VectorStore(Protocol):
    """Where embeddings are kept between runs: judge.judges.cache.VerdictCache's get/put (or Redis's)."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, entry: dict[str, Any]) -> bool: ...


_STORE: ContextVar[Callable[[], VectorStore | None] | None] = ContextVar("judge_similarity_store", default=None)


@contextmanager
def using_store(opener: Callable[[], VectorStore | None] | None) -> Iterator[None]:
    """Keep and look up embeddings in the store `opener()` returns for the duration (None: this process's
    table only). It is called only when a text is missing from the table: a grade that compares no text
    opens no cache."""
    token = _STORE.set(opener)
    try:
        yield
    finally:
        _STORE.reset(token)


def model_identity(model: str) -> str:
    """What decides a text's vector: the model's fingerprint and the runtime that runs it."""
    from judge.text.minilm import is_bundled, model_fingerprint

    identity: dict[str, Any] = dict(model_fingerprint(model))
    if is_bundled(model):
        from judge.text.onnx_encoder import GRAPH_SHA256

        identity.update(runtime="onnx", graph_sha256=GRAPH_SHA256)
    else:
        identity.update(runtime="sentence-transformers")
    return json.dumps(identity, sort_keys=True, separators=(",", ":"))


def pack(vector: Any) -> dict[str, Any]:
    """A vector as a cache entry: its float32 bytes (little-endian), base64."""
    import numpy as np

    return {"f32": base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")}


def unpack(entry: dict[str, Any] | None) -> Any:
    """The vector of a cache entry, or None when it is not one (a miss)."""
    import numpy as np

    data = entry.get("f32") if isinstance(entry, dict) else None
    if not isinstance(data, str):
        return None
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        return None
    if not raw or len(raw) % 4:
        return None
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


class Similarity:
    """Cosine similarities of texts with the local text model `model` (module docs)."""

    def __init__(self, model: str) -> None:
        self.model_name = model
        self._model: Any = None
        self._identity: str | None = None
        self._vectors: dict[str, Any] = {}
        self.embedded = 0  # texts embedded by the model in this process
        self.read = 0  # texts read back from a store

    def key(self, text: str) -> str:
        """The store's key of `text`'s vector."""
        if self._identity is None:
            self._identity = model_identity(self.model_name)
        return hashlib.sha256(f"{self._identity}\x00{text}".encode()).hexdigest()

    def encode(self, texts: Iterable[str]) -> None:
        """Hold a vector for each of `texts`: from this process's table, the store, or the model (one batch)."""
        wanted = list(dict.fromkeys(texts))
        if len(self._vectors) + len(wanted) > MAX_VECTORS:
            self._vectors.clear()  # (before looking: every text asked for is held afterwards)
        todo = [t for t in wanted if t not in self._vectors]
        if not todo:
            return
        opener = _STORE.get()
        store = opener() if opener is not None else None
        if store is not None:
            missing = []
            for text in todo:
                vector = unpack(store.get(self.key(text)))
                if vector is None:
                    missing.append(text)
                else:
                    self._vectors[text] = vector
                    self.read += 1
            todo = missing
            if not todo:
                return
        if self._model is None:
            from judge.text.minilm import load_embedding_model

            self._model = load_embedding_model(self.model_name)
        vectors = self._model.encode(todo, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        self.embedded += len(todo)
        for text, vector in zip(todo, vectors, strict=True):
            self._vectors[text] = vector
            if store is not None:
                store.put(self.key(text), pack(vector))

    def scores(self, requests: Sequence[str], phrase: str) -> list[float]:
        """The similarity of each request with the phrase."""
        self.encode([*requests, phrase])
        target = self._vectors[phrase]
        return [float(self._vectors[r] @ target) for r in requests]


_SHARED: dict[str, Similarity] = {}


def shared_similarity(model: str) -> Similarity:
    """One Similarity per model and process (a grade of many runs embeds each text once)."""
    if model not in _SHARED:
        _SHARED[model] = Similarity(model)
    return _SHARED[model]
