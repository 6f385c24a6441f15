"""Policy entries from a written policy: one entry per sentence that obliges or forbids, citing it.

A policy document speaks to the agent ("you must obtain explicit user confirmation before ...",
"Basic economy flights cannot be modified", "Do not refund more than $50 without asking"). Each
sentence (judge.draft.policy_doc) is read with the user-message cue tables (judge.draft.clauses,
restrictions, limits) and three cues of the agent's voice:
- a confirmation the agent must obtain ("obtain explicit user confirmation", "ask the user for
  approval", "confirm with the customer") before the actions the sentence names ("booking,
  modifying flights, editing baggage"): a confirm-before `permission`;
- a prohibition in the passive ("Basic economy flights cannot be modified"): a `constraint` whose
  object is the sentence's subject;
- values that must come from the records ("All payment methods must already be in user profile"):
  a `constraint` the `grounded` rule checks.
A sentence under a condition ("If the status is flying, ... cannot be booked", "Do not offer these
unless ...") depends on state the drafter cannot read: it becomes an entry for the judge, with a
note, and no rule. Descriptive sentences with values ("Each extra baggage is 50 dollars") are facts.
"""

from __future__ import annotations

import re

from judge.draft import sensitivity
from judge.draft.clauses import split_sentence
from judge.draft.facts import facts_in
from judge.draft.items import Draft, Entry, Evidence
from judge.draft.lexicon import content_words, family_of, snake, verb_of
from judge.draft.limits import limit_in
from judge.draft.policy_doc import PolicyDocument, PolicySentence
from judge.draft.restrictions import sentence_entries
from judge.draft.values import find_values

_WHO = r"(?:the\s+)?(?:user|customer|client|caller|requester)(?:'s)?\s+"
OBTAIN = re.compile(
    r"\b(?:obtain|get|receive|require[sd]?|needs?|ask\s+for|seek|wait\s+for|have)\s+(?:the\s+)?(?:an?\s+)?"
    r"(?:" + _WHO + r")?(?:explicit\s+|written\s+|prior\s+|verbal\s+|clear\s+)?(?:user\s+|customer\s+)?"
    r"(?:confirmation|approval|consent|permission|authori[sz]ation|go-ahead)\b"
    r"|\bconfirm\s+with\s+the\s+(?:user|customer)\b"
    r"|\bask\s+the\s+(?:user|customer)\s+(?:to\s+confirm|for\s+(?:confirmation|approval|permission))\b"
    r"|\b(?:only\s+)?(?:after|once|when)\s+the\s+(?:user|customer)\s+(?:has\s+)?(?:confirm|approve|agree)[ds]?\b",
    re.IGNORECASE)
PASSIVE_NO = re.compile(
    r"\b(?:cannot|can't|can\s+not|must\s+not|mustn't|may\s+not|should\s+not|shouldn't|shall\s+not|"
    r"(?:is|are)\s+not\s+to|(?:is|are)\s+never\s+to)\s+be\s+([a-z]+)\b", re.IGNORECASE)  # not "will not be": news
FROM_RECORDS = re.compile(
    r"\bmust\s+(?:already\s+)?(?:be|come\s+from|exist)\s+(?:in|from|on)\s+(?:the\s+)?"
    r"(?:(?:user|customer|client)(?:'s)?\s+)?(?:profile|account|records?|file|database|system)\b", re.IGNORECASE)
CONDITION = re.compile(r"^\s*(?:if|when|whenever|unless|otherwise|in case)\b|\bunless\b|\bonly if\b|\bif and only if\b",
                       re.IGNORECASE)
_NOT_ACTIONS = {"confirm", "approve", "ask", "obtain", "get", "take", "have", "need", "list", "check", "say", "tell",
                "give", "wait", "let", "do", "keep", "make"}
# Words for the same action as a verb the tools are named by ("upgrading cabin class" updates it).
SYNONYMS = {"upgrade": "update", "downgrade": "update", "amend": "update", "alter": "update", "issue": "send",
            "grant": "create"}


def actions(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """(verb, object words) of every action a sentence names, in order: "booking, modifying flights,
    editing baggage" -> (book, ()), (modify, (flights,)), (edit, (baggage,))."""
    out: list[tuple[str, tuple[str, ...]]] = []
    pieces = re.split(r"[,;:()]|\s+(?:or|and)\s+", text)
    for piece in pieces:
        words = re.findall(r"[A-Za-z][\w'-]*", piece)
        for i, word in enumerate(words):
            verb = _verb(word)
            if verb is None and _stems(word):  # "placing an order": place_order may be named by it
                verb = "|".join((word.lower(), *_stems(word)))
            elif verb is None or verb in _NOT_ACTIONS or family_of(verb) in (None, "read", "use"):
                continue
            objects = [w for w in content_words(" ".join(words[i + 1:i + 4])) if verb_of(w) is None]
            out.append((verb, tuple(objects)))
            break
    return list(dict.fromkeys(out))


_AT_MOST = re.compile(r"\b(?:at most|no more than|not more than|up to|a maximum of)\s+"
                      r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)\b", re.IGNORECASE)


def _verb(word: str) -> str | None:
    """The canonical verb of a word, participles in -ied included ("modified" -> modify)."""
    verb = verb_of(word) or (verb_of(word[:-3] + "y") if word.lower().endswith("ied") else None)
    return SYNONYMS.get(verb or "", verb)


def _stems(word: str) -> tuple[str, ...]:
    """Base forms a gerund may have ("placing" -> plac, place; "shipping" -> shipp, ship)."""
    w = word.lower()
    if not w.endswith("ing") or len(w) < 6 or w in ("during", "nothing", "anything", "everything", "something"):
        return ()
    base = w[:-3]
    return tuple(dict.fromkeys((base, base + "e", base[:-1] if base[-1:] == base[-2:-1] else base)))


def _evidence(doc: PolicyDocument, sentence: PolicySentence) -> Evidence:
    return Evidence(f"{doc.path.rsplit('/', 1)[-1]}:{sentence.line}", 0, "policy", sentence.text, sentence.section)


def _entry(key: str, class_: str, sentence: PolicySentence, evidence: Evidence, mode: str, **fields) -> Entry:
    return Entry(key=key, class_=class_, value=sentence.text.rstrip("."), turn=0, evidence=[evidence],
                 persistence="session", mode=mode, **fields)


def _subject(text: str, end: int) -> tuple[str, ...]:
    """The subject's content words before `end` (after a short head: "Change flights: Basic ...")."""
    head = text[:end]
    head = head.rsplit(":", 1)[-1]
    return tuple(w for w in content_words(head) if (verb := verb_of(w)) is None or family_of(verb) is None)


def sentence_policy(doc: PolicyDocument, sentence: PolicySentence) -> list[Entry]:
    """The entries one sentence of the policy states (see the module docstring)."""
    text, evidence = sentence.text, _evidence(doc, sentence)
    conditional = bool(CONDITION.search(text))
    out: list[Entry] = []
    if found := OBTAIN.search(text):
        verbs = actions(text[:found.start()] + " " + text[found.end():])
        entry = _entry("confirm_before_" + (verbs[0][0].split("|")[0] if verbs else "acting"), "permission",
                       sentence, evidence,
                       "confirm", verbs=tuple(v for v, _ in verbs), objects=tuple(o for _, objs in verbs for o in objs))
        entry.policy_actions = verbs
        out.append(entry)
    elif match := PASSIVE_NO.search(text):
        verb = _verb(match.group(1))
        subject = _subject(text, match.start()) + tuple(  # "... cannot be changed after the count is final"
            w for w in content_words(text[match.end():]) if verb_of(w) is None)
        entry = _entry("no_" + "_".join(filter(None, [verb or "", snake(" ".join(subject), 3)])), "constraint",
                       sentence, evidence, "prohibit", verbs=(verb,) if verb and family_of(verb) else (),
                       objects=subject)
        entry.policy_actions = [(verb, subject)] if verb and family_of(verb) else []
        out.append(entry)
    elif found := FROM_RECORDS.search(text):
        subject = _subject(text, found.start())
        out.append(_entry(snake(" ".join(subject), 3) + "_on_record", "constraint", sentence, evidence, "grounded",
                          objects=subject))
    else:
        values = find_values(text)
        bounded = limit_in(text, values, 0, evidence.event)
        if bounded is not None:
            bounded.evidence, bounded.persistence = [evidence], "session"
            out.append(bounded)
        else:
            entries, _ = sentence_entries(split_sentence(text, evidence.event, 0))
            for entry in entries:
                entry.evidence, entry.turn, entry.persistence = [evidence], 0, "session"
                entry.policy_actions = list(zip(entry.verbs, [entry.objects] * len(entry.verbs), strict=False))
                if entry.mode == "permit" and _AT_MOST.search(text):  # "can use at most one certificate"
                    entry.class_, entry.mode, entry.key = "constraint", "count", snake(" ".join(entry.objects), 3)
                    entry.note("a bound on how many: no rule kind counts the elements of an argument; the judge "
                               "decides it")
            out += entries
            if not entries and not conditional:
                out += [f for f in facts_in(text, values, set(), 0, evidence.event)
                        if f.value_kind in ("date", "time", "amount")]
                for fact in out:
                    fact.evidence, fact.persistence = [evidence], "task"
    for entry in out:
        entry.conditional = conditional and entry.class_ != "fact"
        if entry.conditional:
            entry.note("the sentence holds a condition the drafter cannot check (if, unless, only if): no rule; the "
                       "judge decides it, or write the rule yourself")
    return out


def policy_draft(doc: PolicyDocument, policy_id: str) -> Draft:
    """Entries (turn 0) for every sentence of the document that states one; rules: judge.draft.policy_rules."""
    draft = Draft(scenario_id=policy_id, title=f"Drafted policy: {doc.title}", first_turn=0, last_turn=0, policy=True)
    for sentence in doc.sentences:
        for entry in sentence_policy(doc, sentence):
            same = next((e for e in draft.entries if e.class_ == entry.class_ and e.value == entry.value), None)
            if same is not None:
                continue
            entry.key = draft.new_key(entry.key or "policy")
            sensitivity.apply(entry)
            draft.entries.append(entry)
    return draft
