"""What a sentence asserts done: each act the agent reports as happened, with its object, one per
clause ("Pushed release/2.1 and opened the pull request" asserts two acts).

An *assertion* is a claiming word and the words around it in its clause:
- `act`: a past form of a verb, in any voice or tense ("opened", "has been sent", "was refunded",
  "backed up", "Rolled back"): its candidate verbs are read off its form, so a verb no list holds
  ("rotated", "reverted") is read too;
- `state`: a result state of particular acts after a copula or a verb of motion ("the PR is open",
  "PR #57 is up", "the email went out", "v2 is live", "checkout-api is back up");
- `done`: a result of any act ("Refund done", "Cancellation complete", "the transfer went through",
  "your stay is all set", "the reservation now includes two bags"), whose object names the act.

Its words: `head` (the clause's words before the claiming word, and the first words after it up
to a preposition: the subject and the direct object), `context` (the clause's other words) and
`values` (identifiers, paths, amounts: "#57", "release/2.1", "INV-2291").

Nothing is asserted by a question, a sentence opened by "Unfortunately", or a clause holding a
failure ("failed", "could not", "timed out"), a negation or an intention before the claiming word
("was not sent", "I will open", "once it is merged", "should be back"), an infinitive ("to be
sent"), a description ("the updated booking"), another person's act ("you sent"), or a clause
taken back by the next ("The email was sent, but it bounced").

Linear in the text: one pass of `str.split` for the words (no regular expression), then a bounded
look at each clause's words; a text is read up to MAX_SENTENCES sentences of MAX_SENTENCE characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judge.text.claim_tokens import Tok, sentence_groups, tokens
from judge.text.claim_words import (
    BETWEEN,
    BOUNDARIES,
    CONDITION_OPENERS,
    COPULAS,
    DETERMINERS,
    FAILURE_PHRASES,
    FAILURE_WORDS,
    GENERIC_PHRASES,
    GENERIC_STATES,
    HEADLINE,
    INTENTIONS,
    IRREGULAR_PAST,
    LOCATIONS,
    MARKERS,
    NEGATIONS,
    NOT_AGENTS,
    NOW_VERBS,
    PARTICLES,
    PHRASE_STATES,
    PRONOUNS,
    SAME_PAST,
    SENTENCE_HEDGES,
    STATES,
)
from judge.text.lexicon import STOPWORDS

_PREPOSITIONS = frozenset("""to for with on in at from about into by via after before as under over onto
off through than like per within until""".split())
_AUXILIARIES = frozenset("has have had been was were is are be got get 's 're 've".split())
_APPLY_BACK = frozenset("but and though however ,".split())
LOOK_BACK = 6  # words looked back from a claiming word for a negation
SUBJECT = 5  # content words before a claiming word read as its subject ("the $45.00 refund for order 1042")
MAX_SENTENCE = 2000  # characters of a sentence read (a longer one is read up to here)
MAX_SENTENCES = 400  # sentences of a text read (a claim further on in a longer text is not seen)


@dataclass(frozen=True)
class Assertion:
    """One act asserted done (module docstring)."""

    word: str
    kind: str  # "act", "state" or "done"
    lemmas: frozenset[str]  # act: the verbs its form may be of; state: the acts that leave the state
    families: frozenset[str]  # state: the verb families whose acts leave it
    head: tuple[str, ...]
    context: tuple[str, ...]
    values: tuple[str, ...]
    start: int  # the claiming word's offsets in the sentence
    end: int
    clause: str  # the clause's text (its identifiers say which call it is about)
    sentence: str
    marked: bool = False  # "successfully" beside it: a completed act whatever its verb


class _Clause:
    """A clause's words and what opened it (a plain class: see claim_tokens.Tok)."""

    __slots__ = ("toks", "opener")

    def __init__(self, toks: list[Tok], opener: str) -> None:
        self.toks = toks
        self.opener = opener  # the boundary word or mark before it ("" for the sentence's first)


def _clauses(toks: list[Tok]) -> list[_Clause]:
    clauses: list[_Clause] = [_Clause([], "")]
    for i, tok in enumerate(toks):
        boundary = tok.word in BOUNDARIES or (tok.word == "that" and bool(clauses[-1].toks))
        if tok.mark or boundary:
            opener = tok.word if boundary else tok.mark
            if clauses[-1].toks or i == 0:
                clauses.append(_Clause([], opener))
            else:
                clauses[-1].opener = opener
            if boundary:
                continue
        clauses[-1].toks.append(tok)
    return [c for c in clauses if c.toks]


def past_lemmas(word: str, before: str) -> frozenset[str]:
    """The verbs a past form may be of ("rotated" -> rotate/rotat, "canceled" -> cancel), or empty
    when the word is no past form."""
    auxiliary = before in _AUXILIARIES or before.endswith(("'ve", "'s", "'d", "'re"))
    if word in IRREGULAR_PAST and (word not in SAME_PAST or auxiliary):
        return frozenset({IRREGULAR_PAST[word]})
    if word in SAME_PAST:
        return frozenset({word}) if auxiliary else frozenset()
    if len(word) < 5 or not word.endswith("ed") or not word.isalpha():
        return frozenset()
    stem = word[:-2]
    found = {stem, word[:-1]}
    if len(stem) > 3 and stem[-1] == stem[-2]:
        found.add(stem[:-1])  # dropped, cancelled
    if stem.endswith("i"):
        found.add(stem[:-1] + "y")  # notified
    if word.startswith("re") and len(word) > 6:
        found |= {f[2:] for f in found}
    return frozenset(found)


def _copula_before(words: list[str], i: int) -> bool:
    j = i - 1
    while j >= 0 and words[j] in BETWEEN:
        j -= 1
    return j >= 0 and (words[j] in COPULAS or words[j].endswith(("'s", "'re")) or bool(past_lemmas(words[j], "")))


_PADDED_FAILURES = tuple(f" {phrase} " for phrase in FAILURE_PHRASES)  # as `_failed` looks for them
_PHRASE_FIRST = frozenset(p[0] for p in GENERIC_PHRASES) | frozenset(p[0] for p in PHRASE_STATES) | {"in", "on"}
_SINGLE = GENERIC_STATES | frozenset(STATES) | {"now"}
_MAYBE = _SINGLE | _PHRASE_FIRST | frozenset(IRREGULAR_PAST) | SAME_PAST  # and every word ending in -ed
Claiming = tuple[str, frozenset[str], frozenset[str], int]  # (kind, lemmas, families, words it spans)


def _claiming(words: list[str], i: int) -> Claiming | None:
    """Whether word i claims an act: (kind, lemmas, families, words it spans)."""
    word = words[i]
    if word in _PHRASE_FIRST:
        found = _phrase(words, i)
        if found is not None:
            return found
    before = words[i - 1] if i else ""
    lemmas = past_lemmas(word, before)
    if lemmas:
        if "pass" in lemmas and i > 0:  # "tests passed": the state of a test run
            families, verbs = STATES["pass"]
            return "state", verbs, families, 1
        if before in DETERMINERS:
            return None  # "the updated booking": a description
        after = words[i + 1] if i + 1 < len(words) else ""
        if after in PARTICLES:
            lemmas = lemmas | {lemma + after for lemma in lemmas}
        return ("done" if word in GENERIC_STATES else "act"), lemmas, frozenset(), 1
    return _single(words, i, word, before) if word in _SINGLE else None


def _phrase(words: list[str], i: int) -> Claiming | None:
    """A claim said in several words from word i ("is all set", "is on its way", "is in your inbox")."""
    for phrase in GENERIC_PHRASES:
        if tuple(words[i:i + len(phrase)]) == phrase and (i == 0 or _copula_before(words, i) or phrase[0] == "taken"):
            return "done", frozenset(), frozenset(), len(phrase)
    for phrase, state in PHRASE_STATES.items():
        if tuple(words[i:i + len(phrase)]) == phrase and i > 0 and _copula_before(words, i):
            families, verbs = STATES[state]
            return "state", verbs, families, len(phrase)
    if words[i] in ("in", "on") and i > 0 and _copula_before(words, i):
        place = next((w for w in words[i + 1:i + 4] if w in LOCATIONS), None)
        if place is not None:  # "is in your inbox"
            families, verbs = STATES[LOCATIONS[place]]
            return "state", verbs, families, 1
    return None


def _single(words: list[str], i: int, word: str, before: str) -> Claiming | None:
    """A result state or a result of any act in one word ("is open", "tests pass", "Refund done")."""
    if word in STATES and word not in ("pass", "passes"):
        if _copula_before(words, i):
            families, verbs = STATES[word]
            return "state", verbs, families, 1
        return None
    if word in ("pass", "passes") and i > 0 and before not in STOPWORDS and before not in DETERMINERS:
        families, verbs = STATES[word]
        return "state", verbs, families, 1
    if word in GENERIC_STATES and (_copula_before(words, i) or (word in HEADLINE and i > 0 and _noun(before))):
        return "done", frozenset(), frozenset(), 1
    if word in HEADLINE and len(words) == 1:  # a headline ("Done: ..."): its object is the next clause's subject
        return "done", frozenset(), frozenset(), 1
    if word == "now" and i > 0 and (_copula_before(words, i) or i + 1 < len(words) and words[i + 1] in NOW_VERBS):
        return "done", frozenset(), frozenset(), 1
    return None


def _content(tok: Tok) -> str:
    word = tok.word.split("'")[0]
    if word in STOPWORDS or word in DETERMINERS or word in COPULAS or word in PRONOUNS or len(word) < 2:
        return ""
    return word


def _failed(words: list[str]) -> bool:
    """A failure word or phrase, or a negated auxiliary ("couldn't"), in the clause."""
    if not FAILURE_WORDS.isdisjoint(words):
        return True
    padded = f" {' '.join(words)} "
    return "n't " in padded or any(phrase in padded for phrase in _PADDED_FAILURES)


def _blocked(words: list[str], i: int, kind: str) -> bool:
    """A negation, an intention or an infinitive before word i in its clause, a description or
    another person's act."""
    before = words[:i]
    if any(w in NEGATIONS or w.endswith("n't") for w in before[-LOOK_BACK:]):
        return True
    if any(w in INTENTIONS or w.endswith(("'ll", "'d")) for w in before):
        return True
    if before and before[-1] == "to" or len(before) >= 2 and before[-2] == "to" and before[-1] in ("be", "get", "have"):
        return True
    if kind != "act" or not before:
        return False
    if before[-1] in NOT_AGENTS:
        return True
    after = words[i + 1] if i + 1 < len(words) else ""
    return _noun(before[-1]) and _noun(after)  # "airline cancelled flight": a third party's act


def _noun(word: str) -> bool:
    """A word that may be a noun of a clause: no function word, adverb, preposition or particle."""
    return word.isalpha() and len(word) > 1 and word not in STOPWORDS and word not in BETWEEN and \
        word not in _PREPOSITIONS and word not in PARTICLES and not word.endswith("ly") and word not in COPULAS


def _taken_back(clauses: list[_Clause], at: int) -> bool:
    """The next clause takes the claim back: "..., but it bounced"."""
    if at + 1 >= len(clauses):
        return False
    after = clauses[at + 1]
    words = [t.word for t in after.toks]
    return after.opener in _APPLY_BACK and words[0] in PRONOUNS and _failed(words)


def assertions(sentence: str) -> list[Assertion]:
    """The acts `sentence` asserts done, in order (module docstring)."""
    sentence = sentence[:MAX_SENTENCE]
    return _asserted(tokens(sentence), sentence, 0, question=sentence.rstrip().endswith("?"))


def _asserted(toks: list[Tok], sentence: str, base: int, question: bool) -> list[Assertion]:
    """The assertions of one sentence's tokens (their offsets less `base` are the sentence's)."""
    if question or not toks or toks[0].word in SENTENCE_HEDGES:
        return []
    clauses = _clauses(toks)
    out: list[Assertion] = []
    previous = (-1, 0)  # the previous clause and its first claiming word: the subject it may share
    for at, clause in enumerate(clauses):
        words = [t.word for t in clause.toks]
        if not any(w in _MAYBE or w.endswith("ed") for w in words):  # no claiming word: nothing to read
            previous = (at, len(words))
            continue
        if _passed_over(clauses, at, words):
            previous = (-1, 0)
            continue
        found, first = _in_clause(clause, words, clauses, previous, clauses[at + 1] if at + 1 < len(clauses) else None,
                                  sentence, base)
        out.extend(found)
        previous = (at, first)
    return out


def _passed_over(clauses: list[_Clause], at: int, words: list[str]) -> bool:
    """A clause that asserts nothing and shares no subject: an exception, a condition, a failure,
    or one the next clause takes back."""
    clause = clauses[at]
    return clause.opener == "except" or words[0] in CONDITION_OPENERS or clause.opener in CONDITION_OPENERS \
        or _failed(words) or _taken_back(clauses, at)


def _shared(clauses: list[_Clause], previous: tuple[int, int]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The previous clause's subject and values (its words before its first claiming word), or none
    when it was passed over. Made only when a claim needs them: most clauses are never asked."""
    at, first = previous
    if at < 0 or _passed_over(clauses, at, [t.word for t in clauses[at].toks]):
        return (), ()
    toks = clauses[at].toks[:first]
    return tuple(w for w in map(_content, toks) if w), tuple(t.value for t in toks if t.value)


def _in_clause(clause: _Clause, words: list[str], clauses: list[_Clause], previous: tuple[int, int],
               following: _Clause | None, sentence: str, base: int) -> tuple[list[Assertion], int]:
    """The clause's assertions, and the index of its first claiming word (its subject ends there)."""
    out: list[Assertion] = []
    every: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    start, end = clause.toks[0].start - base, clause.toks[-1].end - base
    first = len(words)
    i = 0
    while i < len(words):
        claim = _claiming(words, i) if words[i] in _MAYBE or words[i].endswith("ed") else None
        if claim is None:
            i += 1
            continue
        first = min(first, i)
        kind, lemmas, families, span = claim
        if not _blocked(words, i, kind):
            if not out:  # the clause's words, read once it asserts something
                every = tuple(w for w in map(_content, clause.toks) if w)
                values = tuple(t.value for t in clause.toks if t.value)
            head = _head(clause.toks, i, span, kind == "act" or i > 0 and bool(past_lemmas(words[i - 1], "has")))
            more, said = values, sentence[start:end]
            if not any(_content(t) for t in clause.toks[:i]) and clause.opener in (":", "and", "but", ",", "then"):
                shared = _shared(clauses, previous)
                head, more = shared[0] + head, shared[1] + values  # "Confirmation email: sent", "resolved and closed"
            if not head and following is not None and following.opener == ":":  # "Booked: UA 512"
                named = following.toks if kind != "done" else following.toks[:_first_claiming(following)]
                head = tuple(w for w in map(_content, named) if w)  # "Done: the refund for A-20931 ...": its subject
                more = values + tuple(t.value for t in named if t.value)
                if named:  # the claim's clause reaches over the object it names (its identifiers say which call)
                    said = sentence[start:named[-1].end - base]
            context = tuple(w for w in every if w not in head and w != words[i])
            marked = any(w in MARKERS for w in words[max(0, i - 2):i + 2])
            out.append(Assertion(words[i], kind, lemmas, families, head, context, more,
                                 clause.toks[i].start - base, clause.toks[i + span - 1].end - base,
                                 said, sentence, marked))
        i += span
    return out, first


def _first_claiming(clause: _Clause) -> int:
    """The index of the clause's first claiming word (its length when it has none)."""
    words = [t.word for t in clause.toks]
    return next((i for i, w in enumerate(words) if (w in _MAYBE or w.endswith("ed")) and _claiming(words, i)),
                len(words))


def _head(toks: list[Tok], i: int, span: int, acts: bool) -> tuple[str, ...]:
    """The subject (the clause's last content words before word i) and, for an act, the direct
    object (up to four content words after it, before a preposition other than `of`); a state has
    none ("the PR is open and ready") unless a verb leaves it ("put up a pull request")."""
    head = [w for w in map(_content, toks[max(0, i - 2 * SUBJECT):i]) if w][-SUBJECT:]
    taken = 0
    for tok in toks[i + span:] if acts else ():
        if tok.word in _PREPOSITIONS or past_lemmas(tok.word, "") or taken >= 4:
            break
        word = _content(tok)
        if word and word not in PARTICLES:
            head.append(word)
            taken += 1
    return tuple(head)


_LAST: list[Any] = ["", []]  # the last text read and its assertions (every rule reads the same message)


def assertions_in(text: str) -> list[Assertion]:
    """Every assertion of every sentence of `text` (the last text's answer is kept: each rule on an
    assistant message asks about the same text)."""
    if _LAST[0] is text:
        return list(_LAST[1])
    found = []
    for start, end, toks in sentence_groups(text or "")[:MAX_SENTENCES]:
        if end - start > MAX_SENTENCE:
            end = start + MAX_SENTENCE
            toks = [t for t in toks if t.end <= end]
        found.extend(_asserted(toks, text[start:end], start, question=bool(toks) and toks[-1].ends == "?"))
    _LAST[0], _LAST[1] = text, found
    return list(found)
