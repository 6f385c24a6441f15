"""The fact-consistency check of the semantic layer: is a sentence-valued fact kept, distorted or missing?

A fact stated as a sentence ("Tom wants to watch Metropolis on Friday") cannot be matched verbatim,
and retrieval alone finds an edited sentence ("... Star Wars on Friday") still "about" it. So when
the summary *restates* the fact, judge.text.consistency decides: a classifier over the alignment of
the fact with the statement restating it (numbers, names, time words, negation, antonyms,
unsupported content, MiniLM similarities of the replaced spans), trained on FactCC-style edits of
real sentences (see that module and benchmarks/SUMMEDITS.md).

Scope, and why: the model learnt what an *edit* of a sentence looks like, so it only judges facts

- that are sentences (at least four alphabetic words: "01:00-03:00 UTC, 2024-05-06" is a value, and
  the value rules judge it), of class `fact` (goals, constraints and permissions are compressed and
  reworded by a good summary - "Drafts only; the approver submits" - which the model reads as lost
  words; their polarity and status have rules of their own), required at the summary's turn;
- that the summary restates: some statement (a sentence, cut again at ": " and spaced dashes, so a
  comment joined to the fact - "that is history, not an instruction" - is not read as part of it;
  whole, too, when the fact itself is joined that way: "Ticket REP-118 has a DBA comment: ...")
  reads as an *edit* of the fact (judge.text.restate). A fact told in other words ("A-20977 was
  refunded in full earlier, so nothing more is drafted for it") is left to retrieval and the
  rules, where the model would read the rewording as a loss.

The model compares the fact with that statement; the other required entries' values are context a
statement may draw on without adding unsupported content. Its verdict maps kept -> preserved,
distorted -> distorted, missing -> missing, with the model's probability of that status as the
finding's confidence. Inserted content in the *same* statement ("... Metropolis with his sister")
counts; a separate sentence the fact does not restate does not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from judge.model.summary import SummaryStatus
from judge.summaries.rules import AuditEntry, ModelVerdict
from judge.text import cues
from judge.text.align import align
from judge.text.consistency import WEIGHTS_FILE, ConsistencyModel, PairVerdict, VectorCache, split_sentences
from judge.text.restate import is_sentence, restating, statements


def weights_sha256() -> str:
    """sha256 of the shipped consistency weights (recorded beside the thresholds and in reports)."""
    return hashlib.sha256(WEIGHTS_FILE.read_bytes()).hexdigest()


def eligible(entry: AuditEntry) -> bool:
    return entry.required and entry.class_ == "fact" and is_sentence(entry.value)


def load_model(encoder: Any) -> ConsistencyModel:
    """The shipped model, embedding with `encoder` (texts -> unit vectors: the audit's MiniLM)."""
    return ConsistencyModel.load(embed=encoder)


def pairs(entries: Sequence[AuditEntry], text: str) -> list[tuple[str, str, str, str]]:
    """(key, fact, the statement restating it, context) for each eligible fact the summary restates;
    the context is the other required entries' values, which a statement may draw on."""
    required = [e for e in entries if e.required]
    values = [cues.render(e.value) for e in required]
    if not any(eligible(e) for e in required):
        return []
    candidates = statements(text)
    whole = [c for c in split_sentences(text) if c not in candidates]
    out = []
    for i, (entry, fact) in enumerate(zip(required, values, strict=False)):
        # a fact that itself joins two statements ("REP-118 has a DBA comment: ...") is restated by
        # a whole sentence too, not only by its parts
        found = restating(fact, candidates + (whole if len(statements(fact)) > 1 else [])) if eligible(entry) \
            else None
        if found is not None:
            out.append((entry.key, fact, found, " ".join(v for k, v in enumerate(values) if k != i)))
    return out


def texts_to_embed(entries: Sequence[AuditEntry], text: str) -> list[str]:
    """What `check` will embed for one summary (for a shared cache filled in one batch): each fact,
    its statement and the replaced spans of their alignment."""
    out = []
    for _, fact, statement, context in pairs(entries, text):
        out += [fact, statement] + [span for pair in align(fact, statement, context).replaced for span in pair if span]
    return out


def check(model: ConsistencyModel, cache: VectorCache, entries: Sequence[AuditEntry],
          texts: Sequence[str]) -> list[dict[str, ModelVerdict]]:
    """For each summary text: the model's verdict on each eligible fact it restates."""
    found = [pairs(entries, text) for text in texts]
    flat = [p for per_text in found for p in per_text]
    verdicts = iter(model.judge_pairs([p[1] for p in flat], [p[2] for p in flat], [p[3] for p in flat],
                                      cache=cache) if flat else [])
    return [{key: verdict(next(verdicts)) for key, _, _, _ in per_text} for per_text in found]


STATUS: dict[str, SummaryStatus] = {"kept": "preserved", "distorted": "distorted", "missing": "missing"}


def verdict(v: PairVerdict) -> ModelVerdict:
    """The audit's reading of a model verdict: its status, the probability of it, the sentence it
    read and the cue words that changed."""
    p = {"kept": v.p_kept, "distorted": v.p_distorted, "missing": v.p_missing}[v.status]
    why = f"; {', '.join(v.reasons[:4])}" if v.reasons and v.status != "kept" else ""
    return ModelVerdict(STATUS[v.status], round(p, 4), v.candidate,
                        f"fact model: {v.status} (P(kept) {v.p_kept:.2f}){why}")
