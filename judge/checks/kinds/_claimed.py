"""The reading of `claimed-complete` (judge.checks.kinds.claimed_complete holds the rule and its
docs): each act a text asserts, against its own tool's last result. A module of its own so that
`make install` compiles it (judge.compiled: the rule's module defines a pydantic model, which stays
Python); it runs on every assistant message and summary of a run.
"""

from __future__ import annotations

from typing import Any, Final, cast

from judge.checks.matching import norm, tool_is
from judge.model.event_view import AssistantLike, StateWriteLike, SummaryLike
from judge.text.acts import may_relate, read_only, relation, tool_target, with_call
from judge.text.assertions import Assertion, assertions_in
from judge.text.claim_target import may_claim, may_claim_any
from judge.text.claims import ClaimTarget, claim_of, target

COMPLETION_VALUES = {"completed", "complete", "done", "true", "finished", "yes", "1", "success", "succeeded"}
TEXT_KINDS: Final = ("assistant", "summary")  # Final: its Literals narrow an event by `in`
MAX_TOOLS_ASKED = 64  # tools held against an assertion when the rule names none (the latest called)

Judged = tuple[bool, str]


def claimed_complete(rule: Any, event: StateWriteLike | AssistantLike | SummaryLike, ctx: Any,
                     words: ClaimTarget) -> Judged | None:
    if event.kind in TEXT_KINDS:
        text = event.text
        if not text:
            return None
        outcomes = _of_tool(rule, text, ctx, words) if rule.tool else _of_any_tool(rule, text, ctx, words)
        violated = [o for o in outcomes if o[0]]
        return violated[0] if violated else (outcomes[0] if outcomes else None)
    # Not a text, so a state-write (the rule reads no other kind): `in` narrows only the texts.
    if norm(cast(StateWriteLike, event).value) not in COMPLETION_VALUES:
        return None
    return _judged(ctx, rule.tool, f"{rule.key} claimed complete", "")


def _of_tool(rule: Any, text: str, ctx: Any, words: ClaimTarget) -> list[Judged]:
    """The acts asserted about the rule's tool, each against that tool's result."""
    if not may_claim(text, words):  # the quick test, before any parsing
        return []
    asserted = [a for a in assertions_in(text) if may_relate(a, words)]
    if not asserted:  # no act the rule's verbs could claim: the call's values are not read
        return []
    recent = ctx.state.recent
    tool = recent.last_tool(rule.tool)
    about = with_call(words, recent.last_args.get(tool)) if tool is not None and recent.last_args.get(tool) else words
    out = []
    for a in asserted:
        score = relation(a, about)
        if score and not _more_about_another(a, score, rule.tool or "", recent):
            out.append(_judged(ctx, rule.tool, f'claims {rule.key} done ("{claim_of(a).excerpt}")', a.clause))
    return out


def _more_about_another(a: Assertion, score: int, glob: str, recent: Any) -> bool:
    """The act is more about another tool the run called whose work was done ("the payment method
    was updated" after an ok `update_payment` and `update_baggages`, asked of the baggage rule). One
    whose work failed too leaves the claim false either way ("the refund for A-20931 has been
    submitted" after its draft timed out and its submission was refused): the rule keeps it."""
    for other in recent.called(MAX_TOOLS_ASKED):
        if not tool_is(other, glob) and recent.results.get(other, (None,))[0] == "ok" \
                and may_relate(a, target(other, other)) and relation(a, _target_of(other, recent)) > score:
            return True
    return False


def _of_any_tool(rule: Any, text: str, ctx: Any, words: ClaimTarget) -> list[Judged]:
    """Each act asserted, against the called tool it is most about (an ok one when several are as
    much); an act about none is judged only when the key's words name it (against the last tool)."""
    recent = ctx.state.recent
    if len(_NAMED) != len(recent.last_call):  # every tool called has its triggers in the quick test
        _NAMED.update((tool, target(tool, tool))[0] for tool in recent.last_call if tool not in _NAMED)
    if not may_claim_any(text):  # no trigger of any target: none of the key's either
        return []
    asserted = assertions_in(text)
    if not asserted:
        return []
    tools = [(tool, base) for tool in recent.called(MAX_TOOLS_ASKED) if not read_only(base := target(tool, tool))]
    out = []
    for a in asserted:  # a call's target (its values) is built only for a tool whose verbs could be claimed
        scored = [(relation(a, _target_of(tool, recent)), tool) for tool, base in tools if may_relate(a, base)]
        best = max((s for s, _ in scored), default=0)
        if best:
            about = [tool for s, tool in scored if s == best]
            ok = next((tool for tool in about if recent.results.get(tool, (None,))[0] == "ok"), about[0])
            out.append(_judged(ctx, ok, f'claims {ok} done ("{claim_of(a).excerpt}")', a.clause))
        elif (words.verbs or words.work_objects) and may_claim(text, words) and relation(a, words):
            out.append(_judged(ctx, None, f'claims {rule.key} done ("{claim_of(a).excerpt}")', a.clause))
    return out


_NAMED: set[str] = set()  # the tools whose name's target was made (its triggers are in the quick test)
_TARGETS: dict[str, tuple[Any, ClaimTarget]] = {}  # tool -> (the arguments of its latest call, its target)


def _target_of(tool: str, recent: Any) -> ClaimTarget:
    """The target of a called tool with its latest call's values (made again only for a new call)."""
    args = recent.last_args.get(tool)
    kept = _TARGETS.get(tool)
    if kept is not None and kept[0] is args:
        return kept[1]
    if len(_TARGETS) >= 4096:
        _TARGETS.clear()
    made = tool_target(tool, args)
    _TARGETS[tool] = (args, made)
    return made


def _judged(ctx: Any, glob: str | None, claim: str, clause: str) -> Judged:
    """The claim against what the tool returned (judge.checks.recent: the call carrying an
    identifier the claim's clause names, else the tool's latest call)."""
    recent = ctx.state.recent
    tool, (status, result) = recent.asked(glob, clause)
    if tool is None:
        named = f"{glob} was never called" if glob else "no tool was called at all"
        return True, f"{claim}, but {named}"
    if status == "ok":
        return False, f"{claim} after an ok {tool} result ({result})"
    if status is None:
        earlier = recent.failed.get(tool)
        after = f" (its last result, {earlier}, failed)" if earlier else ""
        return True, f"{claim} with no {tool} result yet{after}"
    return True, f"{claim} after {tool} returned {status} ({result})"


