"""Fact consistency: is a reference statement kept, distorted or missing in a candidate text?

Method: FactCC-style weak supervision (Kryscinski et al. 2020, "Evaluating the Factual Consistency
of Abstractive Text Summarization"). Real sentences are transformed into distorted variants (entity,
number, time, name swaps; negation added or removed; antonyms; clauses the source lacks; spans
dropped) and meaning-preserving ones (synonyms, filler, contractions, reordering); unrelated sentences
stand for a missing fact (judge.text.perturb, scripts/train_consistency.py). A classifier learns from
*alignment features* of each (reference, candidate) pair, not from raw text:

- MiniLM (all-MiniLM-L6-v2, judge.text.minilm) cosine of the whole pair, and of each replaced span
  pair (min, mean); the embeddings say what the pair is about, not its polarity (NOTES.md: "Do not
  modify production data" and "Modify production data" are at 0.91), so polarity and values come from
- lexical cues of the aligned spans (judge.text.align): numbers, names, time words and quantifiers
  lost or added, negation parity, antonyms, category swaps, unsupported words, inserted and deleted
  runs.

The classifier is a multinomial logistic regression on standardised features, calibrated by
temperature scaling (Guo et al. 2017) on held-out synthetic pairs, both from scikit-learn; the
shipped weights (`consistency.json`, a few KB) hold the scaler, coefficients, temperature, the
decision threshold chosen on the SummEdits evaluation split, the training seed, data hashes and
metrics. Inference here is their plain arithmetic (no sklearn import): scale, dot, softmax.

Aligning a summary with ledger facts (`audit_many`): every summary sentence is given to the fact it
is closest to (mean of MiniLM cosine and content-word overlap); a fact's candidate is its sentences,
or its single best sentence when it got none. Content found in another fact of the ledger is not
counted as unsupported.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from judge.text.align import Alignment, align, is_content, tokens

WEIGHTS_FILE = Path(__file__).with_name("consistency.json")
FORMAT: Literal["judge-consistency/1"] = "judge-consistency/1"
CLASSES = ("kept", "distorted", "missing")
EMBEDDING_FEATURES = ("cos", "span_cos_min", "span_cos_mean")
CUE_FEATURES = ("ref_lost_frac", "cand_new_frac", "n_lost", "n_new", "num_lost", "num_new",
                "name_lost", "name_new", "time_changed", "quant_changed", "neg_diff", "neg_parity",
                "antonym", "category_swap", "n_replace", "insert_run", "delete_run", "len_ratio",
                "changed_frac", "name_order", "any_hard")
FEATURES = EMBEDDING_FEATURES + CUE_FEATURES
BATCH_SIZE = 64
Status = Literal["kept", "distorted", "missing"]
Embedder = Callable[[list[str]], Any]  # texts -> (n, d) array of unit vectors


class Weights(BaseModel):
    """The shipped model: what `scripts/train_consistency.py` writes and `ConsistencyModel` reads."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["judge-consistency/1"] = FORMAT
    seed: int
    features: list[str]
    classes: list[str]
    mean: list[float] = Field(description="StandardScaler mean_, one per feature")
    scale: list[float] = Field(description="StandardScaler scale_, one per feature")
    coef: list[list[float]] = Field(description="LogisticRegression coef_, one row per class")
    intercept: list[float]
    temperature_beta: float = Field(description="inverse temperature of CalibratedClassifierCV")
    threshold: float = Field(description="a pair is kept when P(kept) is at least this")
    embedding: dict[str, Any]
    training: dict[str, Any]
    metrics: dict[str, Any]


class PairVerdict(BaseModel):
    status: Status
    p_kept: float
    p_distorted: float
    p_missing: float
    reasons: list[str] = Field(default_factory=list, description="cue words that changed")
    candidate: str | None = Field(default=None, description="the summary text aligned to the fact")


def split_sentences(text: str) -> list[str]:
    """Sentences of a summary; "Mr. Johnson" and "e.g. this" do not end one."""
    parts = re.split(r"(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\be\.g\.)"
                     r"(?<!\bi\.e\.)(?<!\bvs\.)(?<=[.!?])\s+|\n+", text or "")
    return [p.strip() for p in parts if p and re.search(r"\w", p)]


def minilm_embedder(model_name: str = "all-MiniLM-L6-v2") -> Embedder:
    """The offline MiniLM of the local judge (loaded once per process), as an Embedder."""
    from judge.text.minilm import load_embedding_model

    model = load_embedding_model(model_name)

    def embed(texts: list[str]) -> Any:
        return model.encode(texts, batch_size=BATCH_SIZE, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)
    return embed


class VectorCache:
    """Embeds each distinct text once, in sorted batches (sorted: the same batches, so the same
    floats, whatever order the callers ask in)."""

    def __init__(self, embed: Embedder) -> None:
        self.embed = embed
        self.vectors: dict[str, Any] = {}

    def add(self, texts: Sequence[str]) -> None:
        todo = sorted({t for t in texts if t not in self.vectors})
        for start in range(0, len(todo), 4096):
            chunk = todo[start:start + 4096]
            self.vectors.update(zip(chunk, self.embed(chunk), strict=False))

    def cos(self, a: str, b: str) -> float:
        return float(self.vectors[a] @ self.vectors[b])


def featurize(refs: Sequence[str], cands: Sequence[str], contexts: Sequence[str] | None,
              cache: VectorCache) -> tuple[list[list[float]], list[Alignment]]:
    """Feature rows (FEATURES order) and alignments of (reference, candidate) pairs."""
    contexts = contexts if contexts is not None else [""] * len(refs)
    alignments = [align(r, c, x) for r, c, x in zip(refs, cands, contexts, strict=False)]
    cache.add(list(refs) + list(cands) + [s for al in alignments for pair in al.replaced for s in pair])
    rows = []
    for ref, cand, al in zip(refs, cands, alignments, strict=False):
        spans = [cache.cos(a, b) if a and b else 0.0 for a, b in al.replaced] or [1.0]
        row = [cache.cos(ref, cand), min(spans), sum(spans) / len(spans)]
        rows.append([round(v, 4) for v in row + [al.cues[name] for name in CUE_FEATURES]])
    return rows, alignments


def overlap(fact: str, sentence: str) -> float:
    """Share of the fact's content words (stems) found in the sentence."""
    f = {t.stem for t in tokens(fact) if is_content(t)}
    return len(f & {t.stem for t in tokens(sentence)}) / max(1, len(f))


def assign(facts: Sequence[str], sentences: Sequence[str], cache: VectorCache) -> list[str]:
    """Each fact's candidate text: the summary sentences closest to it (see the module doc)."""
    if not sentences:
        return [""] * len(facts)
    score = [[(cache.cos(f, s) + overlap(f, s)) / 2 for s in sentences] for f in facts]
    owner = [max(range(len(facts)), key=lambda i: score[i][j]) for j in range(len(sentences))]
    out = []
    for i in range(len(facts)):
        mine = [s for j, s in enumerate(sentences) if owner[j] == i]
        out.append(" ".join(mine) if mine else sentences[max(range(len(sentences)), key=lambda j: score[i][j])])
    return out


class ConsistencyModel:
    """The shipped classifier (see the module doc); `embed` defaults to the offline MiniLM."""

    def __init__(self, weights: Weights, embed: Embedder | None = None) -> None:
        if tuple(weights.features) != FEATURES or tuple(weights.classes) != CLASSES:
            raise ValueError("consistency weights were trained on other features or classes; "
                             "rebuild them with scripts/train_consistency.py")
        self.weights, self._embed = weights, embed

    @classmethod
    def load(cls, path: str | Path = WEIGHTS_FILE, embed: Embedder | None = None) -> ConsistencyModel:
        return cls(Weights.model_validate_json(Path(path).read_text(encoding="utf-8")), embed)

    def cache(self) -> VectorCache:
        if self._embed is None:
            self._embed = minilm_embedder()
        return VectorCache(self._embed)

    def proba(self, rows: Sequence[Sequence[float]]) -> list[list[float]]:
        """Calibrated (kept, distorted, missing) probabilities of feature rows."""
        w = self.weights
        out = []
        for row in rows:
            x = [(v - m) / s for v, m, s in zip(row, w.mean, w.scale, strict=False)]
            z = [w.temperature_beta * (sum(c * v for c, v in zip(coef, x, strict=False)) + b)
                 for coef, b in zip(w.coef, w.intercept, strict=False)]
            top = max(z)
            e = [math.exp(v - top) for v in z]
            out.append([v / sum(e) for v in e])
        return out

    def verdict(self, p: Sequence[float], al: Alignment | None = None, cand: str | None = None) -> PairVerdict:
        kept, distorted, missing = p
        status: Status = "kept" if kept >= self.weights.threshold else (
            "missing" if missing > distorted else "distorted")
        return PairVerdict(status=status, p_kept=round(kept, 4), p_distorted=round(distorted, 4),
                           p_missing=round(missing, 4), reasons=al.reasons if al else [], candidate=cand)

    def judge_pairs(self, refs: Sequence[str], cands: Sequence[str], contexts: Sequence[str] | None = None,
                    cache: VectorCache | None = None) -> list[PairVerdict]:
        """Verdicts of (reference, candidate) pairs, embedded in one batch (`cache`: shared)."""
        rows, alignments = featurize(refs, cands, contexts, cache if cache is not None else self.cache())
        return [self.verdict(p, al, c) for p, al, c in zip(self.proba(rows), alignments, cands, strict=False)]

    def audit_many(self, items: Sequence[tuple[Sequence[str], str]],
                   cache: VectorCache | None = None) -> list[list[PairVerdict]]:
        """For each (facts, summary): one verdict per fact. All texts are embedded in one batch
        (`cache`: one shared with other callers, so a text is embedded once)."""
        cache = cache if cache is not None else self.cache()
        split = [split_sentences(text) for _, text in items]
        cache.add([f for facts, _ in items for f in facts] + [s for ss in split for s in ss])
        refs, cands, contexts, sizes = [], [], [], []
        for (facts, _), sentences in zip(items, split, strict=False):
            refs += list(facts)
            cands += assign(facts, sentences, cache)
            contexts += [" ".join(f for k, f in enumerate(facts) if k != i) for i in range(len(facts))]
            sizes.append(len(facts))
        rows, alignments = featurize(refs, cands, contexts, cache)
        verdicts = [self.verdict(p, al, c) for p, al, c in zip(self.proba(rows), alignments, cands, strict=False)]
        for i, cand in enumerate(cands):
            if not cand:
                verdicts[i] = PairVerdict(status="missing", p_kept=0.0, p_distorted=0.0, p_missing=1.0,
                                          reasons=["the summary is empty"])
        out, start = [], 0
        for size in sizes:
            out.append(verdicts[start:start + size])
            start += size
        return out

    def audit(self, facts: Sequence[str], summary: str) -> list[PairVerdict]:
        return self.audit_many([(facts, summary)])[0]
