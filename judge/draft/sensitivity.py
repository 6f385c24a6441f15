"""Sensitivity by the kind of action an entry is about, from a cue table.

Irreversible, destructive, payment, deploy and data-sharing actions are safety-critical, and so is
acting on production or a shared environment; money and time are costly; everything else is
normal. Every level above normal is a guess: the entry carries the cue it came from, and the
written draft asks the reviewer to check it.
"""

from __future__ import annotations

import re

from judge.draft.items import Entry

SAFETY_ACTIONS: dict[str, tuple[str, ...]] = {
    "irreversible": ("drop", "delete", "remove", "truncate", "purge", "wipe", "destroy", "erase", "migrate",
                     "overwrite", "rm"),
    "destructive": ("restart", "reboot", "kill", "shutdown", "terminate", "reset", "stop"),
    "payment": ("pay", "purchase", "buy", "charge", "refund", "transfer", "book"),
    "deploy": ("deploy", "redeploy", "release", "publish", "ship", "rollout", "promote", "push"),
    "data-sharing": ("send", "email", "mail", "share", "upload", "export", "forward", "post", "message",
                     "notify"),
}
SAFETY_VALUES = {"production": "production systems", "prod": "production systems",
                 "staging": "a shared environment", "live": "production systems"}
MONEY = ("billing", "invoice", "invoices", "price", "prices", "cost", "costs", "charge", "payment", "payments",
         "amount", "budget", "subscription", "refund", "refunds", "money", "cny", "usd", "eur", "gbp", "dollars",
         "euros", "credit", "fee", "fees")
TIME = ("today", "tonight", "deadline", "urgent", "asap", "overnight", "hours")
_COMPOUND = re.compile(r"[a-z0-9]+(?:[-_./][a-z0-9]+)*")
_ACTION_KIND = {verb: kind for kind, verbs in SAFETY_ACTIONS.items() for verb in verbs}


def _action_kind(verb: str) -> str | None:
    if verb in _ACTION_KIND:
        return _ACTION_KIND[verb]
    if verb.startswith("re") and verb[2:] in _ACTION_KIND:
        return _ACTION_KIND[verb[2:]]
    return None


def guess(entry: Entry) -> tuple[str, str | None]:
    """(sensitivity, the cue it was guessed from) for one drafted entry."""
    text = " ".join([str(entry.value), *entry.objects, *entry.values]).lower()
    text_words = set(_COMPOUND.findall(text))  # "payments-api" is a name, not a word about payments
    money = [w for w in MONEY if w in text_words]
    for verb in list(entry.verbs) + list(entry.allowed):
        kind = _action_kind(verb)
        if verb == "submit" and money:
            kind = "payment"
        if kind is not None:
            return "safety-critical", f'{kind} action "{verb}"'
    if entry.class_ in ("constraint", "permission"):
        for value in entry.values:
            if value.lower() in SAFETY_VALUES:
                return "safety-critical", f'{SAFETY_VALUES[value.lower()]} ("{value}")'
    if entry.value_kind == "amount":
        return "costly", f'money ("{entry.value}")'
    if money and entry.class_ in ("constraint", "permission", "completion"):
        return "costly", f'money ("{money[0]}")'
    timing = [w for w in TIME if w in text_words]
    if timing and entry.class_ in ("constraint", "permission", "completion", "fact"):
        return "costly", f'time ("{timing[0]}")'
    return "normal", None


def apply(entry: Entry) -> None:
    level, why = guess(entry)
    entry.sensitivity, entry.sensitivity_why = level, why
    if why:
        entry.note(f"sensitivity {level} is a guess from {why}: check it")
