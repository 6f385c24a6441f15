"""Training pairs for the fact-consistency model, made by transforming real sentences (FactCC).

Kryscinski et al. 2020 ("Evaluating the Factual Consistency of Abstractive Text Summarization")
label a sentence against its own transformations: entity, number, pronoun swaps and negation make
it inconsistent; paraphrases keep it consistent. We add the edits SummEdits found in LLM summaries
(Laban et al. 2023): antonyms, common-noun category swaps, quantifiers, inserted clauses of facts
the source does not state, dropped spans; and meaning-preserving synonyms, filler, contractions
and reordering. A distortion is mixed with synonyms a third of the time, so that a paraphrase is
never evidence by itself. Unrelated sentences stand for a missing fact.

Every choice draws from one `random.Random(seed)`, over sorted inputs: the same seed and sentences
give the same pairs.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from judge.text import lexicon as lx

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,:]\d+)?")
_AUX = ("is", "are", "was", "were", "will", "can", "could", "should", "would", "may", "might",
        "must", "has", "have", "had", "do", "does", "did")
_QUANT = {"some": ("all", "no", "most", "few"), "all": ("some", "none of the", "few"),
          "many": ("few", "no"), "few": ("many", "most"), "most": ("few", "some", "none of the"),
          "every": ("no", "some"), "each": ("no",), "several": ("no", "all"), "both": ("neither of the",),
          "any": ("no",), "always": ("never", "rarely"), "never": ("always", "often")}
_TIME_GROUPS = (
    "monday tuesday wednesday thursday friday saturday sunday",
    "january february march april may june july august september october november december",
    "morning afternoon evening night", "today tomorrow yesterday tonight",
    "spring summer autumn winter", "daily weekly monthly yearly")
_ADJ = ("new", "urgent", "free", "premium", "additional", "second", "international", "private",
        "expensive", "old", "temporary", "annual")
_TITLES = {"Mr", "Mrs", "Ms", "Dr", "Sir", "Madam", "I"}
_CONNECT = (", and ", ", but ", " because ", " after ", ", which means ", " while ")
_CONTRACT = (("do not", "don't"), ("does not", "doesn't"), ("did not", "didn't"), ("is not", "isn't"),
             ("are not", "aren't"), ("will not", "won't"), ("can not", "can't"), ("it is", "it's"),
             ("was not", "wasn't"), ("have not", "haven't"), ("has not", "hasn't"), ("I am", "I'm"))


@dataclass(frozen=True)
class Pair:
    ref: str
    cand: str
    context: str
    label: str  # kept | distorted | missing
    kind: str
    source: str


def _table(groups: Sequence[Sequence[str]]) -> dict[str, list[str]]:
    table: dict[str, set[str]] = {}
    for group in groups:
        for w in group:
            table.setdefault(w, set()).update(x for x in group if x != w)
    return {w: sorted(v) for w, v in table.items()}


SYN = _table(lx.SYNONYMS)
ANT = _table(lx.ANTONYMS)
CAT = _table(lx.CATEGORIES)
TIME = _table([g.split() for g in _TIME_GROUPS])


def _words(s: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(s))


def _put(s: str, m: re.Match[str], new: str) -> str:
    if m.group(0)[:1].isupper():
        new = new[:1].upper() + new[1:]
    return s[: m.start()] + new + s[m.end():]


def _inflect(word: str, table: dict[str, list[str]]) -> tuple[str, str] | None:
    """(base form in the table, suffix) of `word`: exact, or base + s / es / ed / d / ing."""
    w = word.lower()
    if w in table:
        return w, ""
    for suffix in ("s", "es", "ed", "d", "ing"):
        if w.endswith(suffix) and w[: -len(suffix)] in table:
            return w[: -len(suffix)], suffix
    return None


def _with_suffix(base: str, suffix: str) -> str:
    if not suffix or " " in base:
        first, _, rest = base.partition(" ")
        return (first + suffix + (" " + rest if rest else "")) if suffix else base
    if suffix in ("ed", "d"):
        return base + ("d" if base.endswith("e") else "ed")
    if suffix == "ing":
        return (base[:-1] if base.endswith("e") else base) + "ing"
    return base + ("es" if base.endswith(("s", "sh", "ch", "x")) else "s")


def swap_from(table: dict[str, list[str]], count: int = 1) -> Callable:
    """Replace up to `count` words found in `table` by another word of their group."""
    def edit(s: str, rng: random.Random, pools: dict) -> str | None:
        hits = [m for m in _words(s) if _inflect(m.group(0), table)]
        if not hits:
            return None
        for m in sorted(rng.sample(hits, min(count, len(hits))), key=lambda m: -m.start()):
            base, suffix = _inflect(m.group(0), table)  # type: ignore[misc]
            s = _put(s, m, _with_suffix(rng.choice(table[base]), suffix))
        return s
    return edit


def synonyms(s: str, rng: random.Random, pools: dict) -> str | None:
    """One to six synonym swaps: LLM paraphrases change many words at once."""
    return swap_from(SYN, rng.randint(1, 6))(s, rng, pools)


def name_swap(s: str, rng: random.Random, pools: dict) -> str | None:
    words = _words(s)
    hits = [m for m in words[1:] if m.group(0)[0].isupper() and m.group(0).lower() not in lx.STOPWORDS
            and m.group(0) not in _TITLES]
    if not hits:
        return None
    m = rng.choice(hits)
    name = m.group(0)
    parts = re.findall(r"[A-Z][a-z]+|[A-Z]+(?![a-z])|\d+|[a-z]+", name)
    if len(parts) > 1 and rng.random() < 0.6:  # "BestInsuranceXYZ" -> "GoodInsuranceXYZ"
        i = rng.randrange(len(parts))
        swap = rng.choice([n for n in pools["names"] if n != parts[i]])
        return _put(s, m, "".join(parts[:i] + [swap] + parts[i + 1:]))
    return _put(s, m, rng.choice([n for n in pools["names"] if n != name]))


def role_swap(s: str, rng: random.Random, pools: dict) -> str | None:
    hits = [m for m in _words(s)[1:] if m.group(0)[0].isupper()]
    distinct = sorted({m.group(0) for m in hits})
    if len(distinct) < 2:
        return None
    a, b = rng.sample(distinct, 2)
    return re.sub(rf"\b({re.escape(a)}|{re.escape(b)})\b", lambda m: b if m.group(0) == a else a, s)


def number_swap(s: str, rng: random.Random, pools: dict) -> str | None:
    hits = [m for m in _words(s) if m.group(0)[0].isdigit() or m.group(0).lower() in lx.NUMBER_WORDS]
    if not hits:
        return None
    m = rng.choice(hits)
    text = m.group(0)
    if text[0].isdigit():
        digits = [i for i, c in enumerate(text) if c.isdigit()]
        i = rng.choice(digits)
        new = text[:i] + rng.choice([d for d in "0123456789" if d != text[i]]) + text[i + 1:]
    else:
        new = rng.choice(sorted(w for w in lx.NUMBER_WORDS if w != text.lower()))
    return _put(s, m, new)


def negation(s: str, rng: random.Random, pools: dict) -> str | None:
    """Remove a negation when there is one, else add "not" after an auxiliary or "did not" before
    a past-tense verb."""
    removed = re.sub(r"\s+not\b|n['’]t\b|\bnever\s+", lambda m: "" if "never" not in m.group(0) else "", s,
                     count=1, flags=re.IGNORECASE)
    if removed != s:
        return removed
    words = _words(s)
    aux = [m for m in words[:-1] if m.group(0).lower() in _AUX]
    if aux:
        m = aux[0]
        return s[: m.end()] + " not" + s[m.end():]
    past = [m for m in words[1:] if m.group(0).endswith("ed") and len(m.group(0)) > 4]
    if past:
        m = past[0]
        base = m.group(0)[:-2] if not m.group(0)[:-1].endswith("e") else m.group(0)[:-1]
        return _put(s, m, "did not " + base)
    return None


def quantifier(s: str, rng: random.Random, pools: dict) -> str | None:
    hits = [m for m in _words(s) if m.group(0).lower() in _QUANT]
    if not hits:
        return None
    m = rng.choice(hits)
    return _put(s, m, rng.choice(_QUANT[m.group(0).lower()]))


def insert_clause(s: str, rng: random.Random, pools: dict) -> str | None:
    """Add a fact the source does not state: a clause of another sentence, or an adjective."""
    if rng.random() < 0.3:
        nouns = [m for m in _words(s)[2:] if m.group(0).lower() not in lx.STOPWORDS and m.group(0).islower()]
        if nouns:
            m = rng.choice(nouns)
            return s[: m.start()] + rng.choice(_ADJ) + " " + s[m.start():]
    other = rng.choice(pools["sentences"]).rstrip(".!?")
    words = other.split()
    if len(words) < 5:
        return None
    start = rng.randint(0, max(0, len(words) - 5))
    clause = " ".join(words[start:start + rng.randint(4, 9)])
    return s.rstrip(" .!?") + rng.choice(_CONNECT) + clause[:1].lower() + clause[1:] + "."


def delete_span(s: str, rng: random.Random, pools: dict) -> str | None:
    """Drop a clause or a list item: part of the fact goes missing."""
    parts = re.split(r"(,\s+(?:and\s+)?|\s+and\s+|\s+but\s+|\s+because\s+|\s+which\s+)", s)
    if len(parts) < 3:
        return None
    chunks = list(range(2, len(parts), 2))
    i = rng.choice(chunks)
    if len(parts[i].split()) < 2:
        return None
    out = "".join(parts[:i - 1] + parts[i + 1:]).strip()
    out = out if out.endswith((".", "!", "?")) else out.rstrip(",;: ") + "."
    return out if len(out.split()) >= 5 else None


def filler(s: str, rng: random.Random, pools: dict) -> str | None:
    present = [m for m in _words(s) if m.group(0).lower() in lx.FILLER]
    if present:
        m = rng.choice(present)
        return re.sub(r"\s{2,}", " ", s[: m.start()] + s[m.end():]).replace(" ,", ",").strip()
    verbs = [m for m in _words(s)[1:] if m.group(0).lower() in _AUX and not s[m.end():].startswith(" not")]
    if not verbs:
        return None
    m = rng.choice(verbs)
    return s[: m.end()] + " " + rng.choice(("also", "really", "actually", "still")) + s[m.end():]


def contraction(s: str, rng: random.Random, pools: dict) -> str | None:
    for long, short in _CONTRACT:
        for a, b in ((long, short), (short, long)):
            if re.search(rf"\b{re.escape(a)}\b", s):
                return re.sub(rf"\b{re.escape(a)}\b", b, s, count=1)
    return None


def reorder(s: str, rng: random.Random, pools: dict) -> str | None:
    """Swap the two sides of "X and Y" (single words) or of two comma-separated list items."""
    m = re.search(r"\b([a-z]{3,}) (and|or) ([a-z]{3,})\b", s)
    if not m or m.group(1) in lx.STOPWORDS or m.group(3) in lx.STOPWORDS:
        return None
    return s[: m.start()] + f"{m.group(3)} {m.group(2)} {m.group(1)}" + s[m.end():]


KEPT = {"synonym": synonyms, "filler": filler, "contraction": contraction, "reorder": reorder}
DISTORTED = {"name": name_swap, "role": role_swap, "number": number_swap, "time": swap_from(TIME),
             "negation": negation, "antonym": swap_from(ANT), "category": swap_from(CAT),
             "quantifier": quantifier, "insert": insert_clause, "delete": delete_span}


def _apply(kinds: dict, s: str, rng: random.Random, pools: dict) -> tuple[str, str] | None:
    order = sorted(kinds)
    rng.shuffle(order)
    for kind in order:
        out = kinds[kind](s, rng, pools)
        if out and out.strip() != s.strip():
            return kind, out
    return None


def make_pairs(sentences: Sequence[tuple[str, str]], seed: int) -> list[Pair]:
    """For each (source, sentence), sorted: one kept and one distorted variant (when some edit
    applies) and, for one in four, an unrelated sentence of the same source as a missing fact."""
    rng = random.Random(seed)
    items = sorted(set(sentences))
    pools = {"sentences": [s for _, s in items], "names": _names(items)}
    by_source: dict[str, list[str]] = {}
    for source, s in items:
        by_source.setdefault(source, []).append(s)
    pairs: list[Pair] = []
    for source, s in items:
        context = rng.choice(by_source[source])
        kept = _apply(KEPT, s, rng, pools)
        for _ in range(rng.choice((0, 0, 1, 2))):  # several meaning-preserving edits at once
            more = _apply(KEPT, kept[1], rng, pools) if kept else None
            kept = (kept[0] + "+" + more[0], more[1]) if kept and more else kept
        pairs.append(Pair(s, kept[1] if kept else s, context, "kept", kept[0] if kept else "identity", source))
        bad = _apply(DISTORTED, s, rng, pools)
        if bad:
            kind, cand = bad
            if rng.random() < 0.33:
                cand, kind = synonyms(cand, rng, pools) or cand, kind + "+synonym"
            pairs.append(Pair(s, cand, context, "distorted", kind, source))
        if rng.random() < 0.25:
            same = by_source[source] if len(by_source[source]) > 1 and rng.random() < 0.5 else pools["sentences"]
            other = rng.choice(same)
            if other != s:
                pairs.append(Pair(s, other, context, "missing", "unrelated", source))
    return pairs


def _names(items: Sequence[tuple[str, str]]) -> list[str]:
    names = {m.group(0) for _, s in items for m in _words(s)[1:]
             if m.group(0)[0].isupper() and m.group(0).isalpha() and m.group(0).lower() not in lx.STOPWORDS
             and m.group(0) not in _TITLES}
    return sorted(names) or ["Alex", "Sam"]
