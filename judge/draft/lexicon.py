"""The cue tables of the offline drafter: action verbs and their families, words that carry no
content, and the nouns that name a kind of value. Plain data, read by every extraction module, so
that what the drafter recognises can be read in one place (and extended without touching code).

These tables were written against the bundled examples (see benchmarks/RESULTS.md, "Drafting
ledgers"): they recognise plain English phrasings, not every way a user can say something. What
they miss is what the reviewer adds; what they get wrong, the reviewer deletes.
"""

from __future__ import annotations

import re

# Action families: canonical verbs, and the words that mean them. A verb's family decides which
# tools can perform it (judge.draft.tools) and how sensitive the action is (judge.draft.sensitivity).
FAMILIES: dict[str, tuple[str, ...]] = {
    "deploy": ("deploy", "redeploy", "release", "publish", "ship", "rollout", "promote"),
    "delete": ("delete", "remove", "drop", "truncate", "purge", "wipe", "destroy", "erase", "rm"),
    "migrate": ("migrate",),
    "restart": ("restart", "reboot", "kill", "stop", "shutdown", "terminate", "reset"),
    "write": ("edit", "write", "modify", "change", "patch", "update", "alter", "set", "apply", "replace",
              "rename", "move", "insert", "commit", "configure", "overwrite", "rewrite", "fix", "repair"),
    "create": ("create", "make", "add", "provision", "build", "prepare", "generate", "draft", "take",
               "copy", "seed", "install", "backup", "open"),
    "send": ("send", "email", "mail", "message", "post", "notify", "share", "upload", "export", "forward"),
    "pay": ("pay", "purchase", "buy", "charge", "refund", "book", "transfer", "submit", "order"),
    "cancel": ("cancel",),
    "merge": ("merge", "push", "rebase"),
    "run": ("run", "execute", "exec", "test", "start", "launch", "invoke", "trigger", "retry"),
    "read": ("read", "view", "get", "list", "search", "grep", "fetch", "query", "show", "describe",
             "check", "find", "inspect", "look", "investigate", "browse", "download", "see", "review"),
    "use": ("use", "access", "touch", "contact", "call", "connect", "target", "hit", "go"),
}
VERB_FAMILY: dict[str, str] = {verb: family for family, verbs in FAMILIES.items() for verb in verbs}

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
EXTRA_VERBS = ("upgrade", "downgrade", "approve", "sign", "close", "uninstall", "investigate", "decide",
               "tell", "explain", "report", "confirm", "verify", "determine", "keep", "continue", "switch",
               "pick", "choose", "prefer", "select", "stick", "have", "give", "do", "fly")
_IRREGULAR = {"ran": "run", "made": "make", "sent": "send", "built": "build", "took": "take", "kept": "keep",
              "done": "do", "did": "do", "gave": "give", "set": "set", "put": "put", "shut": "shutdown",
              "wrote": "write", "written": "write", "chosen": "choose", "flew": "fly"}

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


def verb_of(word: str) -> str | None:
    """The canonical verb of an inflected word ("dropped" -> drop, "migrating" -> migrate,
    "redeploy" -> redeploy), or None when the word is not an action verb we know."""
    w = word.lower().strip("'’")
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if w in VERB_FAMILY or w in EXTRA_VERBS:
        return w
    for suffix, restore in (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("d", ""), ("es", ""),
                            ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            stem = w[: len(w) - len(suffix)] + restore
            if stem in VERB_FAMILY or stem in EXTRA_VERBS:
                return stem
            if len(stem) > 3 and stem[-1] == stem[-2] and stem[:-1] in VERB_FAMILY:  # dropped, stopped
                return stem[:-1]
    return None


def family_of(verb: str) -> str | None:
    if verb in VERB_FAMILY:
        return VERB_FAMILY[verb]
    if verb.startswith("re") and verb[2:] in VERB_FAMILY:  # redeploy, rebuild
        return VERB_FAMILY[verb[2:]]
    return None


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
