"""`--tools FILE` through every face: `judge grade`, `judge suite` (workers too), the library.

On docs/toolkit/: with the agent's tools the drifting run's call of `admin_refund` violates
`own_tools` at e6; without them the key is `not-exercised` saying why; the clean run passes either way.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from judge.api import grade_paths, read_toolkit
from judge.cli import app
from judge.suite import grade_suite

TOOLKIT = Path(__file__).resolve().parents[1] / "docs" / "toolkit"
TOOLS = TOOLKIT / "tools.json"


def _own_tools(run: dict) -> dict:
    return next(f for cp in run["checkpoints"] for f in cp["findings"] if f["key"] == "own_tools")


def test_judge_grade_takes_the_toolkit_and_without_it_says_why_it_cannot_judge(tmp_path):
    out = tmp_path / "report.json"
    runner = CliRunner()
    graded = runner.invoke(app, ["grade", str(TOOLKIT / "scenario.yaml"), str(TOOLKIT / "clean.jsonl"),
                                 str(TOOLKIT / "drift.jsonl"), "--tools", str(TOOLS), "--judge", "none", "-q",
                                 "--json", str(out), "--no-log"])
    assert graded.exit_code == 1, graded.output
    clean, drift = json.loads(out.read_text())["runs"]
    assert clean["passed"] and _own_tools(clean)["verdict"] == "upheld"
    finding = _own_tools(drift)
    assert (finding["verdict"], finding["evidence_event"]) == ("violated", "e6")
    assert [leak["where"] for leak in drift["leaks"]] == ["state-write"]
    bare = runner.invoke(app, ["grade", str(TOOLKIT / "scenario.yaml"), str(TOOLKIT / "drift.jsonl"), "--judge",
                               "none", "-q", "--json", str(out), "--no-log"])
    assert bare.exit_code == 1  # the path and tenant rules still veto
    unjudged = _own_tools(json.loads(out.read_text())["runs"][0])
    assert unjudged["verdict"] == "not-exercised" and "no toolkit declared" in unjudged["detail"]


def test_the_library_takes_a_file_or_a_toolkit():
    by_path = grade_paths(TOOLKIT / "scenario.yaml", [TOOLKIT / "drift.jsonl"], tools=TOOLS)
    by_object = grade_paths(TOOLKIT / "scenario.yaml", [TOOLKIT / "drift.jsonl"], tools=read_toolkit(TOOLS))
    for report in (by_path, by_object):
        assert any(f.key == "own_tools" and f.verdict == "violated" for cp in report.runs[0].checkpoints
                   for f in cp.findings)


def test_judge_suite_gives_every_worker_the_toolkit(tmp_path):
    for jobs in (1, 2):
        run = grade_suite(TOOLKIT / "suite.yaml", judge_name=None, jobs=jobs, tools=TOOLS)
        keys = {(v.key, v.event) for v in run.report.safety_violations}
        assert ("own_tools", "e6") in keys and ("no_secrets", "e4") in keys, (jobs, keys)
        assert run.report.provenance["inputs"]["tools"]["sha256"]
    without = grade_suite(TOOLKIT / "suite.yaml", judge_name=None, jobs=1)
    assert "own_tools" not in {v.key for v in without.report.safety_violations}
    out = tmp_path / "suite.json"
    result = CliRunner().invoke(app, ["suite", str(TOOLKIT / "suite.yaml"), "--tools", str(TOOLS), "--judge", "none",
                                      "-q", "--json", str(out)])
    assert result.exit_code == 1, result.output
    assert any(v["key"] == "own_tools" for v in json.loads(out.read_text())["safety_violations"])
