"""Whether a summary's words report where the work stands or say what it is for.

"The suite passes" reports a status; "Task: make the suite pass", "keep going until the suite
passes", "the job is done once the migration is finished", "the fix must be deployed" and "Deploy
the fix" say what is still to be reached. A summary that restates a pending action as its task
("Definition of done: one test account exists") keeps the action pending: reading its done words as
a status would call the action done (and flag a faithful summary `distorted`), and a task sentence
with no done or pending word would not count as speaking of the action at all (`missing`).

The prospective readings, with word lists a reviewer can read:
- an **aim label** opening a sentence or `;` clause ("Task:", "Goal for this step:", "Definition
  of done:", "What we are after:", "Remaining work:") covers the rest of that clause;
- an **imperative**: the sentence opens with an action verb in its base form and then its object
  ("Fix the crash", "Then add a regression test", "Book and pay the flight");
- a **directive, modal or aim phrase** before the word in its clause ("must", "should", "has to",
  "make sure", "get ... fixed", "the aim is that", "so that"), or a possibility ("may be created");
- a **subordinate clause of time or condition** around it ("until the test passes", "once the
  backup is taken", "the job is done when ...") unless that clause is in the past ("until it
  passed", "once the backup was taken": those report what happened).

Only the gate of a pending action uses `states_aim` (a sentence saying what is to be done speaks of
it as pending); a completed action restated as an aim is not said to be done (judge.summaries.rules).
"""

from __future__ import annotations

import itertools
import re

from judge.text import verbs

# An aim label: a noun phrase naming what the work is for, then a colon, at the start of a sentence,
# a `;` clause or after a spaced dash ("Ship the fix - done means: ...").
_AIM_LABEL = re.compile(
    r"(?:^|;|\s[-–—]\s)\s*(?:[a-z'-]+\s+){0,3}?"
    r"(?:tasks?|goals?|aims?|objectives?|targets?|mission|job|deliverables?|definition of done|"
    r"done (?:means|when|if)|success(?: criteria| criterion| means)?|acceptance criteria|"
    r"what (?:we are|we're|is|remains) (?:after|wanted|needed|left)|remaining(?: work)?|left to do|"
    r"still to do|to do|todo|next(?: steps?)?|outstanding|open items?|pending|expected outcome)"
    r"\b(?P<rest>[^:;.!?]{0,40}):", re.IGNORECASE)
# ... unless the label itself reports the aim reached ("Goal met:", "Task done:")
_LABEL_REACHED = re.compile(r"\b(?:met|done|reached|achieved|accomplished|complete|completed|finished)\b",
                            re.IGNORECASE)
# Before the word, anywhere in its clause: directives and aim phrases ...
_DIRECTIVE_BEFORE = re.compile(
    r"\b(?:must|should|shall|needs?|has to|have to|is to|are to|make sure|making sure|ensure|ensuring|"
    r"get|getting|make|making|in order to|so that|aims? to|aim is|goal is|task is|job is|point is|"
    r"objective is|expected to|supposed to|required to|meant to|intend(?:s|ed)? to|plan(?:s|ned)? to|"
    r"wants?)\b", re.IGNORECASE)
# ... right before it: a modal or "to", through "be" or "have been" ("may be created", "to be run")
_MODAL_RIGHT_BEFORE = re.compile(r"\b(?:may|might|could|can|will|would|should|must|to)\s+"
                                 r"(?:be\s+|have\s+been\s+|get\s+)?$", re.IGNORECASE)
# ... and subordinators of time or condition (prospective unless their clause is in the past).
_POSSIBILITY = re.compile(r"\b(?:may|might|could|can)\s+(?:be\s+|have\s+been\s+)?$", re.IGNORECASE)
_SUBORDINATOR = re.compile(r"\b(?:until|till|once|when|whenever|as soon as|after|before|by the time|if|unless)\b",
                           re.IGNORECASE)
_PAST_AUXILIARY = re.compile(r"\b(?:was|were|had|did)\b", re.IGNORECASE)
_PRESENT_AUXILIARY = re.compile(r"\b(?:is|are|be|been|being|has|have|gets?)\b", re.IGNORECASE)
_IRREGULAR_PAST = {"ran", "done", "taken", "built", "met", "made", "sent", "wrote", "written"}
_SCOPE_BREAK = re.compile(r"[.;:!?()]|\s[-–—]\s|\bbut\b", re.IGNORECASE)
_LOOK_BACK = 24  # words
WINDOW = 400  # characters read around a word: a summary is hostile text, and this keeps reading linear
_WORD = re.compile(r"[a-z]+(?:['’][a-z]+)?", re.IGNORECASE)

# An imperative: an opening action verb in its base form, then what it acts on.
_OPENERS = {"then", "first", "also", "finally", "please", "and", "next", "afterwards", "now", "just", "still"}
_OBJECT_START = {"the", "a", "an", "it", "them", "this", "that", "these", "those", "every", "each", "all", "both",
                 "one", "its", "our", "their", "any", "some", "up", "out", "off", "down", "another", "everything"}
_BASE_VERBS = frozenset(verbs.VERB_FAMILY) | frozenset(verbs.EXTRA_VERBS) | {
    "finish", "complete", "add", "land", "wait", "rerun", "compare", "ensure", "draft", "verify", "prepare"}


_SENTENCE_BREAK = re.compile(r"[.!?]\s+")


def _sentence_start(text: str, start: int) -> int:
    """Where the sentence holding text[start] begins (looked for within WINDOW characters)."""
    low = max(0, start - WINDOW)
    breaks = list(_SENTENCE_BREAK.finditer(text, low, start))
    return breaks[-1].end() if breaks else low


def _clause_before(text: str, start: int) -> str:
    """The clause before `start`: from the last scope break (sentence end, `;`, `:`, a bracket, a
    spaced dash, "but"), within WINDOW characters."""
    head = text[max(0, start - WINDOW):start]
    breaks = list(_SCOPE_BREAK.finditer(head))
    return head[breaks[-1].end():] if breaks else head


def _past(word: str, clause: str) -> bool:
    """Whether a clause of time or condition holding a done word reports the past: a past
    auxiliary, or the word in a past form with no present auxiliary in the clause ("until it
    passed", "once the backup was taken"; not "once a completed backup is taken")."""
    if _PAST_AUXILIARY.search(clause):
        return True
    w = word.lower()
    return (w.endswith("ed") or w in _IRREGULAR_PAST) and not _PRESENT_AUXILIARY.search(clause)


def _label_covers(sentence: str, offset: int) -> bool:
    """Whether an aim label before `offset` in `sentence` still covers it (no `;` in between)."""
    for match in _AIM_LABEL.finditer(sentence):
        if match.start() > offset:
            break
        if ";" not in sentence[match.end():offset] and not _LABEL_REACHED.search(match.group("rest")):
            return True
    return False


def imperative(sentence: str) -> bool:
    """Whether the sentence opens with an order: an action verb in its base form, after optional
    openers ("Then", "First") or a label ("Next:"), followed by its object or by "and" and another
    verb ("Fix the crash", "Book and pay the flight"; not "Order data may be stale")."""
    label = re.match(r"\s*[\w' -]{1,40}:\s", sentence)
    head = sentence[label.end():] if label else sentence
    words = [m.group(0).lower() for m in itertools.islice(_WORD.finditer(head, 0, 200), 6)]
    while words and words[0] in _OPENERS:
        words = words[1:]
    if len(words) < 2 or words[0] not in _BASE_VERBS:
        return False
    if words[1] == "and":
        return len(words) > 2 and words[2] in _BASE_VERBS
    return words[1] in _OBJECT_START


def prospective_at(text: str, start: int, end: int) -> bool:
    """Whether the word at text[start:end] says what is to be reached rather than a status: under
    an aim label, in an imperative sentence, after a directive or modal in its clause, or in (or
    before) a clause of time or condition that is not in the past."""
    begin = _sentence_start(text, start)
    sentence = text[begin:end + WINDOW]
    if _label_covers(sentence, start - begin) or imperative(sentence):
        return True
    clause = _clause_before(text, start)
    if _MODAL_RIGHT_BEFORE.search(clause) or _DIRECTIVE_BEFORE.search(" ".join(_WORD.findall(clause)[-_LOOK_BACK:])):
        return True
    # a clause of time or condition ends at a comma ("once a backup exists, and it has been taken")
    word, clause = text[start:end], clause.rsplit(",", 1)[-1]
    rest = _SCOPE_BREAK.split(text[end:end + WINDOW], maxsplit=1)[0].split(",", 1)[0]
    markers = list(_SUBORDINATOR.finditer(clause))
    if markers:  # "once a completed backup is taken", "until the test passes"
        return not _past(word, clause[markers[-1].end():] + word + rest)
    # "the job is done once the migration is finished": the status hangs on a clause after it
    follows = _SUBORDINATOR.search(rest)
    return bool(follows) and not _past(word, clause + word + rest)


def states_aim(sentence: str, done_words: re.Pattern[str]) -> bool:
    """Whether the sentence says what is still to be reached: an aim label, an imperative, a
    directive ("must", "make sure", "the aim is"; a possibility such as "may" is none), or a done
    word (of `done_words`) read prospectively ("the job ends when the write-up is posted")."""
    if any(not _LABEL_REACHED.search(m.group("rest")) for m in _AIM_LABEL.finditer(sentence)) or imperative(sentence):
        return True
    if _DIRECTIVE_BEFORE.search(sentence):
        return True
    return any(prospective_at(sentence, m.start(), m.end()) and not _POSSIBILITY.search(sentence[:m.start()])
               for m in done_words.finditer(sentence))
