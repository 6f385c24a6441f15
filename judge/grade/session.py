"""One grade as every face runs it: the judge and its fingerprint, provenance, how far the judge is
trusted (authority and calibration), the calibration policy (calibrated confidences, review marks,
stale warnings), each run's outcome and the exit code. `judge grade`, the HTTP service and the suite
workers all grade through a GradeSession, so they cannot drift apart."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from judge.config import GradePolicy, grade_policy, load_judge_config, project_root
from judge.errors import ConfigError, UsageError
from judge.grade.calibration import CalibrationState, apply_record, calibration_state, labels_dir, records_dir
from judge.grade.outcome import combine, settle
from judge.grade.provenance import input_file
from judge.grade.run import assess_trace
from judge.grade.trust import Trust, judge_trust
from judge.judges.base import Judge
from judge.ledger import ExpectedLedger, load_ledger, policy_ledger
from judge.model import GradeReport, InputFile, Inputs, JudgeFingerprint, ReportJudge, RunReport, as_fingerprint
from judge.text.similarity import using_store
from judge.trace.toolkit import Toolkit


class GradeSession:
    """A judge (None: deterministic checks only) with its configured name, authority and policy.

    The calibration record is looked up once (by the judge's exact fingerprint and the label set's
    sha256): it decides whether a `calibrated` judge is binding and gives every run calibrated
    confidences and review marks; without one, `stale_reasons` says why, and `stale = "error"`
    refuses to grade (a ConfigError). `on_judge_error` overrides the configured policy."""

    def __init__(self, judge: Judge | None = None, judge_name: str | None = None, *,
                 config_file: str | Path | None = None, authority: str | None = None,
                 on_judge_error: str | None = None, toolkit: Toolkit | None = None) -> None:
        self.judge = judge
        self.toolkit = toolkit  # the tools the agent was given (--tools); None: each run header's `tools`
        self.judge_name = judge_name or getattr(getattr(judge, "config", None), "name", None)
        self.config_file = config_file
        self.policy = grade_policy(config_file=config_file) if judge is not None else GradePolicy()
        if on_judge_error is not None:
            self.policy = self.policy.model_copy(update={"on_judge_error": on_judge_error})
        self.judge_print: JudgeFingerprint | None = None  # the judge's fingerprint, its name first
        # Where `authorised` (plan: true) keeps its embeddings: the judge's cache (none: the cache folder's file).
        self.similarity_cache: bool | str = getattr(getattr(judge, "config", None), "cache", True)
        self._similarity_store: Any = None
        self.trust: Trust | None = None
        self._calibration = CalibrationState()
        if judge is not None:
            own = as_fingerprint(judge.fingerprint(), judge=self.judge_name)
            self.judge_print = own.named(self.judge_name)
            directory = records_dir(project_root())
            self._calibration = calibration_state(own, directory, self.judge_name or "judge", labels_dir(directory))
            if self.stale_reasons and self.policy.stale == "error":
                raise ConfigError(f"{self.stale_warning()} (refusing to grade: [tool.judge] stale = \"error\")")
            authority = authority or getattr(getattr(judge, "config", None), "authority", None) or "calibrated"
            self.trust = judge_trust(authority, self._calibration)

    @classmethod
    def open(cls, judge: str | None, *, config_file: str | Path | None = None,
             on_judge_error: str | None = None, toolkit: Toolkit | None = None) -> GradeSession:
        """`judge`: "none" for deterministic checks only, a configured judge name, or None for the
        configured default (`[tool.judge].default`, else the embedded offline judge `local`).
        `toolkit`: the tools the agent was given (judge.trace.toolkit.read_toolkit of `--tools`)."""
        if judge == "none":
            return cls(config_file=config_file, on_judge_error=on_judge_error, toolkit=toolkit)
        from judge.judges.factory import make_judge

        cfg = load_judge_config(judge, config_file=config_file)
        return cls(make_judge(cfg), cfg.name, config_file=config_file, authority=cfg.authority,
                   on_judge_error=on_judge_error, toolkit=toolkit)

    @property
    def stale_reasons(self) -> list[str]:
        """Why the judge's calibration record does not apply (none found, another fingerprint or
        label set, not certified ...); empty when it is current, or when there is no judge."""
        return self._calibration.stale_reasons

    @property
    def calibration_record(self) -> Any:
        """The judge's current calibration record (calibration.CalibrationRecord), or None."""
        return self._calibration.record

    @property
    def calibration_path(self) -> Path | None:
        """The file of `calibration_record` (None without one)."""
        return self._calibration.path if self._calibration.record is not None else None

    @property
    def binding(self) -> bool:
        """Whether the judge's violations decide keys (its authority and calibration; judge.grade.trust)."""
        return self.trust is not None and self.trust.binding

    def stale_warning(self) -> str | None:
        """The one-line warning a stale calibration adds to every run, or None when it is current."""
        if not self.stale_reasons:
            return None
        calibrated = self.trust is not None and self.trust.authority == "calibrated"
        advisory = " (so the judge is advisory)" if calibrated else ""
        return (f"calibration of judge {self.judge_name or 'judge'!r} is stale: " + "; ".join(self.stale_reasons)
                + advisory)

    @property
    def fingerprint(self) -> dict[str, Any] | None:
        """The judge's fingerprint with its name, as JSON data (None: deterministic checks only)."""
        return None if self.judge_print is None else self.judge_print.dump()

    def similarity_store(self) -> Any:
        """The `similarity` namespace of the run's cache (judge.judges.similarity_cache), opened on first
        use; None when the judge's `cache` is false."""
        if self._similarity_store is None and self.similarity_cache is not False:
            from judge.judges.similarity_cache import similarity_store

            self._similarity_store = similarity_store(self.similarity_cache)
        return self._similarity_store

    def grade_run(self, ledger: ExpectedLedger, source: Any, *, floor: float = 1.0, name: str | None = None,
                  inputs: dict[str, Any] | Inputs | None = None, warn_stale: bool = True, digest: bool = False,
                  scenario: InputFile | None = None, never_pass: Iterable[str] = ()) -> RunReport:
        """Grade one trace (a path, or parsed lines), apply the calibration policy and settle its outcome,
        once. `inputs`: the run's `provenance.inputs` as given; else with `digest` the trace file's
        sha256, computed while reading it, beside `scenario`. `never_pass`: why the run is never a pass
        (judge.grade.outcome.settle: a driven run the agent stopped)."""
        skipped = None
        if self.judge is not None:  # (a deterministic grade imports nothing of judge.judges)
            from judge.judges.redis_cache import skipped_calls

            skipped = skipped_calls()
        with using_store(self.similarity_store):
            run = assess_trace(ledger, source, judge=self.judge, name=name, binding=self.binding, digest=digest,
                               fingerprint=self.judge_print, scenario=scenario, toolkit=self.toolkit,
                               inputs=None if inputs is None else Inputs.model_validate(inputs))
        warnings: list[str] = []
        if skipped is not None:  # a shared cache that could not be reached: said on every run that went without
            from judge.judges.redis_cache import skip_warnings

            warnings += skip_warnings(skipped)
        if self._calibration.record is not None:
            apply_record(run, self._calibration.record)
        if warn_stale and (stale := self.stale_warning()) is not None:  # (None: no stale reasons)
            warnings.append(stale)
        return settle(run, floor=floor, on_judge_error=self.policy.on_judge_error, review=self.policy.review,
                      warnings=warnings, never_pass=never_pass)

    def grade_files(self, scenario: str | Path | None, traces: Iterable[str | Path | Any], *,
                    floor: float = 1.0, allow_draft: bool = False,
                    progress: Callable[[int, int], None] | None = None,
                    policy: str | Path | None = None) -> GradeReport:
        """Grade trace files against a scenario file, or against a policy (`policy`: a bundled name,
        a project policy's name or a file, with `scenario` None), with the sha256 of each input in
        provenance (an unreviewed draft is refused unless `allow_draft`). `progress(done, total)` is
        called before the first run and after each."""
        if (scenario is None) == (policy is None):
            raise UsageError("grade against a scenario or a policy, not both (a scenario may `extends:` policies)"
                             if scenario is not None else "grade against a scenario or a policy: neither was given")
        scenario_source: str | Path | None
        if policy is not None:
            ledger = policy_ledger(policy, allow_draft=allow_draft)
            scenario_source = ledger.policy
        else:
            assert scenario is not None  # exactly one of the two (above)
            ledger = load_ledger(scenario, allow_draft=allow_draft)
            scenario_source = scenario
        assert scenario_source is not None  # policy_ledger names its file
        traces = list(traces)
        runs = []
        if progress:
            progress(0, len(traces))
        scenario_input = InputFile(**input_file(scenario_source))
        for trace in traces:
            # a trace file is hashed while it is graded (one read), not by a second pass over it
            is_file = isinstance(trace, (str, Path))
            runs.append(self.grade_run(ledger, trace, floor=floor, digest=is_file, scenario=scenario_input,
                                       inputs=None if is_file else Inputs(scenario=scenario_input)))
            if progress:
                progress(len(runs), len(traces))
        return self.report(runs, floor=floor)

    def judge_report(self) -> ReportJudge | None:
        """The report's `judge`: the fingerprint, and whether the judge was binding and why."""
        if self.judge_print is None:
            return None
        return ReportJudge.model_validate({**self.judge_print.dump(), **(self.trust.as_report() if self.trust else {})})

    def judge_object(self) -> dict[str, Any] | None:
        """The report's `judge` as JSON data (a suite report carries it so)."""
        found = self.judge_report()
        return None if found is None else found.model_dump(mode="json")

    def report(self, runs: list[RunReport], *, floor: float = 1.0) -> GradeReport:
        """The grade report of runs graded by this session (`grade_run`), with the session's judge."""
        return GradeReport(judge=self.judge_report(), floor=floor, runs=runs)

    def exit_code(self, report: GradeReport) -> int:
        """0 every run passed; 1 any failed; else 3 any inconclusive (judge.grade.outcome)."""
        return exit_code(report)


def exit_code(report: GradeReport) -> int:
    """0 every run passed; 1 any failed (a veto, a violation, review = "fail"); else 3 any inconclusive."""
    return combine(run.outcome for run in report.runs)
