"""`judge run A --pair`: drive both halves of a pair (the scenario and the one its `pair` names, found
beside it) with the same agent and judge whether it behaved state-sensitively.

The seed's paired scenarios: the conversation is the same but for the turn where the user changes the
state ("keep the original database" / "migrate it"), so the correct action changes. Verdicts:
`state-sensitive` (every run of both halves passed, and the halves' tool calls differ),
`not-state-sensitive` (some run of a half failed: it names the half and its first divergence: the
agent did what the other half wanted, a memorised refusal or a habitual sequence),
`same-actions` (both passed with the same tool calls: the pair's ledgers do not tell the halves apart,
a fault of the pair, not of the agent), `inconclusive` (a run was inconclusive and none failed).
"""

from __future__ import annotations

import json
from pathlib import Path

from judge.errors import UsageError
from judge.grade.provenance import input_file, package_versions
from judge.ledger import pair_path
from judge.suite.drive.files import prepare_folder, write_json
from judge.suite.drive.report import DrivenRun, DriveReport, PairHalf, PairVerdict, stress_outcome
from judge.suite.drive.session import (
    DriveOptions,
    Driver,
    DriveResult,
    Progress,
    Subject,
    agent_record,
    load_subject,
    tools_for,
)
from judge.suite.drive.stress import control
from judge.suite.drive.suite_report import suite_report


def drive_pair(scenario_path: str | Path, folder: str | Path, options: DriveOptions,
               progress: Progress | None = None) -> DriveResult:
    """Drive the scenario and its pair (the control of each, `options.repeat` times) and judge the pair."""
    if options.stresses or options.record:
        raise UsageError("--pair drives the control of both halves: no --stress, no --record", field="--pair")
    folder = Path(folder)
    first = load_subject(scenario_path, folder / "a", options)
    other = pair_path(first.scenario, scenario_path)
    if other is None:
        raise UsageError(f"the scenario names no pair found beside it (pair: {first.scenario.pair!r})",
                         file=str(scenario_path), field="pair")
    second = load_subject(other, folder / "b", options)
    prepare_folder(folder)
    driver = Driver(options, folder, progress)
    driver.total = 2 * options.repeat
    halves: list[Subject] = [first, second]
    files, outcomes = {}, {}
    for subject in halves:
        subject.folder = folder / subject.scenario.id
        tools, tools_file = tools_for(subject, options, subject.folder)
        start = len(driver.outcomes)
        files[subject.scenario.id] = driver.run_variant(subject, control(subject.scenario, subject.ledger),
                                                        subject.scenario.id, tools, tools_file)
        outcomes[subject.scenario.id] = driver.outcomes[start:]
    order = [s.scenario.id for s in halves]
    verdict = pair_verdict(halves, driver.runs, outcomes, files)
    stresses = [stress_outcome(sid, files[sid], [r for r in driver.runs if r.variant == sid], set(), [])
                for sid in order]
    suite = suite_report(f"judge run {first.scenario.id} --pair", str(scenario_path), driver, order, files,
                         {"packages": package_versions(), "inputs": {"scenario": input_file(scenario_path),
                                                                     "pair": input_file(other)}})
    report = DriveReport(scenario=first.scenario.id, file=str(scenario_path), agent=agent_record(driver, options),
                         repetitions=options.repeat, seed=options.seed, fixtures=driver.fixtures_source(first),
                         stresses=stresses, keys=[], runs=driver.runs, pair=verdict, suite=suite)
    write_json(folder / "suite.json", suite.model_dump(mode="json", by_alias=True))
    write_json(folder / "run.json", report.model_dump(mode="json", by_alias=True))
    grades = {name: driver.session.report(rs, floor=options.floor) for name, rs in driver.reports.items()}
    return DriveResult(report, grades, folder)


def pair_verdict(halves: list[Subject], runs: list[DrivenRun], outcomes: dict, files: dict) -> PairVerdict:
    """The verdict of a driven pair (see the module's docstring)."""
    parts, calls = [], {}
    for subject in halves:
        sid = subject.scenario.id
        mine = [r for r in runs if r.variant == sid]
        calls[sid] = [[f"{u.tool} {json.dumps(u.args, sort_keys=True, default=str)}" for u in o.tools]
                      for o in outcomes[sid]]
        parts.append(PairHalf(scenario=sid, file=files[sid], runs=len(mine),
                              passed=sum(r.outcome == "pass" for r in mine),
                              tools=[[u.tool for u in o.tools] for o in outcomes[sid]]))
    failing = [(s, r) for s in halves for r in runs if r.variant == s.scenario.id and r.outcome == "fail"]
    if failing:
        subject, run = failing[0]
        d = run.first_divergence or (run.broken[0] if run.broken else None)
        where = f": {d.key} at turn {d.turn}{', ' + d.event if d.event else ''} ({d.rule or 'judge'})" if d else ""
        names = sorted({s.scenario.id for s, _ in failing})
        return PairVerdict(verdict="not-state-sensitive", halves=parts,
                           reason=f"{' and '.join(names)} failed{where}: the agent's action did not follow the state "
                                  "that makes the halves differ")
    if any(r.outcome == "inconclusive" for r in runs):
        return PairVerdict(verdict="inconclusive", halves=parts, reason="a run was inconclusive and none failed")
    a, b = (calls[s.scenario.id] for s in halves)
    if a == b:
        return PairVerdict(verdict="same-actions", halves=parts,
                           reason="both halves passed with the same tool calls: their ledgers do not tell them "
                                  "apart (a rule of one half should forbid or expect what the other does)")
    return PairVerdict(verdict="state-sensitive", halves=parts,
                       reason="every run of both halves passed, with different actions where the state differs")
