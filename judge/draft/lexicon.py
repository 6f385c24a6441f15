"""The cue tables of the offline drafter: action verbs and their families (judge.text.verbs, shared
with the claim detector), words that carry no content, and the nouns that name a kind of value.
Plain data, read by every extraction module, so that what the drafter recognises can be read in one
place (and extended without touching code).

These tables were written against the bundled examples (see benchmarks/RESULTS.md, "Drafting
ledgers"): they recognise plain English phrasings, not every way a user can say something. What
they miss is what the reviewer adds; what they get wrong, the reviewer deletes.
"""

from __future__ import annotations

import re

from judge.text.verbs import EXTRA_VERBS, FAMILIES, VERB_FAMILY, family_of, verb_of  # noqa: F401 (re-exported)

# Verbs that ask for information or judgement rather than work: no completion entry (the goal holds it).
INFO_VERBS = set(FAMILIES["read"]) | {"decide", "tell", "explain", "report", "confirm", "verify", "determine",
                                      "figure", "understand", "wait", "continue", "let", "keep", "use",
                                      "ask", "help", "try", "think", "note", "remember", "work"}
# Verbs whose object is a value to use, not work to do ("use Firefox", "switch to 3.12").
CHOICE_VERBS = {"use", "switch", "pick", "choose", "prefer", "select", "stick", "go"}

# Nouns that name an action ("no migration", "no deploys"), mapped to its verb.
NOUN_VERBS: dict[str, str] = {
    "migration": "migrate", "migrations": "migrate", "deployment": "deploy", "deployments": "deploy",
    "deploys": "deploy", "deploy": "deploy", "restart": "restart", "restarts": "restart", "changes": "change",
    "change": "change", "edits": "edit", "edit": "edit", "writes": "write", "deletion": "delete",
    "deletes": "delete", "access": "access", "refund": "refund", "refunds": "refund", "payment": "pay",
    "payments": "pay", "push": "push", "pushes": "push", "release": "release", "releases": "release",
    "submission": "submit", "purchase": "purchase", "purchases": "purchase", "booking": "book",
    "cancellation": "cancel", "upgrade": "upgrade", "reboot": "reboot",
}
# Words with no content of their own in an object phrase or a key.
STOP = frozenset("""
a an the this that these those it its it's them they their there here my our your his her me us you i we
any all anything everything something nothing else other others some each every one both either neither
and or nor but then also only just now first next again still too very really please kindly
of in on at to for from with without by into onto over under about as than via per up out off after
before until unless while when where what which who whom whose whether if so not no never do does did
don't dont can can't cannot may might must mustn't should shall will would could be is are was were been
being am has have had having get got let lets let's make sure new same own as-is
""".split())

# Nouns that say what kind of value follows or precedes them ("host web-03", "the pro-monthly plan").
KIND_NOUNS = frozenset("""
plan account host server service database db table branch environment env region suite ticket incident
order orders migration image version file path folder directory browser model tier queue bucket channel
repo repository project customer user card flight reservation date time window cluster namespace
container pod node job pipeline stage endpoint url port schema release tag commit issue change
""".split())

# Values of a kind known by name.
KNOWN_VALUES: dict[str, tuple[str, ...]] = {
    "browser": ("chromium", "firefox", "webkit", "chrome", "safari", "edge"),
    "environment": ("production", "prod", "staging", "sandbox", "preprod", "pre-production"),
}
# Common hyphenated words that are not names of things.
HYPHENATED_WORDS = frozenset("""
read-only write-up in-place one-way round-trip built-in up-to-date follow-up re-run e-mail sign-off set-up
long-running real-time third-party end-to-end day-to-day open-source so-called well-known non-production
self-hosted right-hand left-hand check-in check-out log-in opt-in opt-out add-on
""".split())

_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def content_words(text: str) -> list[str]:
    return [w for w in words(text.replace("_", " ").replace("-", " ")) if w not in STOP and len(w) > 1]


def stem_equal(a: str, b: str) -> bool:
    """Two words naming the same thing: equal, one a prefix of the other (5+ letters: "config" and
    "configuration"), or equal once a plural `s` is dropped."""
    a, b = a.lower(), b.lower()
    if a == b or a.rstrip("s") == b.rstrip("s"):
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 5 and long_.startswith(short)


def snake(text: str, limit: int = 3) -> str:
    """A key from words: their content words, snake_case, at most `limit` of them."""
    parts = content_words(text)[:limit]
    return "_".join(parts) if parts else ""
