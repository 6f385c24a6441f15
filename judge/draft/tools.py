"""Which tool performs an action, and which argument carries a value.

A tool is known from the traces (the tool-calls' names and argument names, never what the agent
did with them) or from `--tools` function schemas. An action verb matches a tool when a word of the
tool's name is that verb ("migrate" -> db_migrate, "submit" -> refund_submit), or, for work asked,
when a word of the tool's name is in the verb's family and another names the object ("take a
backup" -> backup_database). A tool whose name starts with a read verb (list_deploys, get_payment)
never performs a forbidden write.
"""

from __future__ import annotations

from judge.draft.lexicon import family_of, stem_equal, verb_of
from judge.draft.source import ToolInfo
from judge.text.verbs import name_tokens

KIND_ARGS: dict[str, tuple[str, ...]] = {
    "path": ("path", "file", "filename", "filepath", "dir", "directory", "folder"),
    "environment": ("environment", "env", "stage", "tier", "cluster"),
    "url": ("url", "uri", "endpoint"),
    "browser": ("browser",),
    "version": ("version",),
    "amount": ("amount", "cost", "price", "total", "fee", "charge", "sum", "budget"),
    "channel": ("channel", "room"),
}


def tokens(name: str) -> list[str]:
    """`refund_create_draft` -> [refund, create, draft]; `setConfig` -> [set, config]."""
    return name_tokens(name)


def _verbs(name: str) -> list[str | None]:
    return [verb_of(t) for t in tokens(name)]


def reads_first(name: str) -> bool:
    """Whether the tool's name starts with a read verb (list_deploys, get_payment, search_hotels)."""
    first = _verbs(name)[:1]
    return bool(first) and first[0] is not None and family_of(first[0]) == "read"


def _exact(verb: str, name: str) -> bool:
    base = verb[2:] if verb.startswith("re") and family_of(verb[2:]) else verb
    return any(v in (verb, base) for v in _verbs(name) if v)


def _object_words(objects: tuple[str, ...] | list[str], name: str) -> int:
    """How many of the object's words the tool's name holds (its verb tokens left out)."""
    words = [t for t, v in zip(tokens(name), _verbs(name), strict=False) if v is None or t in objects]
    return sum(1 for o in set(objects) if any(stem_equal(o, t) for t in words))


def _object_match(objects: tuple[str, ...] | list[str], name: str) -> bool:
    return _object_words(objects, name) > 0


def _family_match(verb: str, name: str) -> bool:
    family = family_of(verb)
    return family is not None and any(v and family_of(v) == family for v in _verbs(name))


def tools_doing(verb: str, objects: tuple[str, ...] | list[str], tools: dict[str, ToolInfo], *,
                work: bool = False) -> list[str]:
    """The tools that perform `verb` (on `objects`). Forbidden actions (`work` False) take tools
    named by the verb itself, else by a verb of its family and the object; work asked takes the
    tools named by the verb or its family, those that also name the object first."""
    family = family_of(verb)
    if family is None or family == "use":
        return []
    names = [n for n in sorted(tools) if family == "read" or not reads_first(n)]
    exact = [n for n in names if _exact(verb, n)]
    by_family = [n for n in names if _family_match(verb, n) and _object_match(objects, n)]
    if not work:
        return exact or by_family
    with_object = [n for n in dict.fromkeys(exact + by_family) if _object_match(objects, n)]
    best = max((_object_words(objects, n) for n in with_object), default=0)
    # "a GitHub account": create_github_account, not create_slack_account (both say "account")
    return [n for n in with_object if _object_words(objects, n) == best] or exact


def arg_for(info: ToolInfo, kind: str | None, context: tuple[str, ...] | list[str]) -> str | None:
    """The argument of `info` that carries a value: one named like a word of its context ("the
    original database" -> database, "the legacy table" -> table), else one named for its kind."""
    for arg in info.args:
        if any(stem_equal(word, part) for part in tokens(arg) for word in context if len(word) > 2):
            return arg
    for arg in info.args:
        if kind in KIND_ARGS and any(part in KIND_ARGS[kind] for part in tokens(arg)):
            return arg
    return None


def args_of_kind(tools: dict[str, ToolInfo], kind: str | None, noun: str | None = None) -> list[str]:
    """Argument names of any tool that carry values of `kind` (e.g. `environment`), or that are
    named by the noun the user put next to the value ("the staging cluster": `cluster`)."""
    names = set(KIND_ARGS.get(kind or "", ())) | ({noun} if noun else set())
    found: list[str] = []
    for info in tools.values():
        for arg in info.args:
            if any(part in names for part in tokens(arg)) and arg not in found:
                found.append(arg)
    return found


def idempotency_arg(info: ToolInfo) -> str | None:
    return next((a for a in info.args if "idempot" in a.lower() or a.lower() in ("request_id", "dedup_key")), None)
