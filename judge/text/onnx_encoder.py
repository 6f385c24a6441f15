"""The bundled all-MiniLM-L6-v2 on ONNX Runtime: sentence-transformers' embeddings without its import.

sentence-transformers pulls in torch and transformers (4-6 CPU-seconds and ~450 MB before a single
sentence is embedded; benchmarks/RESULTS.md). This module computes the same embeddings with
ONNX Runtime, the `tokenizers` library and numpy:

- the graph is `minilm.graph.onnx` beside this file, exported by scripts/export_minilm_onnx.py from
  transformers' BertModel; its weights are *external data* pointing into the bundled, hash-verified
  `model.safetensors` (offset and length), so the graph holds no weights of its own. The graph's
  sha256 is pinned here and checked when it is loaded;
- tokenisation is the model's own `tokenizer.json` with sentence-transformers' settings: texts
  stripped, truncated to `max_seq_length` (256, from `sentence_bert_config.json`), padded to the
  longest text of the batch;
- pooling is sentence-transformers' `Pooling` (mean over the attention mask, the count clamped at
  1e-9) and `Normalize` (L2, the norm clamped at 1e-12).

The embeddings match sentence-transformers' to ~2e-7 (cosine 1 - 1e-7; tests/test_minilm_onnx.py
compares them when sentence-transformers is installed). Texts are embedded longest first in batches
bounded by `batch_size` texts and MAX_BATCH_TOKENS padded tokens, which bounds the activations'
memory whatever the texts are, and by PAD_LIMIT: a batch's padded tokens are at most that many
times its real ones (a 100-token text in a batch of 10-token ones made the batch cost ten times its
work). A text's embedding does not depend on the batch it ran in (padding, batch size, order and
thread count give the same floats, bit for bit: tests/test_model_loading.py), so the encoder
remembers the last MEMO_TEXTS texts it embedded and runs none twice: a grade asks for the same unit
texts in several windows, the summary audit and the fact-consistency model.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judge.errors import ConfigError

GRAPH_FILE = Path(__file__).with_name("minilm.graph.onnx")
GRAPH_SHA256 = "cef2f1551f45e0e0a745b1605882f0658b725852383017d02e1c8f73079ed1a8"
MAX_BATCH_TOKENS = 2048  # padded tokens per run: ~25 MB of attention scores at 256 tokens, 12 heads
PAD_LIMIT = 1.25  # a batch's padded tokens at most this many times its real ones
MEMO_TEXTS = 4096  # embeddings remembered per encoder (~1.5 kB each)
DIMENSIONS = 384


def graph_bytes() -> bytes:
    """The shipped graph, refused (ConfigError) when it is not the pinned one."""
    data = GRAPH_FILE.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != GRAPH_SHA256:
        raise ConfigError(f"sha256 of the embedding model's graph is {actual}, expected {GRAPH_SHA256} "
                          "(a modified file; reinstall judge or rerun scripts/export_minilm_onnx.py)",
                          file=str(GRAPH_FILE))
    return data


class OnnxSentenceEncoder:
    """`encode()` as SentenceTransformer.encode for the bundled model folder `model_dir` (already
    verified), on `threads` ONNX Runtime threads (None: the runtime's choice)."""

    def __init__(self, model_dir: str | Path, threads: int | None = None) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # errors only: the library never prints
        options.inter_op_num_threads = 1
        if threads is not None:
            options.intra_op_num_threads = threads
        # Idle pool threads spin by default: CPU burnt while the grader works, on a shared machine too.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.model_external_initializers_file_folder_path", str(model_dir))
        try:
            self.session = onnxruntime.InferenceSession(graph_bytes(), options, providers=["CPUExecutionProvider"])
        except ConfigError:
            raise
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph/... types
            raise ConfigError(f"cannot load the embedding model's graph: {exc}", file=str(model_dir)) from exc
        self.max_seq_length = int(_json(model_dir / "sentence_bert_config.json").get("max_seq_length", 256))
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_seq_length, strategy="longest_first")
        self.pad_id = self.tokenizer.token_to_id("[PAD]") or 0
        self._memo: dict[str, Any] = {}  # stripped text -> its row, oldest first
        self._memo_lock = threading.Lock()

    def encode(self, sentences: Sequence[str] | str, batch_size: int = 64, normalize_embeddings: bool = True,
               convert_to_numpy: bool = True, show_progress_bar: bool = False, **_: Any) -> Any:
        """Unit vectors (float32, one row per sentence; one row for a single string)."""
        import numpy as np

        single = isinstance(sentences, str)
        texts = [sentences.strip()] if isinstance(sentences, str) else [str(s).strip() for s in sentences]
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        with self._memo_lock:
            known = {t: self._memo[t] for t in set(texts) if t in self._memo}
        todo = [t for t in dict.fromkeys(texts) if t not in known]
        if todo:
            fresh = dict(zip(todo, self._run(todo, max(1, batch_size)), strict=True))
            known.update(fresh)
            self._remember(fresh)
        for row, text in enumerate(texts):
            out[row] = known[text]
        if normalize_embeddings:
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out[0] if single else out

    def _run(self, texts: list[str], batch_size: int) -> Any:
        """The embedding of each text (already stripped), a row each, in the order given."""
        import numpy as np

        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(texts)
        lengths = [len(e.ids) for e in encodings]
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        for batch in _batches(order, lengths, batch_size):
            out[batch] = self._embed([encodings[i].ids for i in batch], lengths[batch[0]])
        return out

    def _remember(self, rows: dict[str, Any]) -> None:
        with self._memo_lock:
            self._memo.update(rows)
            while len(self._memo) > MEMO_TEXTS:
                del self._memo[next(iter(self._memo))]

    def _embed(self, ids: list[list[int]], width: int) -> Any:
        import numpy as np

        input_ids = np.full((len(ids), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, tokens in enumerate(ids):
            input_ids[row, :len(tokens)] = tokens
            mask[row, :len(tokens)] = 1
        hidden = self.session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]
        weights = mask.astype(np.float32)
        pooled = np.einsum("bsd,bs->bd", hidden, weights) / np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)  # the Normalize module


def _batches(order: list[int], lengths: list[int], batch_size: int) -> list[list[int]]:
    """Runs of `order` (longest first) of at most `batch_size` texts and MAX_BATCH_TOKENS padded tokens,
    whose padded tokens are at most PAD_LIMIT times their real ones."""
    batches: list[list[int]] = []
    current: list[int] = []
    real = 0
    for i in order:
        width = lengths[current[0]] if current else lengths[i]
        padded = (len(current) + 1) * width
        if current and (len(current) >= batch_size or padded > MAX_BATCH_TOKENS
                        or padded > PAD_LIMIT * (real + lengths[i])):
            batches.append(current)
            current, real = [], 0
        current.append(i)
        real += lengths[i]
    if current:
        batches.append(current)
    return batches


def _json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
