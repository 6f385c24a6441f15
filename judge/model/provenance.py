"""A run's provenance: what reproduces its grade (the English seed: "make nondeterministic runs
reproducible"): the candidate as its trace header names it, the judge's fingerprint, the versions of
the packages that decide a grade and the sha256 of every input. Built by judge.grade.provenance."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from judge.model.fingerprint import JudgeFingerprint
from judge.model.parts import JsonView, SetFields


class Candidate(SetFields):
    """The agent under test, with only the fields its trace header gives (the run header's `agent`
    and three of its own fields)."""

    name: str | None = None
    version: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    sampling: dict[str, Any] | None = Field(default=None, description="as the trace header gives it")
    tool_schema_sha256: str | None = None
    trace_id: str | None = None
    task_id: str | None = None


class InputFile(JsonView):
    """One input file: its path as given and its sha256 (null when it could not be read as a file)."""

    path: str
    sha256: str | None


class Inputs(JsonView):
    """The files a grade read, each with its sha256: the scenario and the traces."""

    scenario: InputFile | None = Field(default=None, description="null when the scenario was not a file")
    traces: list[InputFile] = Field(default_factory=list)


class Provenance(JsonView):
    """What reproduces a run's grade (module docs)."""

    candidate: Candidate | None = Field(default=None, description="null when the trace has no run header")
    judge: JudgeFingerprint | None = Field(default=None, description="null: deterministic checks only")
    packages: dict[str, str | None] = Field(default_factory=dict, description=(
        "python and the packages that decide a grade: version, or null when not installed"))
    inputs: Inputs | None = Field(default=None, description="null when the grade was given no files")
