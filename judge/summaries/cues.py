"""Lexical cues of the summary audit: units, value mentions, and the words that decide polarity.

Sentence embeddings say what a sentence is about, not whether it affirms or denies it (MiniLM puts
"Do not modify production data" and "Modify production data" at cosine 0.91). So the semantic layer
uses embeddings only to find the sentences that speak of a ledger entry, and decides everything
about values and polarity here, with word lists a reviewer can read:

- a superseded value is *marked* (fine) when a cue says it is no longer valid: before it ("no longer
  Chromium", "instead of pro-monthly", "switched from Chromium to Firefox", "not web-03", "earlier")
  or after it ("Chromium is no longer used", "web-03 is out", "pro-monthly must not be used");
- a prohibition or restriction survives when the sentence carries a restriction word ("only",
  "never", "do not", "untouched", "read-only", "off-limits"...);
- an open uncertainty survives when the sentence hedges ("unknown", "whether", "still open", "?");
- an assumption is promoted when the sentence attributes it to the user ("the user wants/asked/
  confirmed...") or settles it ("root cause:", "that is the cause");
- a completion's status is read from done words ("done", "created", "passes", "completed", and the
  state a finished repair leaves: "reliable", "stable", "works", "no longer flaky") and pending
  words ("not done", "pending", "next:", "still to do", "needs");
- a permissive word lifts a restriction only outside a negation's scope ("nothing may be deployed"
  keeps it: negative quantifiers count as restriction words too).
"""

from __future__ import annotations

import re
from typing import Any

from judge.summaries import mood
from judge.text import cues
from judge.text.dates import date_spans

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+|^\s*[-*•]\s+", re.MULTILINE)
_CLAUSE_SPLIT = re.compile(r";\s*")
_SALIENT = re.compile(r"[A-Za-z0-9]+(?:[-_./:][A-Za-z0-9]+)+")
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?", re.IGNORECASE)


def _clean(part: str | None) -> str:
    return (part or "").strip(" \t-*•")


def split_units(text: str) -> list[tuple[str, str]]:
    """(unit, its sentence): the summary cut into sentences and `;`-separated clauses. A unit is
    what retrieval scores; its sentence is the context cue words are read from ("We may create one
    account; none exists yet" keeps "yet" for the account clause)."""
    out = []
    for sentence in _SENTENCE_BREAK.split(text or ""):
        sentence = _clean(sentence)
        if not sentence or not _WORD.search(sentence):
            continue
        for part in _CLAUSE_SPLIT.split(sentence):
            part = _clean(part)
            if part and _WORD.search(part):
                out.append((part, sentence))
    return out


def units(text: str) -> list[str]:
    return [unit for unit, _ in split_units(text)]


_PIECE_BREAK = re.compile(r",\s+|\s+-\s+|:\s+|\s+and\s+(?=\w+\s+\w+\s+\w+)")


def pieces(unit: str) -> list[str]:
    """The unit and, when it has several, its comma/colon/dash clauses of two words or more:
    retrieval scores a unit by its best piece, so one entry among three in a sentence is found."""
    parts = [p.strip() for p in _PIECE_BREAK.split(unit) if len(words(p)) >= 2]
    return [unit] + parts if len(parts) > 1 else [unit]


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text or "")]


def _phrase_re(phrases: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = sorted((re.escape(p).replace(r"\ ", r"\s+") for p in phrases), key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:{})(?![\w-])".format("|".join(alternatives)), re.IGNORECASE)


# A superseded value preceded by one of these (within its clause, a few words back) is left behind.
_STALE_BEFORE = (
    "not", "no", "never", "no longer", "nor", "instead of", "rather than", "in place of", "replaced",
    "replaces", "replacing", "replaced by", "over", "from", "switched from", "switching from",
    "changed from", "moved from", "moving from", "away from", "drop", "dropped", "stop", "stopped",
    "avoid", "earlier", "previously", "formerly", "originally", "old", "previous", "former",
    "first", "used to", "was", "were", "superseded", "obsolete", "stale", "don't use", "do not use",
    "not use", "without", "anymore", "any more", "abandoned", "retired", "scrapped",
)
# ... or followed by one of these.
_STALE_AFTER = (
    "is no longer", "no longer", "is out", "are out", "was dropped", "dropped", "was replaced",
    "replaced", "is replaced", "superseded", "is superseded", "is obsolete", "obsolete",
    "must not be used", "is not used", "not used", "isn't used", "is off the table", "off the table",
    "was wrong", "was corrected", "is gone", "anymore", "any more", "->", "→", "is not", "isn't",
    "was the old", "was abandoned", "no more", "plan was dropped", "was retired",
)
_STALE_BEFORE_RE = _phrase_re(_STALE_BEFORE)
_STALE_AFTER_RE = _phrase_re(_STALE_AFTER)
_CLAUSE = re.compile(r"[,;:.!?()\[\]]|\s-\s|\bbut\b|\band\b|\bthen\b|\bso\b", re.IGNORECASE)
_LOOK_BACK = 7  # words
_LOOK_AHEAD = 6

# Restriction and prohibition words: a constraint or a limited permission keeps its force only
# when the sentence that states it carries one.
RESTRICTION = (
    "not", "no", "never", "n't", "only", "alone", "solely", "exclusively", "nothing else",
    "nowhere else", "none", "nor", "without", "must not", "may not", "cannot", "untouched",
    "as it is", "as is", "leave", "left alone", "keep", "kept", "stays", "stay", "off-limits",
    "off limits", "read-only", "read only", "forbid", "forbids", "forbidden", "prohibit",
    "prohibits", "prohibited", "disallowed", "hands off", "avoid",
    "refrain", "except", "limited to", "restricted", "just", "but not", "not ours", "belongs to",
    "belong to", "approver", "sign-off", "don't touch", "do not touch", "observe", "nothing beyond",
    "single", "one",
    # negative quantifiers: "nothing may be deployed", "no one may submit", "neither ... nor"
    "nothing", "nobody", "no one", "neither", "at no time", "under no circumstances", "off the table",
    "out of scope",
)
RESTRICTION_RE = _phrase_re(tuple(r for r in RESTRICTION if r != "n't"))

# Hedges: an open uncertainty is kept as open.
HEDGE = (
    "unknown", "unclear", "uncertain", "not sure", "not yet", "undecided", "not decided", "open",
    "whether", "if", "tbd", "to be decided", "unconfirmed", "not confirmed", "not yet confirmed",
    "may", "might", "could", "possibly", "perhaps", "pending", "waiting", "awaits", "awaiting",
    "question", "cannot tell", "can't tell", "do not know", "don't know", "still", "remains",
    "unresolved", "to confirm", "need to check", "not known",
)
HEDGE_RE = _phrase_re(HEDGE)

# A resolved uncertainty presented as still open.
STILL_OPEN = ("unknown", "unclear", "undecided", "not decided", "still open", "open question",
              "whether", "tbd", "to be decided", "waiting for", "will say", "will decide",
              "not yet decided", "unconfirmed", "not confirmed", "?")
STILL_OPEN_RE = re.compile(_phrase_re(tuple(s for s in STILL_OPEN if s != "?")).pattern + r"|\?")

# Attribution to the user (the form an agent's assumption takes when promoted to an instruction).
ATTRIBUTION_RE = re.compile(
    # the subject, then (for a person) up to six words of its clause: "the user is in a hurry and asked"
    r"\b(?:the\s+)?(?:(?:user|customer|client|requester)(?:\s+[\w'-]+){0,6}?|they)\s+"
    r"(?:now\s+|also\s+|has\s+|had\s+|have\s+)?"
    r"(?:wants?|wanted|asked|asks|requires?|required|requested|requests|insists?|insisted|expects?|"
    r"expected|prefers?|preferred|confirmed|confirms|approved|approves|agreed|agrees|said|says|told|"
    r"instructed|demands?|demanded|needs?|signed off)\b"
    r"|\bas (?:the user )?(?:requested|instructed|asked)\b|\bper the user(?:'s)? (?:request|instruction)\b",
    re.IGNORECASE,
)
# Settling an uncertainty without a hedge.
SETTLED_RE = re.compile(
    r"\b(?:root cause|the cause|caused by|is due to|because of|turned out|confirmed|established|"
    r"determined|proven|definitely|clearly)\b", re.IGNORECASE)
# Revocation wording: a revoked entry mentioned as lifted is fine.
REVOKED_RE = _phrase_re((
    "lifted", "revoked", "no longer", "no longer applies", "not apply", "does not apply", "doesn't apply",
    "withdrawn", "cancelled", "canceled", "earlier", "old", "former",
    "previous", "authorised", "authorized", "approved", "approval", "lets us", "allowed", "may",
    "is off", "off the table", "was", "superseded", "obsolete", "replaced",
))

# Permissive wording: with no restriction word left, the entry's limit is stated as lifted.
PERMISSIVE_RE = _phrase_re((
    "may", "can", "allowed", "allow", "allows", "is fine", "are fine", "fine", "ok", "okay", "free to",
    "go ahead", "approved", "authorised", "authorized", "permitted", "as well", "also", "any", "too",
    "whatever", "wherever", "is allowed", "are allowed", "should", "will", "wants", "want",
))

DONE_RE = re.compile(
    r"\b(?:done|completed?|finished|created|exists?|existing|passe[sd]|passing|green|fixed|"
    r"repaired|succeeded|successful|ran|run green|taken|posted|met|reached|applied|migrated|"
    r"dropped|built|already|resolved|reliable|reliably|stable|works|"
    # a failure word denied: the state a completed repair leaves
    r"no longer (?:flaky|flakes|fails|failing|broken|times? out|timing out))\b"
    r"|\b\d+\s*/\s*0\b|\b\d+ passed\b", re.IGNORECASE)
PENDING_RE = re.compile(
    r"\b(?:not (?:yet )?(?:done|completed?|finished|started|posted|run|created|fixed|repaired)|"
    r"not done yet|has(?:n't| not)(?: yet)? (?:been )?\w+|haven't|hasn't|isn't|pending|to do|todo|"
    r"still (?:to|fails?|failing|needs?)|needs?|next|remaining|yet to|will|retry|waiting|"
    r"not (?:been )?(?:landed|posted|run)|fails|failing|nothing (?:has been )?(?:run|done)|"
    r"not run yet|not started|yet)\b", re.IGNORECASE)


def find(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text or "")
    return match.group(0) if match else None


def done_word(text: str) -> str | None:
    """A completion word that states a status: not denied in its clause ("done", not "not done";
    "passes", not "still fails") and not said of what is still to be reached ("Task: get the fix
    deployed", "until the test passes", "one account may be created": judge.summaries.mood)."""
    for match in DONE_RE.finditer(text or ""):
        if not cues.negated_at(text, match.start(), match.end(), history=False) \
                and not mood.prospective_at(text, match.start(), match.end()):
            return match.group(0)
    return None


def states_aim(text: str) -> bool:
    """Whether the sentence says what is still to be reached (an aim label, an imperative, a
    directive, a done word read prospectively: judge.summaries.mood)."""
    return mood.states_aim(text, DONE_RE)


def has_restriction(text: str) -> bool:
    return bool(RESTRICTION_RE.search(text)) or "n't" in text.lower()


def restriction_words(text: str) -> list[str]:
    """The restriction words and phrases of `text`, lower-cased ("n't" for a contraction)."""
    found = [m.group(0).lower() for m in RESTRICTION_RE.finditer(text)]
    return found + (["n't"] if "n't" in text.lower() else [])


def lifting_word(text: str) -> str | None:
    """A permissive word ("may", "allowed", "is fine") that is not in a negation's scope: "nothing
    may be deployed" and "deploying is not allowed" lift nothing."""
    dates = date_spans(text)
    for match in PERMISSIVE_RE.finditer(text or ""):
        if any(start <= match.start() < end for start, end in dates):
            continue  # "12-19 May": the month
        if not cues.negated_at(text, match.start(), match.end(), history=False):
            return match.group(0)
    return None


def _clause_before(text: str, start: int) -> str:
    return _CLAUSE.split(text[:start])[-1]


def _clause_after(text: str, end: int) -> str:
    return _CLAUSE.split(text[end:])[0]


def stale_marked(text: str, start: int, end: int) -> bool:
    """Whether a superseded value at text[start:end] is said to be no longer valid."""
    before = " ".join(words(_clause_before(text, start))[-_LOOK_BACK:])
    if before and _STALE_BEFORE_RE.search(before):
        return True
    after_raw = text[end:end + 60]
    if re.match(r"\s*(?:->|→)", after_raw):
        return True
    after = " ".join(words(_clause_after(text, end))[:_LOOK_AHEAD])
    if after and _STALE_AFTER_RE.search(after):
        return True
    # "from X to Y" with the clause boundary in between ("from the first plan, pro-monthly, to ...")
    return bool(re.search(r"\bfrom\s+(?:\S+\s+){0,3}$", text[max(0, start - 40):start], re.IGNORECASE)
                and re.match(r"\S*\s+(?:to|for)\b", text[end:end + 20]))


def value_mentions(text: str, value: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in cues.value_pattern(value).finditer(text or "")]


def short_values(value: Any) -> list[str]:
    """The distinctive short values (names, ids, paths) an entry's value consists of."""
    return [v for v in cues.scalar_values(value) if cues.is_short(v) and not cues.is_weak(v)]


def salient_tokens(text: str) -> set[str]:
    """Identifier-like tokens (`qa-381`, `INC-5521`, `2024-05-06`, `tests/checkout.spec.ts`) that
    contain a digit or a separator inside a word: what a paraphrase keeps verbatim."""
    return {t.lower() for t in _SALIENT.findall(text or "") if any(c.isdigit() for c in t) or "_" in t or "/" in t}


def attribution(text: str) -> str | None:
    return find(ATTRIBUTION_RE, text)
