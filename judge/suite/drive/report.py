"""What `judge run` reports (`run.json`): every driven run, the stressor that first broke each key, the
pair verdict, and the suite report of it all (judge.suite.result: pass rate, failure signatures,
release decision), each variant a scenario of that report."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from judge.model import Divergence, Outcome, RunReport, Strict
from judge.suite.result import SuiteReport


class BrokenKey(Strict):
    """A key a run violated: where first, by which rule (null: the judge)."""

    key: str
    turn: int | None
    event: str | None
    rule: str | None = None


class DrivenRun(Strict):
    """One run `judge run` drove and graded."""

    variant: str
    repetition: int
    run_id: str
    trace: str
    seed: int
    outcome: Outcome
    outcome_reasons: list[str] = Field(default_factory=list)
    agent_failure: str | None = Field(default=None, description=(
        "why the agent stopped the run (crash, hang, garbage, a limit): the run is then never a pass"))
    turns: int
    steps: int = Field(description="agent answers asked for")
    tool_calls: int
    wall_s: float
    first_divergence: Divergence | None = None
    broken: list[BrokenKey] = Field(default_factory=list, description="every key the run violated, first event each")


class StressOutcome(Strict):
    """One variant (the control or a stressor) over its repetitions."""

    stress: str
    scenario_file: str = Field(description="the variant's scenario, as graded (`judge grade` it with the traces)")
    runs: int
    passed: int
    failed: int
    inconclusive: int
    broken: list[str] = Field(description="keys any of its runs violated")
    new: list[str] = Field(description="of those, the keys no control run violated: what the stressor broke")
    first_divergence: Divergence | None = Field(default=None, description="of its first failing run")
    notes: list[str] = Field(default_factory=list, description="what the stressor did to the script and ledger")


class KeyBreak(Strict):
    """One ledger key: the first stressor (in the order run) that broke it, where the control did not."""

    key: str
    class_: str = Field(alias="class")
    sensitivity: str
    broken_in_control: bool
    first_broken_by: str | None = Field(default=None, description="null: no stressor broke it")
    at: BrokenKey | None = None


class PairHalf(Strict):
    scenario: str
    file: str
    runs: int
    passed: int
    tools: list[list[str]] = Field(description="per run, the tools called in order")


class PairVerdict(Strict):
    """Both halves of a `pair` driven with the same agent."""

    verdict: Literal["state-sensitive", "not-state-sensitive", "same-actions", "inconclusive"]
    reason: str
    halves: list[PairHalf]


class DriveReport(Strict):
    """`run.json`: what `judge run` drove, what broke, and the suite report of it."""

    scenario: str
    file: str
    agent: dict[str, Any]
    repetitions: int
    seed: int
    fixtures: dict[str, Any] = Field(description="where the tool results came from: file and sha256")
    stresses: list[StressOutcome]
    keys: list[KeyBreak]
    runs: list[DrivenRun]
    pair: PairVerdict | None = None
    skipped: list[str] = Field(default_factory=list, description="stressors `all` left out, and why")
    suite: SuiteReport
    warnings: list[str] = Field(default_factory=list)


def broken_keys(run: RunReport) -> list[BrokenKey]:
    """Every key the run violated, with its earliest violating event (in checkpoint order)."""
    seen: dict[str, BrokenKey] = {}
    for checkpoint in run.checkpoints:
        for finding in checkpoint.findings:
            if finding.verdict == "violated" and finding.key not in seen:
                seen[finding.key] = BrokenKey(key=finding.key, turn=finding.turn, event=finding.evidence_event,
                                              rule=finding.rule)
    first = run.first_divergence
    if first is not None:  # the first divergence is the key's earliest event
        seen[first.key] = BrokenKey(key=first.key, turn=first.turn, event=first.event, rule=first.rule)
    return list(seen.values())


def stress_outcome(name: str, file: str, runs: list[DrivenRun], control_broken: set[str],
                   notes: list[str]) -> StressOutcome:
    """The summary of one variant's runs."""
    broken = list(dict.fromkeys(b.key for r in runs for b in r.broken))
    failing = next((r for r in runs if r.outcome == "fail"), None)
    return StressOutcome(
        stress=name, scenario_file=file, runs=len(runs), passed=sum(r.outcome == "pass" for r in runs),
        failed=sum(r.outcome == "fail" for r in runs), inconclusive=sum(r.outcome == "inconclusive" for r in runs),
        broken=broken, new=[k for k in broken if k not in control_broken],
        first_divergence=failing.first_divergence if failing else None, notes=notes)


def key_breaks(ledger: Any, runs: list[DrivenRun], order: list[str], control: str = "control") -> list[KeyBreak]:
    """Per ledger key: broken in the control? the first stressor, in `order`, that broke it anyway."""
    in_control = {b.key for r in runs if r.variant == control for b in r.broken}
    out = []
    for key, history in ledger.keys.items():
        first = None
        for name in (n for n in order if n != control):
            hit = next((b for r in runs if r.variant == name for b in r.broken if b.key == key), None)
            if hit is not None:
                first = (name, hit)
                break
        out.append(KeyBreak(key=key, class_=history.class_, sensitivity=history.sensitivity,
                            broken_in_control=key in in_control,
                            first_broken_by=first[0] if first and key not in in_control else None,
                            at=first[1] if first and key not in in_control else None))
    return out
