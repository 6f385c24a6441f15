"""Whether a grade consults a judge whose model is costly to load: only when a key needs it.

The offline judge's model is most of what a default grade costs (loading it, and the runtime it runs
on). A grade whose every asked key a rule ruled on does not need it: a rule that saw a matching event
decides its key, whatever a judge says (judge.grade.merge). So when no window of a run has a key that
the judge decides (no rule guards it, or its rules saw no matching event there), a backend whose spec
says `asked_only_when_needed` (the embedding judge) is not asked, and its model is never loaded; the
report then carries the rules' findings without the judge's opinion beside them. As soon as one
window needs the judge, every window is asked as before, so a grade that loads the model reports
exactly what it always did. Summaries are audited with the model whenever the run has some
(judge.grade.summaries).

Other judges (an LLM, a replay) are asked as before: this is about a model's load, not about what a
judge is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judge.checks import RuleSet
from judge.grade.findings import deterministic_finding
from judge.grade.windows import Window
from judge.ledger import ExpectedLedger


def consulted_only_when_needed(judge: Any) -> bool:
    """Whether the judge's backend is asked only when a key needs it (its spec says so)."""
    if judge is None:
        return False
    from judge.judges.spec import backend_specs

    backend = getattr(getattr(judge, "config", None), "backend", None) or judge.fingerprint().get("backend")
    spec = backend_specs().get(backend) if isinstance(backend, str) else None
    return spec is not None and spec.asked_only_when_needed


def judge_decides(key: str, window: Window, ledger: ExpectedLedger, rules: RuleSet) -> bool:
    """Whether the judge's verdict on `key` in this window can decide it: no rule ruled on it."""
    ruled = deterministic_finding(key, window, ledger, rules)
    return ruled is None or ruled.verdict == "not-exercised"


def judge_needed(windows: Sequence[Window], keys_by_window: Sequence[list[str]], ledger: ExpectedLedger,
                 rules: RuleSet) -> bool:
    """Whether some window with events has a key the judge decides."""
    return any(judge_decides(key, window, ledger, rules)
               for window, keys in zip(windows, keys_by_window, strict=False) if window.has_events for key in keys)
