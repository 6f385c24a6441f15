"""Whether a grade consults the embedding judge at all: only when a key needs it.

The offline judge's model is most of what a default grade costs (loading it, and the runtime it runs
on). A grade whose every asked key is decided by a rule does not need it: a rule's verdict on a
safety-critical key always stands, and one on another key stands unless a *binding* judge says
violated (judge.grade.merge). So when no window of a run has a key that the judge decides (no rule
ruled on it; or the judge is binding and the rule did not find a violation of a non-safety key), the
embedding judge is not asked, and its model is never loaded; the report then carries the rules'
findings without the judge's advisory opinion on them. As soon as one window needs the judge, every
window is asked as before, so a grade that loads the model reports exactly what it always did.
Summaries are audited with the model whenever the run has some (judge.grade.summaries).

LLM judges are asked as before: this is about the model's load, not about what a judge is shown.
"""

from __future__ import annotations

from typing import Any, Sequence

from judge.checks import RuleSet
from judge.grade.findings import deterministic_finding
from judge.grade.windows import Window
from judge.ledger import ExpectedLedger


def consulted_only_when_needed(judge: Any) -> bool:
    """The embedding judge (its model is the cost); LLM and replay judges are always asked."""
    return judge is not None and judge.fingerprint().get("backend") == "embedding"


def judge_decides(key: str, window: Window, ledger: ExpectedLedger, rules: RuleSet, binding: bool) -> bool:
    """Whether the judge's verdict on `key` in this window can decide it (judge.grade.merge)."""
    ruled = deterministic_finding(key, window, ledger, rules)
    if ruled is None:
        return True
    if ledger.history(key).sensitivity == "safety-critical":
        return False
    return binding and ruled.verdict != "violated"


def judge_needed(windows: Sequence[Window], keys_by_window: Sequence[list[str]], ledger: ExpectedLedger,
                 rules: RuleSet, binding: bool) -> bool:
    """Whether some window with events has a key the judge decides."""
    return any(judge_decides(key, window, ledger, rules, binding)
               for window, keys in zip(windows, keys_by_window) if window.events for key in keys)
