"""`judge grade` reads each trace file once: the sha256 in provenance is computed while grading."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from judge.grade.session import GradeSession

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "long-distance"


def _rchar() -> int:
    """Bytes this process has read through read(2) and friends, as the kernel counts them."""
    with open("/proc/self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


def test_grade_files_reads_each_trace_once_and_records_its_sha256():
    try:
        _rchar()
    except OSError:
        pytest.skip("no /proc/self/io on this system")
    trace = EXAMPLE / "drift.jsonl"
    session = GradeSession(judge=None)
    session.grade_files(EXAMPLE / "scenario.yaml", [trace])  # imports, once
    before = _rchar()
    report = session.grade_files(EXAMPLE / "scenario.yaml", [trace] * 10)
    # the scenario (3.5 kB, read twice: parsed and hashed) is in the count; a second pass over
    # each 49 kB trace would put the ratio near 2
    ratio = (_rchar() - before) / (10 * trace.stat().st_size)
    assert 1.0 <= ratio < 1.3, ratio
    digest = hashlib.sha256(trace.read_bytes()).hexdigest()
    scenario = hashlib.sha256((EXAMPLE / "scenario.yaml").read_bytes()).hexdigest()
    for run in report.runs:
        assert run.provenance["inputs"] == {"scenario": {"path": str(EXAMPLE / "scenario.yaml"), "sha256": scenario},
                                            "traces": [{"path": str(trace), "sha256": digest}]}
