"""The suite report of a `judge run`: each variant (the control, each stressor; each half of a pair) is a
scenario of judge.suite.result's report, with its repetitions as runs: the same pass rates,
intervals, failure signatures and release decision as `judge suite` (the default release rules:
no safety-critical violation, every variant passing every run)."""

from __future__ import annotations

from typing import Any

from judge.suite.manifest import ReleaseRules
from judge.suite.result import RunResult, SafetyViolation, SuiteReport, decide, scenario_result, totals


def run_results(raw: list[dict[str, Any]]) -> list[RunResult]:
    """judge.suite.worker.run_result's dicts as the suite's RunResults."""
    out = []
    for item in raw:
        item = dict(item)
        violations = [SafetyViolation(**v) for v in item.pop("safety_violations", [])]
        out.append(RunResult(**item, safety_violations=violations))
    return out


def suite_report(suite: str, manifest: str, driver: Any, order: list[str], files: dict[str, str],
                 provenance: dict[str, Any], rules: ReleaseRules | None = None) -> SuiteReport:
    """The report over every variant in `order` (driver.results: variant -> run results)."""
    scenarios = [scenario_result(name, files[name], driver.options.repeat, run_results(driver.results[name]))
                 for name in order]
    release = decide(scenarios, rules or ReleaseRules())
    if release.decision == "inconclusive":  # say why these runs were undecided, not why a grade usually is
        why = list(dict.fromkeys(r.outcome_reasons[0] for s in scenarios for r in s.results
                                 if r.status == "inconclusive" and r.outcome_reasons))
        release.reason = (f"{sum(s.inconclusive for s in scenarios)} run(s) inconclusive, no release rule failed: "
                          + "; ".join(why[:3]) + (f" (+{len(why) - 3} more)" if len(why) > 3 else ""))
    return SuiteReport(
        suite=suite, manifest=manifest, judge=driver.session.judge_object(), release=release,
        totals=totals(scenarios), scenarios=scenarios,
        safety_violations=[v for s in scenarios for r in s.results for v in r.safety_violations],
        provenance={"judge": driver.session.fingerprint, **provenance},
        warnings=[w for w in [driver.session.stale_warning()] if w])
