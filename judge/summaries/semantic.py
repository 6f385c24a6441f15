"""The semantic layer of the summary audit: sentence retrieval by embeddings, verdicts by values and cues.

For one summary: cut it into units (sentences and `;` clauses) and pieces (each unit and its comma,
colon, dash and `and` clauses), embed the pieces, and score every ledger entry against every unit
(the best of its pieces; cosine of normalised MiniLM vectors). Short values of facts and of
superseded entries ("firefox", "web-07", "team-annual") are replaced by their key's words before
embedding, in pieces and entries alike, so retrieval finds what a unit is *about* and is not pulled
towards a unit by a shared value; values are then judged lexically. A piece closer to another entry
counts less for this one (`competition`, learnt). Entry vectors (key words + value + description;
a completion also by its name alone) are computed once per (model, scenario, turn, entry texts).

Embeddings only rank units; the verdicts come from judge.summaries.rules (`decide`), in this order:
- **Short values** (a fact's `web-07`, a path list): an affirmed superseded value ->
  `obsolete-as-current`; a superseded value with a cue that leaves it behind ("no longer Chromium",
  "web-03 is out") is fine; the current value present -> `preserved`.
- **Addressed or not**: the best unit's score against the entry's class threshold, learnt from the
  labelled summaries (`thresholds.json`; see judge.summaries.evaluation). Below it -> `missing`.
- **Uncertainties**: attributed to the user or settled without a hedge ("Root cause: ...") ->
  `assumption-promoted`; a resolved one shown as still open -> `obsolete-as-current`.
- **Completions**: a completed entry shown as pending, or a pending one shown as done -> `distorted`
  (a done word in an aim, "Task: get the fix deployed", states no status: judge.summaries.mood).
- **Polarity** of prohibitions and limited permissions: the closest unit keeps no restriction word
  and lifts it ("is fine", "may", "as well", the prohibited verb itself) -> `distorted`, or
  `assumption-promoted` when it attributes the change to the user ("the user wants ...").
- **Force** of a restriction: spoken of, but no sentence keeps a restriction word for it or
  restates it ("the crash is in src/app.py" for "edit only src/app.py") -> `missing`
  (judge.summaries.restrictions).
- **Revoked entries** are not required; shown as in force (a restriction word, no revocation word)
  -> `obsolete-as-current`.

What it cannot see: paraphrased values ("the annual team plan" for team-annual), a wrong value it
has no name for, synonyms the model does not link, and anything decided by meaning rather than
words; the judge layer is for those.
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.summaries import cues as sc
from judge.summaries.rules import AuditEntry, ModelVerdict, Verdict, decide, entry_scores, unique_tokens
from judge.text import cues

THRESHOLDS_FILE = Path(__file__).with_name("thresholds.json")
BATCH_SIZE = 64


@dataclass(frozen=True)
class Thresholds:
    """Learnt from labelled summaries (judge.summaries.evaluation): per class, the score from which a unit
    is taken to carry an entry, and `competition`, how much a unit's score for an entry is lowered
    when the unit is closer to another entry (score - competition * max(0, other - score))."""

    by_class: dict[str, float]
    default: float
    competition: float = 0.0
    labels_sha256: str | None = None
    model: str | None = None

    def of(self, class_: str) -> float:
        return self.by_class.get(class_, self.default)

    @classmethod
    def load(cls, path: str | Path = THRESHOLDS_FILE) -> Thresholds:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        fitted = data["thresholds"]
        return cls(by_class={k: float(v) for k, v in fitted["by_class"].items()},
                   default=float(fitted["default"]), competition=float(fitted.get("competition", 0.0)),
                   labels_sha256=data.get("labels_sha256"), model=data.get("model"))

    def as_dict(self) -> dict[str, Any]:
        return {"by_class": dict(self.by_class), "default": self.default, "competition": self.competition}


def spaced(key: str) -> str:
    return key.replace("_", " ").replace("-", " ")


def entry_text(entry: AuditEntry) -> str:
    text = f"{spaced(entry.key)}: {cues.render(entry.value)}"
    return f"{text}. {entry.description}" if entry.description else text


def value_masks(entries: Sequence[AuditEntry]) -> list[tuple[str, str]]:
    """(value, key words) for each short, distinctive value of a fact or a superseded entry."""
    masks = []
    for e in entries:
        if e.class_ != "fact" and not e.superseded:
            continue
        values = sc.short_values(e.value) + [v for old, _ in e.superseded for v in sc.short_values(old)]
        masks += [(v, spaced(e.key)) for v in values]
    return masks


# ---------------------------------------------------------------- embeddings, cached per scenario


class EntryVectors:
    """Entry vectors per (model, scenario, turn, entry texts): computed once, kept (bounded)."""

    def __init__(self, limit: int = 256) -> None:
        self._by_model: weakref.WeakKeyDictionary[Any, dict[tuple, Any]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self.limit = limit
        self.computed = 0  # how many times entries were embedded (tests and the benchmark read it)

    def get(self, model: Any, scenario_id: str, turn: int, texts: list[str], embed: Any = None) -> Any:
        """The vectors of `texts`, computed by `embed` (default: `model` itself) on a miss."""
        digest = hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()
        key = (scenario_id, turn, digest)
        with self._lock:
            table = self._by_model.setdefault(model, {})
            if key in table:
                return table[key]
        vectors = embed(texts) if embed is not None else encode(model, texts)
        with self._lock:
            if len(table) >= self.limit:
                table.clear()
            table[key] = vectors
            self.computed += 1
        return vectors


ENTRY_VECTORS = EntryVectors()
_ENCODE_LOCK = threading.Lock()  # torch already uses every core: one encode at a time


def encode(model: Any, texts: list[str]) -> Any:
    import numpy as np

    if not texts:
        return np.zeros((0, 384), dtype="float32")
    with _ENCODE_LOCK:
        return model.encode(texts, batch_size=BATCH_SIZE, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)


def masked_pieces(entries: Sequence[AuditEntry], summary_units: list[str]) -> tuple[list[str], list[int]]:
    """The pieces to embed (each unit and its clauses, values masked) and the unit of each."""
    masks = value_masks(entries)
    pieces, owner = [], []
    for i, unit in enumerate(summary_units):
        for piece in sc.pieces(unit):
            pieces.append(cues.mask(piece, masks))
            owner.append(i)
    return pieces, owner


def entry_views(entries: Sequence[AuditEntry]) -> list[str]:
    """What is embedded for the entries: each entry's text (values masked), then each completion's
    name alone."""
    masks = value_masks(entries)
    views = [cues.mask(entry_text(e), masks) for e in entries]
    return views + [spaced(e.key) for e in entries if e.class_ == "completion"]


def piece_similarities(model: Any, scenario_id: str, turn: int, entries: Sequence[AuditEntry],
                       summary_units: list[str], piece_vectors: Any = None,
                       embed: Any = None) -> tuple[Any, list[int]]:
    """Cosine of every entry against every piece (each unit and its clauses), values masked, and the
    unit each piece belongs to. A completion is scored by the better of its full text and its name
    alone ("repair" finds "Repair not done yet"). `piece_vectors`: already embedded pieces (a batch
    of several summaries embedded at once); `embed`: where the entries' vectors come from on a miss
    of ENTRY_VECTORS (a filled cache; default: the model)."""
    import numpy as np

    second = [i for i, e in enumerate(entries) if e.class_ == "completion"]
    vectors = ENTRY_VECTORS.get(model, scenario_id, turn, entry_views(entries), embed)
    pieces, owner = masked_pieces(entries, summary_units)
    view_sims = vectors @ (encode(model, pieces) if piece_vectors is None else piece_vectors).T
    sims = view_sims[:len(entries)].copy()
    for row, i in enumerate(second):
        np.maximum(sims[i], view_sims[len(entries) + row], out=sims[i])
    return sims, owner


def unit_scores(sims: Any, owner: list[int], n_units: int, competition: float) -> Any:
    """Per (entry, unit): the best of its pieces' scores after `compete`."""
    import numpy as np

    sims = compete(sims, competition)
    out = np.full((sims.shape[0], n_units), -1.0, dtype="float32")
    for column, i in enumerate(owner):
        np.maximum(out[:, i], sims[:, column], out=out[:, i])
    return out


def similarities(model: Any, scenario_id: str, turn: int, entries: Sequence[AuditEntry],
                 summary_units: list[str], competition: float = 0.0, piece_vectors: Any = None,
                 embed: Any = None) -> Any:
    """Score of every (entry, unit) pair, shape (entries, units): the best over the unit and its
    clauses of the cosine (values masked), each lowered by `competition` times how much closer
    that piece is to another entry (see `compete`)."""
    sims, owner = piece_similarities(model, scenario_id, turn, entries, summary_units, piece_vectors, embed)
    return unit_scores(sims, owner, len(summary_units), competition)


def summary_pieces(entries: Sequence[AuditEntry], text: str) -> list[str]:
    """The pieces `audit` embeds for one summary (to fill a shared cache in one batch)."""
    return masked_pieces(entries, sc.units(text))[0]


def stacked(cache: Any, texts: list[str]) -> Any:
    """The vectors of `texts` from a filled judge.text.consistency.VectorCache, one row each."""
    import numpy as np

    if not texts:
        return np.zeros((0, 384), dtype="float32")
    return np.stack([cache.vectors[t] for t in texts])


def encoder(model: Any):
    """`model` as a judge.text.consistency embedder (texts -> unit vectors), one encode at a time."""
    return lambda texts: encode(model, list(texts))


def audit(model: Any, thresholds: Thresholds, scenario_id: str, turn: int,
          entries: Sequence[AuditEntry], text: str, piece_vectors: Any = None,
          checked: dict[str, ModelVerdict] | None = None, embed: Any = None) -> dict[str, Verdict]:
    """One verdict per entry. `piece_vectors`: the summary's pieces already embedded (a batch);
    `checked`: the fact model's verdicts on the restated sentence-valued facts (judge.summaries.facts);
    `embed`: where entry vectors come from (a filled cache; default the model)."""
    split = sc.split_units(text)
    summary_units, contexts = [u for u, _ in split], [c for _, c in split]
    if not summary_units:
        return {e.key: Verdict("missing" if e.required else "not-required", None, None,
                               "the summary is empty") for e in entries}
    sims = similarities(model, scenario_id, turn, entries, summary_units, thresholds.competition, piece_vectors,
                        embed)
    tokens = unique_tokens(entries)
    checked = checked or {}
    return {e.key: decide(e, summary_units, [float(s) for s in sims[i]], thresholds.of(e.class_),
                          tokens.get(e.key, set()), contexts, checked.get(e.key))
            for i, e in enumerate(entries)}


def compete(sims: Any, weight: float) -> Any:
    """Lower each (entry, piece) score by `weight` times how much closer the piece is to another entry."""
    if weight == 0 or sims.shape[0] < 2:
        return sims
    import numpy as np

    top2 = np.sort(sims, axis=0)[-2:]  # per piece: second best, best
    others = np.where(sims >= top2[1], top2[0], top2[1])  # the best score among the *other* entries
    return sims - weight * np.maximum(0.0, others - sims)


__all__ = ["AuditEntry", "Verdict", "Thresholds", "audit", "decide", "entry_scores", "unique_tokens"]
