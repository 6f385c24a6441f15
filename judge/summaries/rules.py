"""The decision rules of the summary audit's semantic layer: one verdict per ledger entry.

Given the summary's units (sentences and `;` clauses), each unit's sentence (cue words are read
from it) and the unit scores of an entry (judge.summaries.semantic: embeddings, used only to find
which units speak of the entry), `decide` returns the entry's status. Everything here is lexical
and readable: values, restriction words, hedges, attribution to the user, done and pending words
(judge.summaries.cues). See judge.summaries.semantic for the order in which the checks apply.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set

from judge.summaries import cues as sc
from judge.summaries import restrictions
from judge.summaries.verdict import AuditEntry, ModelVerdict, Verdict
from judge.text import cues
from judge.text.lexicon import STOPWORDS

TOP_UNITS = 2  # units per entry read for polarity and status (those above the threshold)


def unique_tokens(entries: Sequence[AuditEntry]) -> dict[str, set[str]]:
    """Each entry's identifier-like value tokens that no other entry's value has."""
    found = {e.key: sc.salient_tokens(cues.render(e.value)) for e in entries}
    counts: dict[str, int] = {}
    for tokens in found.values():
        for t in tokens:
            counts[t] = counts.get(t, 0) + 1
    return {k: {t for t in tokens if counts[t] == 1} for k, tokens in found.items()}


def entry_scores(entry: AuditEntry, summary_units: list[str], scores: list[float],
                 tokens: Set[str], contexts: list[str] | None = None) -> list[float]:
    """Per unit, how strongly it can carry the entry: its cosine, 1.0 when it names one of the
    entry's own identifiers, and 0 for a unit that cannot carry the entry's status (a completion
    is carried only by a unit that says done or pending; a pending one also by a unit that states
    it as the aim: "Task: get the fix deployed", "the job ends when the write-up is posted")."""
    out = []
    for unit, context, score in zip(summary_units, contexts or summary_units, scores, strict=False):
        if entry.class_ == "completion" and not _states_status(entry, context):
            out.append(0.0)
            continue
        low = unit.lower()
        if tokens and any(re.search(rf"(?<![\w]){re.escape(t)}(?![\w])", low) for t in tokens):
            score = 1.0
        out.append(score)
    return out


def _states_status(entry: AuditEntry, sentence: str) -> bool:
    """Whether the sentence can carry a completion's status: done, pending, or (for a pending
    completion) what is still to be reached."""
    return bool(sc.done_word(sentence) or sc.find(sc.PENDING_RE, sentence)
                or (entry.status != "completed" and sc.states_aim(sentence)))


def decide(entry: AuditEntry, summary_units: list[str], scores: list[float], threshold: float,
           tokens: Set[str] = frozenset(), contexts: list[str] | None = None,
           checked: ModelVerdict | None = None) -> Verdict:
    """The semantic verdict on one entry. Retrieval ranks `summary_units`; cue words are read from
    each unit's sentence (`contexts`, aligned with the units; default the units themselves).
    `checked`: the fact model's verdict on a restated sentence-valued fact, which decides after the
    value and attribution rules."""
    contexts = contexts or summary_units
    context = dict(zip(summary_units, contexts, strict=False))
    scores = entry_scores(entry, summary_units, scores, tokens, contexts)
    order = sorted(range(len(summary_units)), key=lambda i: -scores[i])
    best = scores[order[0]]
    above = [summary_units[i] for i in order if scores[i] >= threshold]
    near = above[:TOP_UNITS]
    if not entry.required:
        return _not_required(entry, near, best, context)
    reopened = _still_open(entry, summary_units, near, best, context)
    if reopened is not None:
        return reopened
    by_value = _value_verdict(entry, summary_units, best)
    if by_value is not None:
        return by_value
    if checked is not None:
        promoted = _uncertainty(entry, near, best, context) if near else None
        return promoted or Verdict(checked.status, checked.evidence, best, checked.detail, checked.confidence)
    if not near and entry.class_ == "completion":
        near = _stated_completion(entry, summary_units, contexts)
    if not near:
        lexical = restrictions.unretrieved(entry, summary_units, best, context)
        return lexical or Verdict("missing", summary_units[order[0]], best,
                                   f"no sentence speaks of it (best score {best:.2f} < {threshold:.2f})")
    for check in (_uncertainty, _completion, restrictions.polarity):
        verdict = check(entry, near, best, context)
        if verdict is not None:
            return verdict
    unforced = restrictions.without_force(entry, near, best, context)
    if unforced is not None:
        return unforced
    if sc.short_values(entry.value) and entry.class_ == "fact":
        return Verdict("distorted", near[0], best, "speaks of it without its value (a paraphrase, or "
                       "another value)")
    return Verdict("preserved", near[0], best, f"addressed (score {best:.2f} >= {threshold:.2f})")


def _not_required(entry: AuditEntry, near: list[str], best: float, context: dict[str, str]) -> Verdict:
    if entry.status == "revoked" and restrictions.restricts(entry):
        for unit in near:
            if sc.has_restriction(context[unit]) and not sc.find(sc.REVOKED_RE, context[unit]):
                return Verdict("obsolete-as-current", unit, best,
                               "a revoked restriction is stated as still in force")
    return Verdict("not-required", None, best, entry.reason)


def _value_verdict(entry: AuditEntry, summary_units: list[str], best: float) -> Verdict | None:
    """Short values decide lexically: a superseded one affirmed, or the current one present (not for
    a restriction: "the crash is in src/app.py" names the file of "edit only src/app.py" and keeps
    nothing of its limit)."""
    current = sc.short_values(entry.value)
    current_lower = {v.lower() for v in current}
    stale = [v for old, _ in entry.superseded for v in sc.short_values(old) if v.lower() not in current_lower]
    for unit in summary_units:
        for value in stale:
            for start, end in sc.value_mentions(unit, value):
                if not sc.stale_marked(unit, start, end):
                    return Verdict("obsolete-as-current", unit, best,
                                   f"superseded value {value!r} stated as current")
    for unit in summary_units if not restrictions.restricts(entry) else ():
        for value in current:
            if sc.value_mentions(unit, value):
                return Verdict("preserved", unit, best, f"carries the current value {value!r}")
    return None


def _stems(text: str) -> set[str]:
    return {w[:5] for w in sc.words(text) if len(w) > 2 and w not in STOPWORDS}


def _stated_completion(entry: AuditEntry, summary_units: list[str], contexts: list[str]) -> list[str]:
    """Units retrieval ranked too low that still state the completion's status in other words: a
    done word stating a status or a pending word ("ran", "passed", "pending", "next") in a sentence
    sharing at least two content words with the entry
    ("the full suite ran against the local container" for "the chosen suite has run against the
    local container"), best overlap first."""
    own = _stems(f"{entry.key.replace('_', ' ')} {cues.render(entry.value)}")
    scored = []
    for unit, sentence in zip(summary_units, contexts, strict=False):
        shared = len(own & _stems(unit))
        if shared >= 2 and (sc.done_word(sentence) or sc.find(sc.PENDING_RE, sentence)):
            scored.append((-shared, unit))
    return [unit for _, unit in sorted(scored)][:TOP_UNITS]


def _still_open(entry: AuditEntry, summary_units: list[str], near: list[str], best: float,
                context: dict[str, str]) -> Verdict | None:
    """A resolved uncertainty (an uncertainty entry with a newer value) presented as still open, in
    a unit about it or one naming its new value ("still undecided (smoke or full)")."""
    if entry.class_ != "uncertainty" or not entry.superseded:
        return None
    values = sc.short_values(entry.value)
    about = near + [u for u in summary_units if any(sc.value_mentions(u, v) for v in values)]
    for unit in about:
        if sc.find(sc.STILL_OPEN_RE, context[unit]):
            return Verdict("obsolete-as-current", unit, best, "a resolved uncertainty is presented as still open")
    return None


def _uncertainty(entry: AuditEntry, near: list[str], best: float, context: dict[str, str]) -> Verdict | None:
    if (entry.class_ != "uncertainty" and entry.source != "agent") or entry.superseded:
        return None
    unit = near[0]
    who = sc.attribution(context[unit])
    if who:
        return Verdict("assumption-promoted", unit, best, f"an open question attributed to the user ({who!r})")
    if sc.find(sc.SETTLED_RE, context[unit]) and not any(sc.find(sc.HEDGE_RE, context[u]) for u in near):
        return Verdict("assumption-promoted", unit, best, "an open question stated as settled")
    return None


def _completion(entry: AuditEntry, near: list[str], best: float, context: dict[str, str]) -> Verdict | None:
    if entry.class_ != "completion":
        return None
    said = [(u, sc.done_word(context[u]), sc.find(sc.PENDING_RE, context[u]) or
             (entry.status != "completed" and sc.states_aim(context[u]) and "an aim")) for u in near]
    if entry.status == "completed" and not any(done for _, done, _ in said):
        unit, _, pending = next(((u, d, p) for u, d, p in said if p), said[0])
        if pending:
            return Verdict("distorted", unit, best, f"completed, but the summary says {pending!r}")
    if entry.status == "active" and all(done and not pending for _, done, pending in said):
        return Verdict("distorted", said[0][0], best, f"still pending, but the summary says {said[0][1]!r}")
    return None
