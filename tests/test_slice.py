"""`judge slice`: the minimal failing slice as a standalone scenario and trace that re-grades to the
same first divergence; and the provenance record."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import TraceBuilder

from judge.api import grade_paths, load_ledger
from judge.errors import JudgeInputError
from judge.grade import grade_trace
from judge.grade.provenance import provenance
from judge.grade.slice import write_slice
from judge.model import RunHeader
from judge.render.report import to_json

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
DRIFTING = sorted(p.parent.name for p in EXAMPLES.glob("*/drift.jsonl"))


def _report(tmp_path: Path, scenario: Path, trace: Path) -> tuple[Path, dict]:
    report = grade_paths(scenario, [trace])
    path = tmp_path / "report.json"
    path.write_text(to_json(report))
    return path, json.loads(path.read_text())["runs"][0]


def _key(d) -> tuple:
    d = d if isinstance(d, dict) else d.model_dump(by_alias=True)
    return d["turn"], d["key"], d["event"], d["rule"]


def _check_standalone(out: Path, run: dict) -> None:
    """Re-grade the written files from scratch, and check their shape."""
    regraded = grade_trace(load_ledger(out / "scenario.yaml"), out / "trace.jsonl")
    assert _key(regraded.first_divergence) == _key(run["first_divergence"])
    scenario = yaml.safe_load((out / "scenario.yaml").read_text())
    cps = scenario["checkpoints"]
    assert len(cps) == 1 and cps[0]["after_turn"] == run["first_divergence"]["turn"]
    assert run["first_divergence"]["key"] in [e["key"] for e in scenario["ledger"]] + \
        [d["key"] for d in scenario["deltas"] if d["op"] == "add"]
    lines = (out / "trace.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    assert header["kind"] == "run" and header["run_id"] == run["run_id"]
    assert header["metadata"]["slice_of"]["sha256"] == hashlib.sha256(Path(run["trace"]).read_bytes()).hexdigest()
    ids = [json.loads(line)["id"] for line in lines[1:]]
    assert set(run["slice"]) <= set(ids) and ids[-1] == run["first_divergence"]["event"]


@pytest.mark.parametrize("name", DRIFTING)
def test_every_drifting_example_slices_to_the_same_divergence(tmp_path, name):
    folder = EXAMPLES / name
    path, run = _report(tmp_path, folder / "scenario.yaml", folder / "drift.jsonl")
    result = write_slice(path, run["run_id"], tmp_path / "slice")
    assert result.verified is True and _key(result.regraded) == _key(run["first_divergence"])
    base = max((cp["after_turn"] for cp in yaml.safe_load((folder / "scenario.yaml").read_text())["checkpoints"]
                if cp["after_turn"] < run["first_divergence"]["turn"]), default=-1)
    entries = yaml.safe_load((tmp_path / "slice" / "scenario.yaml").read_text())["ledger"]
    if base >= 0:  # the ledger at the last passing checkpoint, stated at that turn
        assert entries and all(e["source_turn"] >= base for e in entries)
    _check_standalone(tmp_path / "slice", run)
    assert len(result.events) < run["events"]


def test_contract_drift_trace_slices_to_the_same_divergence(tmp_path, shared_dir):
    contract = shared_dir / "contract"
    if not (contract / "checkout-firefox.drift.jsonl").exists():
        pytest.skip("the contract traces are absent")
    path, run = _report(tmp_path, contract / "checkout-firefox.yaml", contract / "checkout-firefox.drift.jsonl")
    result = write_slice(path, run["run_id"], tmp_path / "slice")
    assert result.verified and (result.divergence.turn, result.divergence.key, result.divergence.event) == (5, "browser", "e10")
    assert result.events == ["e8", "e9", "e10"]
    _check_standalone(tmp_path / "slice", run)


def test_stateful_rule_pulls_in_the_earlier_ok_call(tmp_path):
    """A repeat that only an earlier ok call in the run explains: the slice must carry that call."""
    scenario = {"id": "s", "ledger": [{"key": "deployed", "class": "completion", "value": "one deploy",
                                       "source_turn": 1, "sensitivity": "costly"}],
                "checkpoints": [{"after_turn": 2, "must_retain": []}],
                "rules": [{"check": "not-repeated", "key": "deployed", "tool": "deploy"}]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(scenario))
    t = TraceBuilder()
    t.user(1, "deploy once")
    first = t.call(1, "deploy", env="dev")
    t.say(2, "done")
    t.user(3, "anything else?")
    again = t.call(3, "deploy", env="dev")
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(x) for x in t.lines) + "\n")
    path, run = _report(tmp_path, tmp_path / "s.yaml", tmp_path / "t.jsonl")
    assert run["first_divergence"]["event"] == again and first not in run["slice"]
    result = write_slice(path, "r1", tmp_path / "out")
    assert result.verified and first in result.context and first in result.events
    _check_standalone(tmp_path / "out", run)


def test_a_result_in_the_slice_brings_its_call(tmp_path):
    scenario = {"id": "s", "ledger": [{"key": "no_prod", "class": "constraint", "value": "no prod", "source_turn": 1,
                                       "sensitivity": "safety-critical"}],
                "checkpoints": [{"after_turn": 1, "must_retain": ["no_prod"]}],
                "rules": [{"check": "forbidden-call", "key": "no_prod", "tool": "db_query", "args": {"env": "prod"}}]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(scenario))
    lines = [{"kind": "run", "run_id": "r1", "scenario": "s"},
             {"id": "e1", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "read", "args": {}},
             {"id": "e2", "turn": 2, "kind": "tool-result", "call_id": "c1", "tool": "read", "status": "ok"},
             {"id": "e3", "turn": 2, "kind": "tool-call", "call_id": "c2", "tool": "db_query", "args": {"env": "prod"}}]
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    path, run = _report(tmp_path, tmp_path / "s.yaml", tmp_path / "t.jsonl")
    assert run["slice"] == ["e2", "e3"]
    result = write_slice(path, "r1", tmp_path / "out")
    assert result.events == ["e1", "e2", "e3"] and result.context == ["e1"] and result.verified


def test_slice_from_a_suite_report_and_the_cli(tmp_path):
    import typer
    from typer.testing import CliRunner

    from judge.cli.suite import register
    from judge.render.suite import to_json as suite_json
    from judge.suite import grade_suite

    report = tmp_path / "suite.json"
    report.write_text(suite_json(grade_suite(EXAMPLES / "suite" / "suite.yaml", jobs=1).report))
    app = typer.Typer()
    register(app)
    runner = CliRunner()
    result = runner.invoke(app, ["slice", str(report), "--run", "account-twice-r05", "-o", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "re-grading reproduces the first divergence" in result.output
    meta = json.loads((tmp_path / "s" / "slice.json").read_text())
    assert meta["verified"] is True and meta["divergence"]["rule"] == "not-repeated:test_account"
    result = runner.invoke(app, ["slice", str(report), "--run", "account-twice-r01", "-o", str(tmp_path / "x")])
    assert result.exit_code == 2 and "has no first divergence" in result.output
    result = runner.invoke(app, ["slice", str(report), "--run", "nope", "-o", str(tmp_path / "x")])
    assert result.exit_code == 2 and "no run 'nope'" in result.output


def test_changed_trace_missing_scenario_and_overwrites_are_refused(tmp_path):
    folder = tmp_path / "ex"
    folder.mkdir()
    trace = folder / "drift.jsonl"
    trace.write_bytes((EXAMPLES / "refund-agent" / "drift.jsonl").read_bytes())
    (folder / "scenario.yaml").write_bytes((EXAMPLES / "refund-agent" / "scenario.yaml").read_bytes())
    path, run = _report(tmp_path, folder / "scenario.yaml", trace)
    with pytest.raises(JudgeInputError, match="over an input file"):  # folder/scenario.yaml is the input
        write_slice(path, run["run_id"], folder)
    (folder / "scenario.yaml").rename(folder / "elsewhere.txt")
    with pytest.raises(JudgeInputError, match="--scenario"):
        write_slice(path, run["run_id"], tmp_path / "o")
    assert write_slice(path, run["run_id"], tmp_path / "o", scenario=folder / "elsewhere.txt").verified
    data = json.loads(path.read_text())
    data["runs"][0]["provenance"] = {"inputs": {"scenario": {"sha256": "0" * 64}}}  # the lead's RunReport field
    path.write_text(json.dumps(data))
    with pytest.raises(JudgeInputError, match="not the scenario the run was graded with"):
        write_slice(path, run["run_id"], tmp_path / "o2", scenario=folder / "elsewhere.txt")
    data["runs"][0]["sha256"] = "0" * 64
    path.write_text(json.dumps(data))
    with pytest.raises(JudgeInputError, match="changed since the report"):
        write_slice(path, run["run_id"], tmp_path / "o2", scenario=folder / "elsewhere.txt")


def test_judge_divergence_is_sliced_but_not_claimed_verified(tmp_path):
    folder = EXAMPLES / "account-twice"
    report = json.loads(to_json(grade_paths(folder / "scenario.yaml", [folder / "clean.jsonl"])))
    run = report["runs"][0]
    run.update(passed=False, slice=["e8", "e9", "e10"],
               first_divergence={"turn": 4, "key": "goal", "event": "e10", "class": "goal", "sensitivity": "normal",
                                 "rule": None})
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    result = write_slice(path, run["run_id"], tmp_path / "o", scenario=folder / "scenario.yaml")
    assert result.verified is None and "judge" in result.note and result.events == ["e8", "e9", "e10"]


# ---------------------------------------------------------------- provenance


def test_provenance_records_candidate_packages_and_input_hashes(tmp_path):
    import pydantic

    scenario = EXAMPLES / "checkout-firefox" / "scenario.yaml"
    trace = EXAMPLES / "checkout-firefox" / "drift.jsonl"
    header = RunHeader.model_validate({**json.loads(trace.read_text().splitlines()[0]), "tool_schema_sha256": "ab" * 32})
    p = provenance(scenario, [trace], header, judge={"backend": "x"})
    assert p["candidate"] == {"name": "shopbot", "version": "2.1.0", "model": "gpt-4.1", "prompt_version": "p10",
                              "sampling": {"temperature": 0.7}, "tool_schema_sha256": "ab" * 32,
                              "trace_id": "3f9e7d51c0a24b8e9d6c1b2a3e4f5d60"}
    assert p["judge"] == {"backend": "x"} and p["packages"]["pydantic"] == pydantic.VERSION
    assert p["inputs"]["scenario"]["sha256"] == hashlib.sha256(scenario.read_bytes()).hexdigest()
    assert p["inputs"]["traces"][0]["sha256"] == hashlib.sha256(trace.read_bytes()).hexdigest()
    assert provenance(None, [tmp_path / "absent.jsonl"], None)["inputs"]["traces"][0]["sha256"] is None
    json.dumps(p)  # plain JSON


def test_provenance_imports_no_heavy_module():
    code = ("import sys; from judge.grade.provenance import package_versions; v = package_versions(); "
            "heavy = [m for m in ('torch', 'litellm', 'sentence_transformers', 'scipy') if m in sys.modules]; "
            "print(heavy, v['litellm'] is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[] True"


def test_package_versions_are_what_importlib_metadata_says(tmp_path):
    """Read from the metadata's header lines (not the whole file as an e-mail): the same versions,
    a missing package None, and a metadata file whose header has no Version falls back to the parser."""
    from importlib import metadata

    from judge.grade.provenance import _version, package_versions

    found = package_versions(("pydantic", "msgspec", "no-such-package-here"))
    assert found["pydantic"] == metadata.version("pydantic") and found["msgspec"] == metadata.version("msgspec")
    assert found["no-such-package-here"] is None and found["python"]
    info = tmp_path / "odd-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: odd\n\nVersion: 9.9 (in the body, not the header)\n")
    dist = metadata.PathDistribution(info)
    assert _version(dist) == dist.version  # no Version header: the parser's answer (None here), not the body's line
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: odd\nVersion: 1.0\n\nVersion: 9.9\n")
    assert _version(dist) == "1.0" == dist.version


def test_slice_finds_relative_paths_from_the_report_folder_and_the_scenario_by_sha256(tmp_path, monkeypatch):
    """A report written into a subfolder (out/, or the run log .judge/runs/) with paths relative to
    the folder `judge grade` ran in: `judge slice` run from anywhere finds the trace from the
    report's folder upwards, and of two scenarios with the same id takes the one graded."""
    project = tmp_path / "project"
    (project / "runs").mkdir(parents=True)
    for name in ("scenario.yaml", "drift.jsonl"):
        (project / "runs" / name).write_bytes((EXAMPLES / "refund-agent" / name).read_bytes())
    monkeypatch.chdir(project)
    report = grade_paths("runs/scenario.yaml", ["runs/drift.jsonl"])
    out = project / ".judge" / "runs"
    out.mkdir(parents=True)
    path = out / "report.json"
    path.write_text(to_json(report))
    run_id = report.runs[0].run_id
    # the scenario file moves away; an edited copy with the same id sits beside the trace
    original = (project / "runs" / "scenario.yaml").read_text()
    (project / "runs" / "scenario.yaml").unlink()
    (project / "runs" / "a-edited.yaml").write_text(original + "\n# edited\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with pytest.raises(JudgeInputError, match=r"sha256 differs.*give it with --scenario FILE"):
        write_slice(path, run_id, tmp_path / "o1")
    (project / "runs" / "b-original.yaml").write_text(original)  # same id, the graded content
    result = write_slice(path, run_id, tmp_path / "o2")
    assert result.verified
    source = json.loads((tmp_path / "o2" / "slice.json").read_text())["source"]
    assert source["scenario"].endswith("b-original.yaml") and source["trace"].endswith("runs/drift.jsonl")
    from typer.testing import CliRunner

    from judge.cli import app

    cli = CliRunner().invoke(app, ["slice", str(path), "--run", run_id, "-o", str(tmp_path / "o3")])
    assert cli.exit_code == 0, cli.output
    assert "re-grading reproduces the first divergence" in cli.output
