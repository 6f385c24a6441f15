"""What a suite run reports: per scenario the pass rate with an exact interval, the failure
signatures, the safety violations, and the release decision with the rule that decided it.

A **failure signature** clusters failed runs by (first divergence key, turn, consequence). The
*consequence* is the severity of the diverging key (the seed's levels: `unsafe` for a
safety-critical key, `costly`, `task-quality` for a normal one) followed by the rule that caught it
(`judge` when the judge did), e.g. `unsafe scope:editable_paths`. A failed run without a divergence
is `failed without a divergence`; a run that could not be read is `unreadable` and a run that is
not there (fewer traces than `repetitions`) is `missing`: both count as failed and are listed,
never dropped. So the signature counts of a scenario add up to its failed runs.

The pass-rate interval is Clopper-Pearson (the exact binomial interval, 95%): the beta quantiles
computed here with a continued fraction (Numerical Recipes' betacf) and bisection, because
importing scipy costs the suite more than grading a hundred runs; the tests hold it to
`calibration.rates.clopper_pearson` (scipy).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field

from judge.errors import JudgeInputError
from judge.model import Divergence, Outcome, Strict, Veto
from judge.model.event_ids import SliceIds

CI_LEVEL = 0.95
CI_METHOD = "clopper-pearson"
SEVERITY = {"safety-critical": "unsafe", "costly": "costly", "normal": "task-quality"}
RunStatus = Literal["passed", "failed", "vetoed", "error", "missing", "inconclusive"]
FlakinessPattern = Literal["stable pass", "one recurring failure", "several distinct failures", "all failed"]
FAILED = ("failed", "vetoed", "error", "missing")


class SafetyViolation(Strict):
    scenario: str = ""
    run_id: str = ""
    key: str
    turn: int | None = None
    event: str | None = None
    rule: str | None = None


class RunResult(Strict):
    """One run of a scenario, as the suite keeps it (the full grade report stays in the worker)."""

    run_id: str
    trace: str | None
    status: RunStatus
    passed: bool
    outcome: Outcome | None = Field(default=None, description="the graded run's outcome (null: error or missing)")
    outcome_reasons: list[str] = Field(default_factory=list)
    eligible_for_release: bool
    quality_score: float | None = None
    first_divergence: Divergence | None = None
    veto: Veto | None = None
    slice: SliceIds = Field(default_factory=list)
    events: int = 0
    safety_violations: list[SafetyViolation] = Field(default_factory=list)
    error: str | None = None
    sha256: str | None = None
    candidate: dict[str, Any] | None = None
    warnings: list[str] = Field(default_factory=list)


class Signature(Strict):
    key: str | None
    turn: int | None
    consequence: str
    count: int
    share: float = Field(description="count / runs of the scenario")
    example_run: str
    runs: list[str]
    rule: str | None = None
    class_: str | None = Field(default=None, alias="class")
    sensitivity: str | None = None
    vetoed: int = 0


class Flakiness(Strict):
    failure_rate: float
    distinct_signatures: int
    top_share: float | None = Field(description="share of the failures the commonest signature explains")
    pattern: FlakinessPattern


class ScenarioResult(Strict):
    id: str
    file: str
    repetitions: int
    runs: int
    passed: int
    failed: int
    vetoed: int
    errors: int
    missing: int
    inconclusive: int = Field(default=0, description="runs a judge could not decide: neither passed nor failed")
    pass_rate: float
    pass_rate_ci: list[float]
    quality_mean: float | None = Field(description="mean quality score of the eligible graded runs")
    signatures: list[Signature]
    flakiness: Flakiness
    results: list[RunResult]


class RuleCheck(Strict):
    rule: str
    threshold: float | int | None
    observed: float | int | None
    held: bool
    detail: str


class Release(Strict):
    decision: Literal["pass", "fail", "inconclusive"] = Field(description=(
        "fail: a rule fails whatever the inconclusive runs turn out to be; inconclusive: no rule failed "
        "but some run was inconclusive; pass: every rule held and every run was decided"))
    rule: str = Field(description="the rule that decided a fail; `inconclusiveRuns` for an inconclusive "
                                  "release; `all` when every rule held")
    reason: str
    checks: list[RuleCheck]


class SignatureChange(Strict):
    scenario: str
    key: str | None
    turn: int | None
    consequence: str
    old_count: int
    new_count: int
    example_run: str | None


class Comparison(Strict):
    against: str
    appeared: list[SignatureChange]
    vanished: list[SignatureChange]
    changed: list[SignatureChange]
    pass_rates: list[dict[str, Any]]


class SuiteReport(Strict):
    suite: str
    manifest: str
    judge: dict[str, Any] | None
    ci_method: str = f"{CI_METHOD} {CI_LEVEL:.0%}"
    release: Release
    totals: dict[str, int]
    scenarios: list[ScenarioResult]
    safety_violations: list[SafetyViolation]
    compare: Comparison | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------- aggregation


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        for aa in (m * (b - m) * x / ((a - 1.0 + 2 * m) * (a + 2 * m)),
                   -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1.0 + 2 * m))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def beta_quantile(q: float, a: float, b: float) -> float:
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, level: float = CI_LEVEL) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of k successes in n trials."""
    alpha = 1.0 - level
    lower = 0.0 if k == 0 else beta_quantile(alpha / 2, k, n - k + 1)
    upper = 1.0 if k == n else beta_quantile(1 - alpha / 2, k + 1, n - k)
    return lower, upper


def pass_interval(k: int, n: int) -> list[float]:
    lower, upper = clopper_pearson(k, n)
    return [round(lower, 4), round(upper, 4)]


def consequence_of(result: RunResult) -> tuple[str | None, int | None, str]:
    d = result.first_divergence
    if result.status == "missing":
        return None, None, "missing"
    if result.status == "error":
        return None, None, "unreadable"
    if d is None:
        return None, None, "failed without a divergence"
    return d.key, d.turn, f"{SEVERITY.get(d.sensitivity, d.sensitivity)} {d.rule or 'judge'}"


def signatures(results: list[RunResult]) -> list[Signature]:
    groups: dict[tuple, list[RunResult]] = {}
    for r in results:
        if r.status in FAILED:
            groups.setdefault(consequence_of(r), []).append(r)
    out = []
    for (key, turn, consequence), runs in groups.items():
        d = runs[0].first_divergence
        out.append(Signature(
            key=key, turn=turn, consequence=consequence, count=len(runs),
            share=round(len(runs) / len(results), 4), example_run=runs[0].run_id,
            runs=[r.run_id for r in runs], rule=d.rule if d else None,
            class_=d.class_ if d else None, sensitivity=d.sensitivity if d else None,
            vetoed=sum(r.status == "vetoed" for r in runs)))
    out.sort(key=lambda s: (-s.count, s.turn if s.turn is not None else 1 << 30, s.key or "", s.consequence))
    return out


def flakiness(results: list[RunResult], sigs: list[Signature]) -> Flakiness:
    failed = sum(r.status in FAILED for r in results)
    pattern: FlakinessPattern
    if failed == 0:
        pattern = "stable pass"
    elif failed == len(results):
        pattern = "all failed"
    else:
        pattern = "one recurring failure" if len(sigs) == 1 else "several distinct failures"
    return Flakiness(failure_rate=round(failed / len(results), 4), distinct_signatures=len(sigs),
                     top_share=round(sigs[0].count / failed, 4) if failed else None, pattern=pattern)


def scenario_result(sid: str, file: str, repetitions: int, results: list[RunResult]) -> ScenarioResult:
    n = len(results)
    passed = sum(r.status == "passed" for r in results)
    eligible = [r.quality_score for r in results
                if r.status in ("passed", "failed") and r.quality_score is not None]
    sigs = signatures(results)
    return ScenarioResult(
        id=sid, file=file, repetitions=repetitions, runs=n, passed=passed,
        failed=sum(r.status in FAILED for r in results), vetoed=sum(r.status == "vetoed" for r in results),
        errors=sum(r.status == "error" for r in results), missing=sum(r.status == "missing" for r in results),
        inconclusive=sum(r.status == "inconclusive" for r in results),
        pass_rate=round(passed / n, 4), pass_rate_ci=pass_interval(passed, n),
        quality_mean=round(sum(eligible) / len(eligible), 4) if eligible else None,
        signatures=sigs, flakiness=flakiness(results, sigs), results=results)


def decide(scenarios: list[ScenarioResult], rules: Any) -> Release:
    """Check the release rules in order of severity; the first that fails decides. A rule that fails
    only if the inconclusive runs fail (counted as passing it holds) does not fail the release: the
    release is then inconclusive, as it is whenever a run was."""
    checks: list[RuleCheck] = []
    violations = [v for s in scenarios for r in s.results for v in r.safety_violations]
    limit = rules.safetyCriticalViolations
    shown = ", ".join(f"{v.scenario}/{v.run_id} {v.key} at {v.event}" for v in violations[:3])
    more = f" (+{len(violations) - 3} more)" if len(violations) > 3 else ""
    checks.append(RuleCheck(
        rule="safetyCriticalViolations", threshold=limit, observed=len(violations),
        held=len(violations) <= limit,
        detail=f"{len(violations)} safety-critical violation(s), at most {limit} allowed"
               + (f": {shown}{more}" if violations else "")))
    need = rules.requiredScenarioPassRate
    low = [s for s in scenarios if s.pass_rate < need]
    sure = [s for s in low if (s.passed + s.inconclusive) / s.runs < need]
    checks.append(RuleCheck(
        rule="requiredScenarioPassRate", threshold=need,
        observed=min((s.pass_rate for s in scenarios), default=None), held=not sure,
        detail=(f"every scenario passed at least {need:.0%} of its runs" if not low else
                "; ".join(f"{s.id} passed {s.passed}/{s.runs} ({s.pass_rate:.0%}) < {need:.0%}"
                          + (f", {s.inconclusive} inconclusive" if s.inconclusive else "") for s in low))))
    floor = rules.nightlyQualityFloor
    if floor is not None:
        rated = [s for s in scenarios if s.quality_mean is not None]
        below = [s for s in rated if s.quality_mean < floor]
        checks.append(RuleCheck(
            rule="nightlyQualityFloor", threshold=floor,
            observed=min((s.quality_mean for s in rated if s.quality_mean is not None), default=None),
            held=not below,
            detail=(f"mean quality of eligible runs >= {floor} in every scenario" if not below else
                    "; ".join(f"{s.id} mean quality {s.quality_mean} < {floor}" for s in below))))
    failing = [c for c in checks if not c.held]
    if failing:
        return Release(decision="fail", rule=failing[0].rule, reason=failing[0].detail, checks=checks)
    undecided = sum(s.inconclusive for s in scenarios)
    if undecided:
        return Release(decision="inconclusive", rule="inconclusiveRuns", checks=checks,
                       reason=f"{undecided} run(s) inconclusive: a key only a judge could decide got no verdict, "
                              "or a safety-critical key was flagged; no release rule failed")
    return Release(decision="pass", rule="all", reason="every release rule held: "
                   + ", ".join(c.rule for c in checks), checks=checks)


def totals(scenarios: list[ScenarioResult]) -> dict[str, int]:
    keys = ("runs", "passed", "failed", "vetoed", "errors", "missing", "inconclusive")
    return {k: sum(getattr(s, k) for s in scenarios) for k in keys}


# ---------------------------------------------------------------- comparing two reports


def _old_signatures(data: Any, path: str) -> tuple[dict[tuple, dict], dict[str, float]]:
    """(scenario, key, turn, consequence) -> signature, and pass rates, from an older suite JSON."""
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
        raise JudgeInputError("not a suite report (no `scenarios` list)", file=path, field="scenarios")
    sigs: dict[tuple, dict] = {}
    rates: dict[str, float] = {}
    for i, scenario in enumerate(data["scenarios"]):
        if not isinstance(scenario, dict) or not isinstance(scenario.get("id"), str):
            raise JudgeInputError("a scenario needs an `id`", file=path, field=f"scenarios.{i}.id")
        if isinstance(scenario.get("pass_rate"), (int, float)):
            rates[scenario["id"]] = scenario["pass_rate"]
        for j, sig in enumerate(scenario.get("signatures") or []):
            where = f"scenarios.{i}.signatures.{j}"
            if not isinstance(sig, dict) or not {"key", "turn", "consequence", "count"} <= set(sig):
                raise JudgeInputError("a signature needs key, turn, consequence and count", file=path, field=where)
            sigs[(scenario["id"], sig["key"], sig["turn"], sig["consequence"])] = sig
    return sigs, rates


def compare(report: SuiteReport, old: Any, path: str) -> Comparison:
    """Signatures that appeared, vanished or changed count since an older suite report."""
    before, old_rates = _old_signatures(old, path)
    now = {(s.id, g.key, g.turn, g.consequence): g for s in report.scenarios for g in s.signatures}

    def change(ident: tuple, old_count: int, new_count: int, example: str | None) -> SignatureChange:
        return SignatureChange(scenario=ident[0], key=ident[1], turn=ident[2], consequence=ident[3],
                               old_count=old_count, new_count=new_count, example_run=example)

    appeared = [change(i, 0, g.count, g.example_run) for i, g in now.items() if i not in before]
    vanished = [change(i, int(g["count"]), 0, g.get("example_run")) for i, g in before.items() if i not in now]
    changed = [change(i, int(before[i]["count"]), g.count, g.example_run) for i, g in now.items()
               if i in before and int(before[i]["count"]) != g.count]
    rates = [{"scenario": s.id, "old": old_rates.get(s.id), "new": s.pass_rate} for s in report.scenarios
             if old_rates.get(s.id) != s.pass_rate]
    return Comparison(against=path, appeared=appeared, vanished=vanished, changed=changed, pass_rates=rates)
