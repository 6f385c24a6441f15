"""Lexical alignment of a reference statement and a candidate text: tokens, diff spans and cues.

The method is the alignment-feature recipe of FactCC and of QA-free consistency metrics (Kryscinski
et al. 2020; Laban et al. 2022, SummaC): align the candidate with the reference, then read what
changed. Tokens are compared by a light stem (`stem`), so "offers" and "offer" align. A
`difflib.SequenceMatcher` diff gives the replaced, inserted and deleted spans; sets of content
words give what was lost or added regardless of word order. Cues are counted on those:

- numbers (digits and number words, "fifty-five" = 55), names (capitalised words not at a sentence
  start), time words, quantifiers: lost from the reference or new in the candidate;
- negation: a different count of negation words ("not", "never", "without", "lack"...);
- antonyms and category swaps (judge.text.lexicon), and un-/in-/dis- prefixes ("necessary" ->
  "unnecessary"), between a lost and a new word;
- unsupported content: candidate words found neither in the reference nor in `context` (the other
  ledger facts), and the longest inserted or deleted run.

Embedding similarities of the same spans are added by judge.text.consistency; this module is pure
Python so it can be tested without a model.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field

from judge.text import lexicon as lx

_TOKEN = re.compile(r"\$?\d+(?:[.,:/]\d+)*%?|[A-Za-z]+(?:-[A-Za-z]+)*|['’][a-z]+")
_NEG_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non", "non-")
_ANTONYM = {frozenset(p) for p in lx.ANTONYMS}
_CATEGORY: dict[str, set[int]] = {}
for _i, _group in enumerate(lx.CATEGORIES):
    for _w in _group:
        _CATEGORY.setdefault(_w, set()).add(_i)


@dataclass(frozen=True)
class Token:
    text: str  # as written
    norm: str  # lower case
    stem: str
    initial: bool  # first token of its sentence


@dataclass
class Alignment:
    """What changed from `ref` to `cand`: diff spans and the cue words each side lost or added."""

    ref: list[Token]
    cand: list[Token]
    replaced: list[tuple[str, str]] = field(default_factory=list)  # (ref span, cand span) with content
    cues: dict[str, float] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)


def normalise(text: str) -> str:
    text = re.sub(r"\bcan['’]?t\b|\bcannot\b", "can not", text or "", flags=re.IGNORECASE)
    text = re.sub(r"\bwon['’]t\b", "will not", text, flags=re.IGNORECASE)
    return re.sub(r"n['’]t\b", " not", text, flags=re.IGNORECASE)


def stem(word: str) -> str:
    """A light suffix stripper (plural, -ed, -ing, -ly): enough to align inflected forms."""
    w = word.lower()
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("ly", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            w = w[: len(w) - len(suffix)] + keep
            break
    return w[:-1] if w.endswith("e") and len(w) > 3 else w


def tokens(text: str) -> list[Token]:
    out: list[Token] = []
    for sentence in re.split(r"(?<=[.!?])\s+", normalise(text)):
        for i, match in enumerate(_TOKEN.finditer(sentence)):
            raw = match.group(0)
            if raw[0] in "'’":
                continue  # possessive 's and the like
            out.append(Token(raw, raw.lower(), stem(raw), i == 0))
    return out


def is_content(tok: Token) -> bool:
    return tok.norm not in lx.STOPWORDS and tok.norm not in lx.NEGATIONS and len(tok.norm) > 1


def number_value(tok: Token) -> float | None:
    """The number a token stands for: digits, number words, hyphenated ("fifty-five")."""
    text = tok.norm.lstrip("$").rstrip("%").replace(",", "")
    try:
        return float(text)
    except ValueError:
        pass
    parts = text.split("-")
    if all(p in lx.NUMBER_WORDS for p in parts):
        return float(sum(lx.NUMBER_WORDS[p] for p in parts))
    return float(lx.ORDINALS[text]) if text in lx.ORDINALS else None


def is_name(tok: Token) -> bool:
    """A capitalised word not at the start of a sentence, or an identifier mixing letters and
    digits or with inner capitals ("BestInsuranceXYZ", "XXX")."""
    text = tok.text
    if not text[:1].isalpha() or tok.norm in lx.STOPWORDS or tok.norm in lx.NUMBER_WORDS:
        return False
    inner_caps = any(c.isupper() for c in text[1:])
    return inner_caps or (text[0].isupper() and not tok.initial)


def _values(toks: list[Token]) -> set[float]:
    return {v for v in (number_value(t) for t in toks) if v is not None}


def _names(toks: list[Token]) -> set[str]:
    return {t.norm for t in toks if is_name(t)}


def _stems(toks: list[Token], pred=is_content) -> set[str]:
    return {t.stem for t in toks if pred(t)}


def _negations(toks: list[Token]) -> int:
    return sum(t.norm in lx.NEGATIONS for t in toks)


def opposed(a: str, b: str) -> bool:
    """Antonyms in the lexicon, or one is the other with a negating prefix ("unnecessary")."""
    if frozenset((a, b)) in _ANTONYM or frozenset((stem(a), stem(b))) in _ANTONYM:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and any(long_ == p + short for p in _NEG_PREFIXES)


def same_category(a: str, b: str) -> bool:
    return a != b and bool(_CATEGORY.get(a, set()) & _CATEGORY.get(b, set()))


def _runs(ops, side: str, r: list[Token], c: list[Token]) -> int:
    """Longest run of content words deleted (side 'ref') or inserted (side 'cand') by one
    operation of the diff, net of the content words it puts in their place."""
    best = 0
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        ref_n = sum(is_content(t) for t in r[i1:i2])
        cand_n = sum(is_content(t) for t in c[j1:j2])
        best = max(best, (ref_n - cand_n) if side == "ref" else (cand_n - ref_n))
    return best


def align(ref: str, cand: str, context: str = "") -> Alignment:
    """Diff `cand` against `ref` and count the cues (see the module doc). `context`: other text the
    candidate may draw on without adding unsupported content (the other facts of the ledger)."""
    r, c, ctx = tokens(ref), tokens(cand), tokens(context)
    al = Alignment(r, c)
    ops = difflib.SequenceMatcher(a=[t.stem for t in r], b=[t.stem for t in c], autojunk=False).get_opcodes()
    changed = 0
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        changed += i2 - i1
        if tag == "replace" and any(is_content(t) for t in r[i1:i2] + c[j1:j2]):
            al.replaced.append((" ".join(t.text for t in r[i1:i2]), " ".join(t.text for t in c[j1:j2])))
    ref_content, cand_content = _stems(r), _stems(c)
    support = ref_content | _stems(ctx)
    lost = ref_content - _stems(c, lambda t: True)
    new = cand_content - support
    lost_words = {t.norm for t in r if t.stem in lost}
    new_words = {t.norm for t in c if t.stem in new}
    cue = al.cues
    cue["ref_lost_frac"] = len(lost) / max(1, len(ref_content))
    cue["cand_new_frac"] = len(new) / max(1, len(cand_content))
    cue["n_lost"] = math.log1p(len(lost))
    cue["n_new"] = math.log1p(len(new))
    cue["num_lost"] = float(len(_values(r) - _values(c)))
    cue["num_new"] = float(len(_values(c) - _values(r) - _values(ctx)))
    cue["name_lost"] = float(len(_names(r) - {t.norm for t in c}))
    cue["name_new"] = float(len(_names(c) - {t.norm for t in r + ctx}))
    cue["time_changed"] = float(len(({t.norm for t in r} ^ {t.norm for t in c}) & lx.TIME_WORDS))
    cue["quant_changed"] = float(len(({t.norm for t in r} ^ {t.norm for t in c}) & lx.QUANTIFIERS))
    cue["neg_diff"] = float(abs(_negations(r) - _negations(c)))
    cue["neg_parity"] = float(_negations(r) % 2 != _negations(c) % 2)
    swaps = _swaps(ops, r, c) | {(a, b) for a in lost_words for b in new_words}
    cue["antonym"] = float(sum(opposed(a, b) for a, b in swaps))
    cue["category_swap"] = float(sum(same_category(a, b) for a, b in swaps))
    cue["n_replace"] = math.log1p(len(al.replaced))
    cue["insert_run"] = float(_runs(ops, "cand", r, c))
    cue["delete_run"] = float(_runs(ops, "ref", r, c))
    cue["len_ratio"] = math.log((len(c) + 1) / (len(r) + 1))
    cue["changed_frac"] = changed / max(1, len(r))
    cue["name_order"] = float(_name_order(r, c))
    hard = ("num_lost", "num_new", "name_lost", "name_new", "time_changed", "quant_changed",
            "neg_parity", "antonym", "category_swap", "name_order")
    cue["any_hard"] = float(any(cue[k] for k in hard))
    al.reasons = _reasons(r, c, ctx, swaps, cue)
    return al


def edit_shape(ref: str, cand: str) -> tuple[float, int]:
    """How `cand` reads as an *edit* of `ref`: the share of the reference's tokens it keeps in the
    same order (the diff's equal blocks), and its longest rewritten run (the largest side of a
    replace operation, in tokens). A copy, or a copy with a clause inserted or a word swapped, keeps
    most tokens with short rewrites; a restatement in other words rewrites long runs ("no further
    refund may be drafted" -> "nothing more is drafted")."""
    r, c = [t.stem for t in tokens(ref)], [t.stem for t in tokens(cand)]
    if not r:
        return 0.0, 0
    matcher = difflib.SequenceMatcher(a=r, b=c, autojunk=False)
    kept = sum(b.size for b in matcher.get_matching_blocks()) / len(r)
    rewrite = max([max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag == "replace"],
                  default=0)
    return kept, rewrite


def _name_order(r: list[Token], c: list[Token]) -> bool:
    """The same names in another order ("Ann asks Bob" -> "Bob asks Ann"): roles swapped."""
    def caps(toks: list[Token]) -> set[str]:  # names, sentence-initial ones included
        return {t.norm for t in toks if t.text[:1].isupper() and t.norm not in lx.STOPWORDS}
    shared = caps(r) & caps(c)
    first = [t.norm for t in r if t.norm in shared]
    second = [t.norm for t in c if t.norm in shared]
    return len(shared) >= 2 and list(dict.fromkeys(first)) != list(dict.fromkeys(second))


def _all(toks: list[Token]) -> set[str]:
    return {t.norm for t in toks}


def _swaps(ops, r: list[Token], c: list[Token]) -> set[tuple[str, str]]:
    """Word pairs a replace operation of the diff puts face to face."""
    return {(a.norm, b.norm) for tag, i1, i2, j1, j2 in ops if tag == "replace"
            for a in r[i1:i2] for b in c[j1:j2] if a.norm != b.norm}


def _reasons(r, c, ctx, swaps, cue) -> list[str]:
    """Readable evidence for a report: which cue words changed."""
    out = []
    for number in sorted(_values(r) - _values(c)):
        out.append(f"number {number:g} not kept")
    for number in sorted(_values(c) - _values(r) - _values(ctx)):
        out.append(f"number {number:g} added")
    out += [f"name {n!r} not kept" for n in sorted(_names(r) - _all(c))]
    out += [f"name {n!r} added" for n in sorted(_names(c) - _all(r + ctx))]
    if cue["neg_parity"]:
        out.append("negation added or removed")
    if cue["name_order"]:
        out.append("names in another order (roles swapped?)")
    pairs = sorted((a, b) for a, b in swaps if opposed(a, b) or same_category(a, b))
    out += [f"{a!r} became {b!r}" for a, b in pairs]
    return out
