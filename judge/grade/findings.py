"""Per checkpoint: which keys are asked about, the rules' verdict on each, and the merged findings."""

from __future__ import annotations

from typing import Any

from judge.checks import RuleSet
from judge.grade.merge import merge_key
from judge.grade.windows import Window
from judge.ledger import ExpectedLedger
from judge.model import CheckpointReport, Finding


def window_keys(window: Window, ledger: ExpectedLedger, rules: RuleSet) -> list[str]:
    """Keys the checkpoint names, keys violated in its window, and for the implicit final
    checkpoint every key active at its turn."""
    cp = window.checkpoint
    keys = list(dict.fromkeys([*cp.must_retain, *cp.expect_completed]))
    if window.implicit:
        keys += [k for k, h in ledger.keys.items() if h.is_active(cp.after_turn) and k not in keys]
    keys += [h.key for h in window.hits if h.violated and h.key not in keys]
    return keys


def deterministic_finding(key: str, window: Window, ledger: ExpectedLedger, rules: RuleSet) -> Finding | None:
    """The rules' verdict on one key for one window, or None when no rule guards the key.

    A rule rules only on what it saw: a violation, a compliant exercise (its last hit), or a verdict
    from what it remembered at the checkpoint (an expected call never made). A rule that saw no
    matching event in the window leaves its key `not-exercised`, with no source: nothing decided it,
    and a judge's verdict on the key is kept (judge.grade.merge). A forbidden call that never came is
    not evidence that the rule was looked at: a typo in its tool name would uphold it for ever."""
    guarding = rules.by_key.get(key, [])
    hits = [x for x in window.hits if x.key == key]
    if not guarding and not hits:
        return None
    h = ledger.history(key)
    base: dict[str, Any] = dict(key=key, source="deterministic", class_=h.class_, sensitivity=h.sensitivity)
    bad = [x for x in hits if x.violated]
    if bad:
        first = bad[0]
        return Finding(**base, verdict="violated", evidence_event=first.event, turn=first.turn,
                       rule=first.rule, detail=first.detail)
    turn = window.checkpoint.after_turn
    said = _checkpoint_verdict(key, window, rules)
    if said is not None and said["verdict"] == "violated":
        return Finding(**base, **said)
    if hits:  # a compliant exercise outweighs another rule's "could not judge"
        last = hits[-1]
        return Finding(**base, verdict="upheld", evidence_event=last.event, turn=last.turn,
                       rule=last.rule, detail=last.detail)
    if said is not None:
        return Finding(**{**base, "source": None if said["verdict"] == "not-exercised" else "deterministic"}, **said)
    detail = "key revoked" if h.revoked_at is not None and turn >= h.revoked_at else \
        "no event in the window exercised the rule" if window.n_events else "no event in the window"
    return Finding(**{**base, "source": None}, verdict="not-exercised", rule=guarding[0][0], turn=turn,
                   detail=detail)


def _checkpoint_verdict(key: str, window: Window, rules: RuleSet) -> dict | None:
    """A verdict a guarding rule gives at the checkpoint from what it remembered (its tracker's
    `at_checkpoint`: an expected call not made by a checkpoint that expects the key completed)."""
    for rid, _ in rules.by_key.get(key, []):
        found = rules.tracker_of(rid).at_checkpoint(window.checkpoint)
        if found is not None:
            return dict(verdict=found.verdict, rule=rid, turn=found.turn, evidence_event=found.evidence_event,
                        detail=found.detail)
    return None


def answer_errors(window: Window, keys: list[str]) -> int:
    """1 when the judge asked about this window failed: no valid verdict, or an answer that left an
    asked key without a finding (the key then ends `judge-error`); else 0."""
    result = window.judge_result
    if result is None:
        return 0
    if result.verdict is None:
        return 1
    answered = {f.key for f in result.verdict.findings}
    return int(any(key not in answered for key in keys))


def checkpoint_report(window: Window, keys: list[str], ledger: ExpectedLedger, rules: RuleSet, *,
                      binding: bool = True) -> CheckpointReport:
    """The merged finding of every asked key; `binding`: whether the judge's violations decide."""
    judged = {}
    if window.judge_result is not None and window.judge_result.verdict is not None:
        judged = {f.key: f for f in window.judge_result.verdict.findings}
    judge_error = window.judge_result is not None and window.judge_result.verdict is None
    # The turn of each event the judge cites (the window read again only for those).
    cited = window.locate({f.evidence_event for f in judged.values() if f.evidence_event})
    event_turns = {eid: turn for eid, (_, turn) in cited.items()}
    findings = []
    for key in keys:
        h = ledger.history(key)
        findings.append(merge_key(
            key=key, class_=h.class_, sensitivity=h.sensitivity, turn=window.checkpoint.after_turn,
            deterministic=deterministic_finding(key, window, ledger, rules),
            judged=judged.get(key),
            judge_error=window.judge_result.error if judge_error and window.judge_result else None,
            judged_at_all=window.judge_result is not None, event_turns=event_turns,
            binding=binding))
    return CheckpointReport(after_turn=window.checkpoint.after_turn, implicit=window.implicit, findings=findings,
                            path_review=window.path_review)
