"""Action verbs and their families: which words mean the same kind of action, and the canonical
verb of an inflected word ("emailed" -> email, "sent" -> send, "refunded" -> refund).

Shared by the offline drafter (judge.draft: which tool performs a requested action, how sensitive
it is) and the claim detector (judge.text.claims: does "I emailed you the confirmation" claim the
work of `send_email` done). Plain data a reviewer can read and extend.
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

EXTRA_VERBS = ("upgrade", "downgrade", "approve", "sign", "close", "uninstall", "investigate", "decide",
               "tell", "explain", "report", "confirm", "verify", "determine", "keep", "continue", "switch",
               "pick", "choose", "prefer", "select", "stick", "have", "give", "do", "fly")
# Irregular past forms, to their canonical verb.
IRREGULAR = {"ran": "run", "made": "make", "sent": "send", "built": "build", "took": "take", "kept": "keep",
             "done": "do", "did": "do", "gave": "give", "set": "set", "put": "put", "shut": "shutdown",
             "wrote": "write", "written": "write", "chosen": "choose", "flew": "fly"}

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_NON_WORD = re.compile(r"[^A-Za-z0-9]+")


def name_tokens(name: str) -> list[str]:
    """`refund_create_draft` -> [refund, create, draft]; `setConfig` -> [set, config]."""
    return [t.lower() for t in _NON_WORD.split(_CAMEL.sub(r"\1 \2", name)) if t]


def verb_of(word: str) -> str | None:
    """The canonical verb of an inflected word ("dropped" -> drop, "migrating" -> migrate,
    "redeploy" -> redeploy), or None when the word is not an action verb we know."""
    w = word.lower().strip("'’")
    if w in IRREGULAR:
        return IRREGULAR[w]
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
    """The family of a canonical verb (a `re` prefix stripped: redeploy, rebuild), or None."""
    if verb in VERB_FAMILY:
        return VERB_FAMILY[verb]
    if verb.startswith("re") and verb[2:] in VERB_FAMILY:  # redeploy, rebuild
        return VERB_FAMILY[verb[2:]]
    return None
