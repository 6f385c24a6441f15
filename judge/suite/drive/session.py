"""`judge run`: drive an agent through a scripted scenario, its stressors and repetitions; record each
run as a trace, grade it as `judge grade` does (judge.grade.GradeSession) and report.

The output folder (new or empty) holds, per variant, its traces (`<variant>/r-N.jsonl`), its grade
report (`<variant>/grade.json`) and, for a stressor, the stressed scenario it was graded against
(`<variant>/scenario.yaml`: `judge grade` it with the traces for the same grade); then `tools.json`
(what the agent was given), `suite.json` (the suite report: pass rates, failure signatures, release
decision) and `run.json` (judge.suite.drive.report.DriveReport); with `--record`, `fixtures.yaml`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.checks.matching import tool_is
from judge.errors import UsageError
from judge.grade import GradeSession
from judge.grade.provenance import input_file, package_versions, sha256_file
from judge.ledger import ExpectedLedger, build_ledger, load_scenario, refuse_draft
from judge.model import GradeReport, InputFile, RunReport, Scenario
from judge.suite.drive.agents import make_agent
from judge.suite.drive.driver import Limits, RunOutcome, RunPlan, drive_run
from judge.suite.drive.files import prepare_folder, write_json, write_yaml
from judge.suite.drive.fixtures import FixtureBook
from judge.suite.drive.record import load_fixtures, recorded_fixtures, with_fixtures
from judge.suite.drive.report import DrivenRun, DriveReport, broken_keys, key_breaks, stress_outcome
from judge.suite.drive.stress import CONTROL, Variant, variants
from judge.suite.drive.suite_report import suite_report
from judge.suite.drive.texts import texts_sha256
from judge.suite.drive.toolkit import toolkit_of
from judge.suite.worker import run_result

Progress = Callable[[int, int, str], None]


@dataclass
class DriveOptions:
    """How to drive: the agent (`--agent`, and for an endpoint `--model`), what to vary and how often,
    the limits, and how to grade."""

    agent: str
    model: str | None = None
    agent_name: str | None = None
    handoff_agent: str | None = None
    stresses: list[str] = field(default_factory=list)
    repeat: int = 1
    seed: int = 0
    limits: Limits = field(default_factory=Limits)
    judge: str | None = "none"
    config_file: str | Path | None = None
    tools: Path | None = None
    fixtures: Path | None = None
    record: bool = False
    allow_draft: bool = False
    floor: float = 1.0


@dataclass
class Subject:
    """One scenario to drive: its file, its scenario (fixtures replaced by a --fixtures file) and ledger."""

    path: Path
    scenario: Scenario
    ledger: ExpectedLedger
    folder: Path


@dataclass
class DriveResult:
    """The report, each variant's grade report, and where everything was written."""

    report: DriveReport
    grades: dict[str, GradeReport]
    folder: Path
    recorded: Path | None = None


def load_subject(path: str | Path, folder: Path, options: DriveOptions) -> Subject:
    """A scripted scenario file, reviewed (lint errors are fixture errors), ready to drive."""
    path = Path(path)
    scenario, lines = load_scenario(path)
    if not options.allow_draft:
        refuse_draft(scenario, file=str(path), lines=lines)
    if scenario.script is None:
        raise UsageError("the scenario has no `script:` (the user messages and tool fixtures `judge run` drives "
                         "the agent with: docs/drive.md)", file=str(path), field="script")
    ledger = build_ledger(scenario, lines, file=str(path))
    if options.fixtures is not None:
        scenario = with_fixtures(scenario, load_fixtures(options.fixtures))
    return Subject(path, scenario, ledger, folder)


class Driver:
    """One `judge run`: the agents, the grade session, the runs so far."""

    def __init__(self, options: DriveOptions, folder: Path, progress: Progress | None) -> None:
        if options.repeat < 1:
            raise UsageError("--repeat must be at least 1", field="--repeat")
        self.options, self.folder, self.progress = options, folder, progress
        self.agent = make_agent(options.agent, model=options.model, name=options.agent_name)
        self.handoff = make_agent(options.handoff_agent, model=options.model) if options.handoff_agent else None
        self.session = GradeSession.open(options.judge, config_file=options.config_file)
        self.runs: list[DrivenRun] = []
        self.reports: dict[str, list[RunReport]] = {}
        self.results: dict[str, list[dict[str, Any]]] = {}
        self.outcomes: list[RunOutcome] = []
        self.done = 0
        self.total = 0

    def agent_header(self) -> dict[str, Any]:
        """The run header's `agent` metadata: who was driven and, if another, who took over at a handoff."""
        out = {"kind": self.agent.kind, "spec": self.options.agent}
        if self.handoff is not None:
            out["handoff"] = {"kind": self.handoff.kind, "spec": self.options.handoff_agent, "name": self.handoff.name}
        return out

    def fixtures_source(self, subject: Subject) -> dict[str, Any]:
        source = self.options.fixtures or subject.path
        return {"file": str(source), "sha256": sha256_file(source)}

    def run_variant(self, subject: Subject, variant: Variant, key: str, tools: list[dict], tools_file: str) -> str:
        """Drive and grade every repetition of one variant; returns the scenario file it was graded against."""
        vdir = subject.folder / variant.slug
        vdir.mkdir(parents=True, exist_ok=True)
        if variant.is_control:
            scenario_file = subject.path
        else:
            scenario_file = write_yaml(vdir / "scenario.yaml", variant.scenario.model_dump(
                by_alias=True, exclude_unset=True, mode="json"),
                header=f"# {subject.path} under the stressor {variant.name} (written by `judge run`; "
                       "graded as it stands)")
        scenario_input = InputFile(**input_file(scenario_file))
        for rep in range(1, self.options.repeat + 1):
            plan = RunPlan(
                run_id=f"{subject.scenario.id}-{variant.slug}-r{rep}", scenario_id=subject.scenario.id,
                trace=vdir / f"r-{rep}.jsonl", seed=self.options.seed + rep - 1, agent=self.agent,
                handoff_agent=self.handoff, tools=tools, tools_file=tools_file,
                mode="record" if self.options.record else "replay",
                metadata={"driven_by": "judge run", "stress": variant.name, "seed": self.options.seed + rep - 1,
                          "repetition": rep, "fixtures": self.fixtures_source(subject),
                          "agent": self.agent_header(), "texts_sha256": texts_sha256()})
            if self.progress:
                self.progress(self.done, self.total, f"{variant.name} run {rep}")
            script = variant.scenario.script
            assert script is not None  # only a scenario with a script is driven (the plan refuses others)
            outcome = drive_run(plan, script, FixtureBook(script), self.options.limits)
            self.outcomes.append(outcome)
            run = self.session.grade_run(variant.ledger, plan.trace, floor=self.options.floor, digest=True,
                                         scenario=scenario_input, never_pass=never_a_pass(outcome, variant))
            self.reports.setdefault(key, []).append(run)
            self.results.setdefault(key, []).append(run_result(run, key, str(plan.trace)))
            self.runs.append(DrivenRun(
                variant=key, repetition=rep, run_id=plan.run_id, trace=str(plan.trace), seed=plan.seed,
                outcome=run.outcome, outcome_reasons=run.outcome_reasons, agent_failure=outcome.failure,
                turns=outcome.turns, steps=outcome.steps, tool_calls=sum(outcome.calls.values()),
                wall_s=outcome.wall_s, first_divergence=run.first_divergence, broken=broken_keys(run)))
            self.done += 1
        write_json(vdir / "grade.json", self.session.report(self.reports[key], floor=self.options.floor)
                   .model_dump(mode="json", by_alias=True))
        return str(scenario_file)


def never_a_pass(outcome: RunOutcome, variant: Variant) -> list[str]:
    """Why a driven run is never a pass: the agent stopped it (crash, hang, garbage, a limit), or its
    stressor never bit. Its grade settles it inconclusive with these reasons (a run that failed stays
    failed, these added): judge.grade.outcome.settle's `never_pass`."""
    reasons = [f"the agent stopped the run: {outcome.failure}"] if outcome.failure else []
    if variant.exercise and not any(tool_is(called, pattern)
                                    for called in outcome.calls for pattern in variant.exercise):
        reasons.append(f"the stressor {variant.name} was not exercised: the agent never called "
                       f"{' or '.join(variant.exercise)}")
    return reasons


def drive(scenario_path: str | Path, folder: str | Path, options: DriveOptions,
          progress: Progress | None = None) -> DriveResult:
    """Drive the agent through the scenario's script: the control and each `options.stresses` (`all`:
    the control and every stressor the scenario supports), `options.repeat` times each."""
    folder = Path(folder)
    subject = load_subject(scenario_path, folder, options)
    chosen, skipped = variants(subject.scenario, subject.ledger, options.stresses, file=str(scenario_path))
    if options.record and (len(chosen) != 1 or options.repeat != 1):
        raise UsageError("--record keeps the tool results of one run: no --stress, no --repeat", field="--record")
    prepare_folder(folder)
    driver = Driver(options, folder, progress)
    tools, tools_file = tools_for(subject, options, folder)
    driver.total = len(chosen) * options.repeat
    files, notes = {}, {}
    for variant in chosen:
        files[variant.name] = driver.run_variant(subject, variant, variant.name, tools, tools_file)
        notes[variant.name] = variant.notes
    order = [v.name for v in chosen]
    control_broken = {b.key for r in driver.runs if r.variant == CONTROL for b in r.broken}
    stresses = [stress_outcome(name, files[name], [r for r in driver.runs if r.variant == name], control_broken,
                               notes[name]) for name in order]
    suite = suite_report(f"judge run {subject.scenario.id}", str(scenario_path), driver, order, files,
                         {"packages": package_versions(), "inputs": {"scenario": input_file(scenario_path)}})
    report = DriveReport(
        scenario=subject.scenario.id, file=str(scenario_path), agent=agent_record(driver, options),
        repetitions=options.repeat, seed=options.seed, fixtures=driver.fixtures_source(subject), stresses=stresses,
        keys=key_breaks(subject.ledger, driver.runs, order), runs=driver.runs, skipped=skipped, suite=suite,
        warnings=list(dict.fromkeys(w for rs in driver.reports.values() for r in rs for w in r.warnings)))
    recorded = None
    if options.record:
        recorded = write_yaml(folder / "fixtures.yaml", recorded_fixtures(subject.scenario, driver.runs[0].run_id,
                                                                         driver.outcomes[0].tools))
    write_json(folder / "suite.json", suite.model_dump(mode="json", by_alias=True))
    write_json(folder / "run.json", report.model_dump(mode="json", by_alias=True))
    grades = {name: driver.session.report(rs, floor=options.floor) for name, rs in driver.reports.items()}
    return DriveResult(report, grades, folder, recorded)


def tools_for(subject: Subject, options: DriveOptions, folder: Path) -> tuple[list[dict[str, Any]], str]:
    tools = toolkit_of(subject.scenario, options.tools)
    path = write_json(folder / "tools.json", {"tools": tools})
    return tools, str(path.resolve())


def agent_record(driver: Driver, options: DriveOptions) -> dict[str, Any]:
    out = {"kind": driver.agent.kind, "spec": options.agent, "name": driver.agent.name}
    if options.model:
        out["model"] = options.model
    if options.handoff_agent:
        out["handoff"] = options.handoff_agent
    return out
