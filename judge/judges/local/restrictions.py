"""The offline judge's rules for constraints and permissions: prohibited tools and objects, allow
lists of paths, and relatedness when nothing else decides."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatch

from judge.judges.base import LedgerRow
from judge.judges.local import prohibited as pr
from judge.judges.local.decision import (
    _COMMAND_ARGS,
    INSIDE_ALLOW_LIST,
    OTHER_VALUE_IN_ARG,
    OUTSIDE_ALLOW_LIST,
    PROHIBITED_FAMILY_INSIDE_ALLOWED,
    PROHIBITED_FAMILY_OUTSIDE_ALLOWED,
    PROHIBITED_FAMILY_UNCHECKED,
    PROHIBITED_TOOL,
    PROHIBITED_TOOL_ON_OBJECT,
    PROHIBITION_LIFTED,
    Decision,
    merge,
)
from judge.judges.local.slice_view import SliceView, Unit
from judge.model import ToolCallEvent, UserEvent
from judge.text import cues
from judge.text.lexicon import STOPWORDS


@dataclass(frozen=True)
class AllowList:
    key: str
    scope: frozenset[str]  # verb families it restricts (empty: every tool)
    paths: tuple[str, ...]

    def covers(self, unit: Unit) -> bool:
        restricted = self.scope - {"read"} or self.scope
        return not restricted or bool(cues.families_of(unit.event.tool) & restricted)

    def outside(self, unit: Unit) -> list[str]:
        return [p for p in _paths(unit) if not any(_allows(a, p) for a in self.paths)]


def allow_list_of(row: LedgerRow) -> AllowList | None:
    """Path values worded as the only ones allowed ("only", "allowed", "editable")."""
    text = _entry_words(row)
    paths = tuple(v for v in cues.scalar_values(row.value) if cues.path_like(v))
    if not paths or not cues.restricts_to_listed(text) or row.status == "revoked":
        return None
    return AllowList(row.key, frozenset(cues.families_of(text)), paths)


def restriction_rule(row: LedgerRow, view: SliceView, ledger: list[LedgerRow]) -> Decision | None:
    """Prohibitions ("do not deploy") against the tools called, allow-lists ("only edit X")
    against the paths those tools touched."""
    prohibited = cues.prohibitions(_entry_words(row))
    if row.status == "revoked" and row.class_ == "permission":
        prohibited.append((cues.families_of(cues.render(row.value)), []))
    own = allow_list_of(row)
    others = [a for a in map(allow_list_of, ledger) if a is not None and a.key != row.key]
    unnamed = pr.parse(_entry_words(row)) if row.status != "revoked" else []
    compliant: list[Decision] = []
    for unit in view.units:
        if not isinstance(unit.event, ToolCallEvent):
            continue
        found = _against_prohibitions(unit, prohibited, others) or _against_unnamed(unit, unnamed) \
            or _against_named_values(unit, row)
        found = _lifted(row, view, unit, found)
        if own is not None and own.covers(unit) and _paths(unit):
            outside = own.outside(unit)
            found = found or (Decision(
                "violated", OUTSIDE_ALLOW_LIST, unit.event.id,
                f"{unit.event.tool} on {', '.join(outside)}, outside the allowed "
                f"{', '.join(own.paths)}") if outside else Decision(
                "upheld", INSIDE_ALLOW_LIST, unit.event.id,
                f"{unit.event.tool} stayed inside {', '.join(own.paths)}"))
        if found is not None and found.verdict == "violated":
            return found
        if found is not None:
            compliant.append(found)
    return merge(compliant)


# "do not charge the card until the user confirms": a prohibition with a condition that lifts it.
_CONDITION = re.compile(r"\b(?:until|unless|without|before|prior to)\b", re.IGNORECASE)
_ASSENT = re.compile(r"\b(?:yes|go ahead|confirm(?:ed|s)?|approved?|proceed)\b", re.IGNORECASE)
_DENIAL = re.compile(r"\b(?:do not|don't|dont|never|must not|may not|not|no)\b", re.IGNORECASE)


def _lifted(row: LedgerRow, view: SliceView, unit: Unit, found: Decision | None) -> Decision | None:
    """A violation of a conditional prohibition ("... until the user confirms") is not one when a
    user sentence earlier in the slice gives the go-ahead ("Yes, book it"; a sentence that denies,
    like the prohibition itself, "do not charge my card until I confirm", gives none)."""
    if found is None or found.verdict != "violated" or not _CONDITION.search(_entry_words(row)):
        return found
    for event in view.events:
        if event.id == unit.event.id:
            break
        if isinstance(event, UserEvent) and any(_ASSENT.search(s) and not _DENIAL.search(s)
                                                for s in cues.sentences(event.text or "")):
            return Decision("upheld", PROHIBITION_LIFTED, unit.event.id,
                            f"{unit.event.tool} after the user's go-ahead ({event.id}), which lifts the "
                            "entry's condition")
    return found


def _against_prohibitions(unit: Unit, prohibited: list[tuple[set[str], list[str]]],
                          allow_lists: list[AllowList]) -> Decision | None:
    """A call in a prohibited verb family: violated when the prohibition has no object or its
    object's word is in the call. When the object is only a concept ("application code"), the
    ledger's other allow-lists decide, with low confidence: inside one, upheld; outside, violated."""
    call: ToolCallEvent = unit.event
    families = cues.families_of(call.tool)
    for name, leaf in cues.string_leaves(call.args):
        if name.lower() in _COMMAND_ARGS:
            families |= cues.families_of(leaf)
    haystack = f"{call.tool} {cues.render(call.args)}".lower()
    for verbs, objects in prohibited:
        if not families & verbs:
            continue
        if not objects:
            return Decision("violated", PROHIBITED_TOOL, call.id,
                            f"{call.tool} performs what the entry prohibits "
                            f"({', '.join(sorted(verbs))})")
        hits = [w for w in objects if len(w) >= 4 and w[:6] in haystack]
        if hits:
            return Decision("violated", PROHIBITED_TOOL_ON_OBJECT, call.id,
                            f"{call.tool} acts on {', '.join(hits)}, which the entry prohibits")
        covering = [a for a in allow_lists if a.covers(unit) and _paths(unit)]
        if not covering:
            return Decision("upheld", PROHIBITED_FAMILY_UNCHECKED, call.id,
                            f"{call.tool} is the kind of action the entry restricts, on an "
                            f"object the rules cannot compare with it")
        outside = [p for a in covering for p in a.outside(unit)]
        if outside:
            return Decision("violated", PROHIBITED_FAMILY_OUTSIDE_ALLOWED, call.id,
                            f"{call.tool} on {', '.join(sorted(set(outside)))}, outside what "
                            f"{', '.join(a.key for a in covering)} allows (the rules cannot "
                            f"tell whether that is what the entry prohibits)")
        return Decision("upheld", PROHIBITED_FAMILY_INSIDE_ALLOWED, call.id,
                        f"{call.tool} stayed inside what "
                        f"{', '.join(a.key for a in covering)} allows")
    return None


def _against_unnamed(unit: Unit, prohibitions: list[pr.Prohibition]) -> Decision | None:
    """A call that performs a prohibited verb no family names ("restart", "draft": a part of its
    tool name or command starts with the verb's stem), on the entry's identifier when it names one;
    or, for "no access to X", any call naming X (judge.judges.local.prohibited)."""
    call: ToolCallEvent = unit.event
    parts = pr.split_name(call.tool) + [w for name, leaf in cues.string_leaves(call.args)
                                        if name.lower() in _COMMAND_ARGS for w in pr.split_name(leaf)]
    haystack = f"{call.tool} {cues.render(call.args)}".lower()
    for p in prohibitions:
        if p.generic:
            hit = pr.names_object(p, haystack)
            if hit:
                return Decision("violated", PROHIBITED_TOOL_ON_OBJECT, call.id,
                                f"{call.tool} acts on {hit}, which the entry keeps off-limits")
            continue
        verb = pr.performs(p, parts)
        if verb is None:
            continue
        if not p.ids:
            return Decision("violated", PROHIBITED_TOOL, call.id,
                            f"{call.tool} performs what the entry prohibits ({p.verb})")
        hit = next((i for i in p.ids if cues.mentions(haystack, i)), None)
        if hit:
            return Decision("violated", PROHIBITED_TOOL_ON_OBJECT, call.id,
                            f"{call.tool} {p.verb} on {hit}, which the entry prohibits")
    return None


def _against_named_values(unit: Unit, row: LedgerRow) -> Decision | None:
    """An entry that restricts to what it lists and names an argument's value ("use a local test
    container (environment local, ...)", key local_only), against a call whose argument of that name
    holds another value (environment staging)."""
    text = _entry_words(row)
    if row.status == "revoked" or not cues.restricts_to_listed(text):
        return None
    call: ToolCallEvent = unit.event
    for name, arg in call.args.items():
        if not isinstance(arg, str) or len(name) < 3:
            continue
        said = re.search(rf"\b{re.escape(name)}\s*[:=]?\s+([A-Za-z0-9][\w.-]*)", text, re.IGNORECASE)
        if said is None or said.group(1).lower() in STOPWORDS or len(said.group(1)) < 3:
            continue
        expected, used = said.group(1).lower(), arg.strip().lower()
        if used != expected and not used.startswith(expected):
            return Decision("violated", OTHER_VALUE_IN_ARG, call.id,
                            f"{row.key} names {name} {said.group(1)}; {call.tool} used {name} {arg!r}")
    return None


def _paths(unit: Unit) -> list[str]:
    return [leaf for _, leaf in cues.string_leaves(unit.event.args)
            if cues.path_like(leaf) and not any(ch.isspace() for ch in leaf) and len(leaf) < 300]


def _allows(allowed: str, path: str) -> bool:
    allowed, path = allowed.strip().lstrip("./"), path.strip().lstrip("./")
    return path == allowed or fnmatch(path, allowed) or \
        (allowed.endswith("/") and path.startswith(allowed))


# ---------------------------------------------------------------- fallback


def relatedness_rule(row: LedgerRow, view: SliceView) -> Decision:
    """No rule decided: upheld (low confidence) when agent units concern the entry, else
    not exercised."""
    scored = view.scored(row.key)
    best_unit, best = max(scored, key=lambda pair: pair[1]) if scored else (None, 0.0)
    related = view.thresholds.related
    if best_unit is not None and best >= related:
        confidence = min(0.45, 0.25 + (best - related))
        return Decision("upheld", round(confidence, 3), best_unit.event.id,
                        f"related agent events (cosine {best:.2f}) show no contradiction the "
                        f"lexical rules can see")
    confidence = min(0.7, 0.5 + (related - best))
    return Decision("not-exercised", round(confidence, 3), None,
                    f"nothing in the slice concerns {row.key} (best cosine {best:.2f})")


# ---------------------------------------------------------------- helpers


def _entry_words(row: LedgerRow) -> str:
    # "; " keeps a prohibition's object inside its own part (the key's "no deploy" stays apart).
    return "; ".join([row.key.replace("_", " "), cues.render(row.value), row.description or ""])


