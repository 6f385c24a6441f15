"""`POST /v1/grade` as a library call: the request body, the judges a server keeps, the grading.

The HTTP service grades exactly as `judge grade --json` does: same ledger, same grader, same
calibration step, same JSON rendering, so a report fetched over HTTP is the report the CLI writes
(the `trace` field names what the client called the trace). Nothing here prints or exits.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from judge.errors import FixtureError, JudgeInputError
from judge.model import GradeReport

SCENARIO_NAME = "request.scenario"
POLICY_NAME = "request.policy"


class ScenarioRequest(Protocol):
    """A request body naming a scenario (POST /v1/grade's, POST /v1/audit-summary's); a grade
    request may name a policy instead, and allow a draft."""

    @property
    def scenario(self) -> dict[str, Any] | str | None: ...

    @property
    def scenario_name(self) -> str | None: ...


class GradeRequest(BaseModel):
    """The body of `POST /v1/grade`."""

    model_config = ConfigDict(extra="forbid")

    scenario: dict[str, Any] | str | None = Field(
        default=None,
        description="The scenario (the reviewed ledger fixture) as a JSON object, or the text of a "
                    "scenario file (YAML or JSON; errors then name its lines). Its `extends` may name bundled "
                    "policies only. Omitted: give `policy`.")
    policy: dict[str, Any] | str | None = Field(
        default=None,
        description="Grade against a policy instead of a scenario (`judge grade --policy`): a bundled policy's "
                    "name (`agent-safety`) or the policy as a JSON object (its `extends` may name bundled policies "
                    "only). Never a path: a request does not make the server read a file of its choosing.")
    traces: list[list[dict[str, Any]] | str] = Field(
        min_length=1,
        description="One entry per run: a list of the run header then its events (parsed JSONL "
                    "lines), or the JSONL text of the trace file.")
    judge: str | None = Field(
        default=None,
        description='"none": deterministic checks only; a judge name from [tool.judge.judges]; '
                    "omitted: the configured default judge, as `judge grade` does.")
    floor: float = Field(default=1.0, ge=0.0, le=1.0,
                         description="Below 1.0, runs whose only violations are non-safety ones pass "
                                     "while their quality score is >= floor.")
    scenario_name: str | None = Field(
        default=None, max_length=500,
        description=f"What error messages call the scenario (default {SCENARIO_NAME!r}), e.g. its file name.")
    allow_draft: bool = Field(default=False, description=(
        "Grade a scenario still marked `draft: true` (proposed by `judge draft`, not yet reviewed); "
        "otherwise such a scenario is refused as bad input, as `judge grade` refuses it without --allow-draft."))
    trace_names: list[str] | None = Field(
        default=None,
        description="One name per trace, e.g. its file path: the report's `trace` field and the "
                    "file error messages name (default 'traces[0]', 'traces[1]', ...).")
    on_judge_error: Literal["inconclusive", "ignore"] | None = Field(
        default=None,
        description="What a key only a judge could decide does to its run when the judge gave no verdict: "
                    "`inconclusive` (exit code 3) or `ignore`; omitted: the server's [tool.judge].on_judge_error.")

    @model_validator(mode="after")
    def _scenario_or_policy(self) -> GradeRequest:
        if (self.policy is None) == (self.scenario is None):
            raise ValueError("give `scenario` or `policy` (one of them)")
        return self

    @field_validator("trace_names")
    @classmethod
    def _names_fit(cls, names: list[str] | None, info: ValidationInfo) -> list[str] | None:
        traces = info.data.get("traces")
        if names is not None and traces is not None and len(names) != len(traces):
            raise ValueError(f"{len(names)} names for {len(traces)} traces")
        return names


@dataclass
class Graded:
    report: GradeReport
    exit_code: int  # what `judge grade` would exit with: 0 passed, 1 a failing run, 3 inconclusive

    def to_json(self) -> str:
        from judge.render import report_to_json

        return report_to_json(self.report)


class JudgePool:
    """The judges a server has built, by name, made once and shared by every request (an
    embedding model loads once; the LLM judge's verdict cache is safe for concurrent writers)."""

    def __init__(self, config_file: str | Path | None = None) -> None:
        self.config_file = Path(config_file) if config_file is not None else None
        self._judges: dict[str, tuple[Any, str]] = {}
        self._authority: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, name: str | None) -> tuple[Any, str]:
        """(judge, its configured name); `name=None` is the configured default judge."""
        from judge.config import configured_judges, load_judge_config
        from judge.judges import make_judge

        if name is None:
            name = configured_judges(config_file=self.config_file)[1]
        with self._lock:
            if name not in self._judges:
                cfg = load_judge_config(name, config_file=self.config_file)
                self._judges[name] = (make_judge(cfg), cfg.name)
                self._authority[cfg.name] = cfg.authority
            return self._judges[name]

    def authority(self, name: str) -> str:
        """The configured `authority` of a judge `get` has built."""
        return self._authority.get(name, "calibrated")

    def describe(self) -> dict[str, Any]:
        """Every configured judge: backend, model, fingerprint and calibration status. Building a
        judge loads no model (the embedding model loads on its first verdict)."""
        from judge.config import configured_judges, load_judge_config, project_root
        from judge.grade import check_calibration, labels_dir, records_dir
        from judge.judges import backend_spec

        tables, default, source = configured_judges(config_file=self.config_file)
        directory = records_dir(project_root())
        labels = labels_dir(directory)  # the label set is checked as `judge grade` checks it
        judges = []
        for name in sorted(tables):
            item: dict[str, Any] = {"name": name, "default": name == default}
            try:
                cfg = load_judge_config(name, config_file=self.config_file)
                item.update(backend=cfg.backend, model=cfg.model,
                            prompt=cfg.prompt if backend_spec(cfg.backend).prompted else None,
                            authority=cfg.authority)
                judge, _ = self.get(name)
                fingerprint = judge.fingerprint()
                item["fingerprint"] = fingerprint
                item["calibration"] = _calibration_status(check_calibration(fingerprint, directory, name, labels))
            except Exception as exc:  # one broken table must not hide the others
                if not _is_input_error(exc):
                    raise
                item["error"] = str(exc)
            judges.append(item)
        return {"default": default, "config": str(source) if source else None,
                "records": str(directory), "judges": judges}


def _calibration_status(reasons: list[str]) -> dict[str, Any]:
    if not reasons:
        return {"status": "current", "reasons": []}
    missing = any(r.startswith("no calibration record") for r in reasons)
    return {"status": "missing" if missing else "stale", "reasons": reasons}


def _is_input_error(exc: BaseException) -> bool:
    from calibration.errors import CalibrationInputError

    return isinstance(exc, (JudgeInputError, CalibrationInputError))


def request_ledger(request: ScenarioRequest):
    """The expected ledger of the request's scenario; a FixtureError names the field (and, for
    scenario text, the line) just as `judge lint` would."""
    from judge.ledger import (
        build_ledger,
        expand_extends,
        policy_from_data,
        policy_ledger,
        refuse_draft,
        validate_scenario,
    )

    name = request.scenario_name or SCENARIO_NAME
    allow_draft = getattr(request, "allow_draft", False)  # the audit endpoint's requests have no such flag
    policy = getattr(request, "policy", None)
    if isinstance(policy, str):
        return policy_ledger(policy, allow_draft=allow_draft, paths=False)
    if isinstance(policy, dict):
        return policy_from_data(policy, request.scenario_name or POLICY_NAME, allow_draft=allow_draft)
    if isinstance(request.scenario, str):
        return _ledger_from_text(request.scenario, name, allow_draft)
    scenario = validate_scenario(request.scenario, name)  # type: ignore[arg-type]  # no policy: a scenario dict (the request model requires one of the two)
    inherited = expand_extends(scenario, name, paths=False)
    ledger = build_ledger(inherited.scenario, None, file=name)
    ledger.origins = inherited.origins
    if not allow_draft:
        refuse_draft(scenario, file=name)
    return ledger


def _ledger_from_text(text: str, name: str, allow_draft: bool = False):
    """Scenario file text: read through the same loader as a file, so lines are named (text a client
    calls `*.json` is JSON only, as such a file is)."""
    _refuse_aliases(text, name)
    try:
        return _text_ledger(text, allow_draft, name.lower().endswith(".json"))
    except JudgeInputError as exc:
        exc.file = name  # the client's name for it, never our temporary path
        raise


def _refuse_aliases(text: str, name: str) -> None:
    """YAML aliases expand on reading: a few hundred bytes of nested `*a` can ask for gigabytes (the
    'billion laughs'). A server reads no aliases; a scenario file needs none."""
    if "*" not in text:
        return
    import yaml

    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.AliasToken):
                raise FixtureError("YAML aliases (*name) are not accepted by the service; write the "
                                   "values out", file=name, line=token.start_mark.line + 1)
    except yaml.YAMLError:
        return  # not YAML at all: the loader names the problem


@lru_cache(maxsize=32)
def _text_ledger(text: str, allow_draft: bool = False, json_only: bool = False):
    """Reading YAML with line numbers costs ~15 ms; a CI server grades the same few scenarios over
    and over. A ledger is read-only once built, so requests share it (errors are never cached)."""
    from judge.api import load_ledger

    suffix = ".json" if json_only else ".yaml"  # YAML reads JSON too (and its values come from JSON)
    fd, tmp = tempfile.mkstemp(prefix="judge-scenario-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        return load_ledger(tmp, allow_draft=allow_draft, policy_paths=False)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _trace_source(trace: list[dict[str, Any]] | str) -> list[Any]:
    # JSONL text splits on "\n" only: U+2028 may sit raw inside a JSON string.
    return trace.split("\n") if isinstance(trace, str) else trace


def _input(body: Any, name: str) -> dict[str, Any]:
    """Provenance of a request body: the sha256 of its text as sent (the same as the file's when a
    client sends the file's text), else of its canonical JSON."""
    from judge.grade import sha256_text

    if isinstance(body, str):
        return {"path": name, "sha256": sha256_text(body)}
    if isinstance(body, list):
        text = "".join(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n" for line in body)
    else:
        text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return {"path": name, "sha256": sha256_text(text)}


def grade_request(request: GradeRequest, pool: JudgePool) -> Graded:
    """Grade every trace of the request (blocking: run it in a worker thread)."""
    from judge.api import GradeSession

    ledger = request_ledger(request)
    judge, judge_name = (None, None) if request.judge == "none" else pool.get(request.judge)
    session = GradeSession(judge, judge_name, config_file=pool.config_file,
                           authority=pool.authority(judge_name) if judge_name else None,
                           on_judge_error=request.on_judge_error)
    names = request.trace_names or [f"traces[{i}]" for i in range(len(request.traces))]
    if isinstance(request.policy, str):  # a bundled policy: its file, as `judge grade --policy` names it
        from judge.grade import input_file

        scenario_input = input_file(ledger.policy)
    else:
        given = request.scenario if request.scenario is not None else request.policy
        scenario_input = _input(given, request.scenario_name or (SCENARIO_NAME if request.scenario is not None
                                                                    else POLICY_NAME))
    runs = [session.grade_run(ledger, _trace_source(trace), floor=request.floor, name=name,
                              inputs={"scenario": scenario_input, "traces": [_input(trace, name)]})
            for trace, name in zip(request.traces, names, strict=False)]
    report = session.report(runs, floor=request.floor)
    return Graded(report=report, exit_code=session.exit_code(report))
