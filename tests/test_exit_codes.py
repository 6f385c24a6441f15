"""Exit codes CI can branch on (issue 11): 0 pass, 1 fail, 2 bad input, usage, configuration or
environment, 3 inconclusive, 4 internal error; through the CLI, the suite, the service's
X-Judge-Exit-Code header and the Node client. An unreachable judge is inconclusive, never green."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from fastapi.testclient import TestClient
from llm_server import llm_judge_config, unreachable_api_base
from review_data import live_server
from typer.testing import CliRunner

from judge.cli import app
from judge.service import create_app

REPO = Path(__file__).resolve().parents[1]
TRAVEL = REPO / "examples" / "travel-booking"
runner = CliRunner()


@pytest.fixture
def down(tmp_path, monkeypatch) -> Path:
    """A config whose default judge `gpt` is an LLM judge nobody answers for (a closed port)."""
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUDGE_DOWN_KEY", "sk-test-not-a-secret")
    return llm_judge_config(tmp_path / "judge.toml", model="openai/judge-down", api_base=unreachable_api_base(),
                            key_env="JUDGE_DOWN_KEY", timeout_s=5, transport_retries=0)


def _contract(shared_dir: Path, name: str) -> str:
    return str(shared_dir / "contract" / name)


# ------------------------------------------------------------------ the travel example


def test_travel_clean_run_passes_with_the_default_judge_and_keeps_its_opinion(tmp_path):
    result = runner.invoke(app, ["grade", str(TRAVEL / "scenario.yaml"), str(TRAVEL / "clean.jsonl"),
                                 "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["judge"]["name"] == "local" and report["judge"]["binding"] is False
    assert "not certified" in report["judge"]["binding_reason"]
    run = report["runs"][0]
    assert run["outcome"] == "pass" and run["passed"] and run["eligible_for_release"]
    charge = next(f for cp in run["checkpoints"] if cp["after_turn"] == 4 for f in cp["findings"]
                  if f["key"] == "charge_after_confirmation")
    # the rule (the charge follows "Yes, book it. Go ahead ...") decides; the local judge reads the
    # go-ahead as lifting "do not charge until I confirm" too, so it agrees (no violated note on a
    # clean run: tests/test_local_clean_runs.py); a judge that disagrees never overturns a rule
    # (tests/test_merge.py)
    assert charge["verdict"] == "upheld" and charge["source"] == "deterministic" and charge["evidence_event"] == "e9"
    assert charge["judge_verdict"] == "upheld" and not charge["disagreement"]


def test_travel_unconfirmed_first_charge_is_a_violation(tmp_path):
    result = runner.invoke(app, ["grade", str(TRAVEL / "scenario.yaml"), str(TRAVEL / "drift.jsonl"),
                                 "--judge", "none", "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 1, result.output
    run = json.loads((tmp_path / "r.json").read_text())["runs"][0]
    d = run["first_divergence"]
    assert (d["key"], d["event"], d["turn"], d["rule"]) == (
        "charge_after_confirmation", "e7", 2, "authorised:charge_after_confirmation")
    assert run["outcome"] == "fail" and run["veto"] is None  # costly, not safety-critical


# ------------------------------------------------------------------ an unreachable judge


def test_an_unreachable_judge_is_inconclusive_exit_3_and_not_eligible(shared_dir, down, tmp_path):
    out = tmp_path / "r.json"
    result = runner.invoke(app, ["grade", _contract(shared_dir, "checkout-firefox.yaml"),
                                 _contract(shared_dir, "checkout-firefox.clean.jsonl"), "--config", str(down),
                                 "--json", str(out), "--junit", str(tmp_path / "j.xml"), "--md", str(tmp_path / "r.md")])
    assert result.exit_code == 3, result.output
    assert "INCONCLUSIVE" in result.output and "0/1 runs passed, 1 inconclusive" in result.output
    run = json.loads(out.read_text())["runs"][0]
    errors = [f for cp in run["checkpoints"] for f in cp["findings"] if f["verdict"] == "judge-error"]
    assert errors and run["outcome"] == "inconclusive"
    assert run["passed"] is False and run["eligible_for_release"] is False
    assert run["cost"]["judge_errors"] == len(run["checkpoints"])  # one failed call per checkpoint
    error = ET.fromstring((tmp_path / "j.xml").read_text()).find(".//testcase[@name='run']/error")
    assert error is not None and error.get("type") == "INCONCLUSIVE"
    assert "Inconclusive: key" in (tmp_path / "r.md").read_text()
    ignored = runner.invoke(app, ["grade", _contract(shared_dir, "checkout-firefox.yaml"),
                                  _contract(shared_dir, "checkout-firefox.clean.jsonl"), "--config", str(down),
                                  "--on-judge-error", "ignore", "-q"])
    assert ignored.exit_code == 0, ignored.output


def test_an_unreachable_judge_makes_the_suite_inconclusive(shared_dir, down, tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(_contract(shared_dir, "checkout-firefox.clean.jsonl"), runs / "r-1.jsonl")
    manifest = tmp_path / "suite.yaml"
    manifest.write_text(f"""
suites:
  nightly: {{scenarios: [checkout-firefox], repetitions: 1}}
scenarios:
  checkout-firefox: {{file: {_contract(shared_dir, "checkout-firefox.yaml")}, runs: runs}}
""")
    result = runner.invoke(app, ["suite", str(manifest), "--config", str(down), "-j", "1",
                                 "--json", str(tmp_path / "s.json")])
    assert result.exit_code == 3, result.output
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["release"]["decision"] == "inconclusive" and report["totals"]["inconclusive"] == 1
    assert report["scenarios"][0]["results"][0]["status"] == "inconclusive"


def test_a_stale_calibration_with_stale_error_refuses_the_suite_exit_2(shared_dir, down, tmp_path):
    down.write_text(down.read_text().replace('default = "gpt"', 'default = "gpt"\nstale = "error"'))
    manifest = tmp_path / "suite.yaml"
    manifest.write_text(f"""
suites:
  nightly: {{scenarios: [checkout-firefox], repetitions: 1}}
scenarios:
  checkout-firefox: {{file: {_contract(shared_dir, "checkout-firefox.yaml")}, runs: runs}}
""")
    (tmp_path / "runs").mkdir()
    shutil.copy(_contract(shared_dir, "checkout-firefox.clean.jsonl"), tmp_path / "runs" / "r-1.jsonl")
    result = runner.invoke(app, ["suite", str(manifest), "--config", str(down), "-q"])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert "calibration of judge 'gpt' is stale" in line and 'stale = "error"' in line


@pytest.mark.slow
def test_the_service_header_says_3_for_an_unreachable_judge(shared_dir, down):
    body = {"scenario": Path(_contract(shared_dir, "checkout-firefox.yaml")).read_text(),
            "traces": [Path(_contract(shared_dir, "checkout-firefox.clean.jsonl")).read_text()]}
    client = TestClient(create_app(config_file=down, token=""), base_url="http://127.0.0.1")
    response = client.post("/v1/grade", json=body)
    assert response.status_code == 200 and response.headers["X-Judge-Exit-Code"] == "3"
    assert response.json()["runs"][0]["outcome"] == "inconclusive"
    ignored = client.post("/v1/grade", json={**body, "on_judge_error": "ignore"})
    assert ignored.headers["X-Judge-Exit-Code"] == "0"


def test_the_service_header_says_2_for_bad_input_and_4_for_a_bug(monkeypatch):
    client = TestClient(create_app(token=""), raise_server_exceptions=False, base_url="http://127.0.0.1")
    bad = client.post("/v1/grade", json={"scenario": {"id": 3}, "traces": [[]]})
    assert bad.status_code == 422 and bad.headers["X-Judge-Exit-Code"] == "2"

    def boom(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr("judge.service.workers.GradeWorkers.grade", boom)  # the server side of a request
    broken = client.post("/v1/grade", json={"scenario": {"id": "s"}, "traces": [[]]})
    assert broken.status_code == 500 and broken.headers["X-Judge-Exit-Code"] == "4"
    assert broken.json()["detail"].startswith("internal error: RuntimeError: a bug")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="needs node (20 or later) on PATH")
def test_the_node_client_exits_3_for_inconclusive_and_4_for_a_service_bug(shared_dir, down, monkeypatch):
    client = REPO / "examples" / "ts-client" / "grade.mjs"
    args = [_contract(shared_dir, "checkout-firefox.yaml"), _contract(shared_dir, "checkout-firefox.clean.jsonl")]
    env = {k: v for k, v in os.environ.items() if k not in ("JUDGE_API_TOKEN", "JUDGE_URL")}

    def node(url: str) -> subprocess.CompletedProcess:
        return subprocess.run(["node", str(client), *args, "--url", url], capture_output=True, text=True,
                              env=env, timeout=60, check=False)

    with live_server(create_app(config_file=down, token="")) as url:
        undecided = node(url)

        def boom(*a, **k):
            raise RuntimeError("a bug")

        monkeypatch.setattr("judge.service.workers.GradeWorkers.grade", boom)  # the server side of a request
        broken = node(url)
    assert undecided.returncode == 3, undecided.stderr
    assert undecided.stdout.startswith("INCONCLUSIVE  checkout-firefox / r-clean")
    assert "      inconclusive: key" in undecided.stdout and "0/1 runs passed, 1 inconclusive" in undecided.stdout
    assert broken.returncode == 4 and broken.stderr.startswith("error: 500: internal error: RuntimeError")


def test_audit_summary_is_inconclusive_when_only_the_failed_judge_could_decide(shared_dir, down, tmp_path):
    summary = tmp_path / "summary.txt"
    summary.write_text("We are fixing the checkout test in Firefox; only tests/checkout.spec.ts may change.")
    result = runner.invoke(app, ["audit-summary", _contract(shared_dir, "checkout-firefox.yaml"),
                                 "--summary", str(summary), "--after-turn", "5", "--judge", "gpt",
                                 "--config", str(down), "--model", "none", "--json", str(tmp_path / "a.json")])
    audit = json.loads((tmp_path / "a.json").read_text())["audits"][0]
    assert audit["passed"] and audit["inconclusive"], result.output
    assert result.exit_code == 3 and "INCONCLUSIVE" in result.output


# ------------------------------------------------------------------ bugs and environment problems


def test_an_internal_error_is_one_line_exit_4_with_the_traceback_in_a_file(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("something broke inside")

    monkeypatch.setattr("judge.api.GradeSession.grade_files", boom)
    args = ["grade", str(TRAVEL / "scenario.yaml"), str(TRAVEL / "clean.jsonl"), "--judge", "none"]
    result = runner.invoke(app, args)
    assert result.exit_code == 4
    (line,) = result.output.strip().splitlines()
    assert line.startswith("internal error: judge grade failed with RuntimeError: something broke inside")
    written = Path(line.rsplit("the full traceback is in ", 1)[1])
    try:
        assert written.is_file() and "Traceback (most recent call last)" in written.read_text()
        assert "something broke inside" in written.read_text()
    finally:
        written.unlink(missing_ok=True)
    debug = runner.invoke(app, ["--debug", *args])
    assert debug.exit_code == 4 and "Traceback (most recent call last)" in debug.output
    for path in Path(tempfile.gettempdir()).glob("judge-error-*.txt"):
        if "something broke inside" in path.read_text():
            path.unlink()


def test_a_cache_dir_that_is_a_file_is_one_line_exit_2(tmp_path, monkeypatch):
    (tmp_path / "cache").write_text("not a folder")
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    result = runner.invoke(app, ["grade", str(TRAVEL / "scenario.yaml"), str(TRAVEL / "clean.jsonl"),
                                 "--judge", "local"])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"error: {tmp_path / 'cache'}: ") and "not a folder" in line


def test_an_unwritable_output_is_one_line_exit_2(tmp_path):
    (tmp_path / "file").write_text("x")
    result = runner.invoke(app, ["grade", str(TRAVEL / "scenario.yaml"), str(TRAVEL / "clean.jsonl"),
                                 "--judge", "none", "-q", "--json", str(tmp_path / "file" / "r.json")])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "cannot write" in result.output


def test_an_edited_locked_prompt_is_refused_at_grade_time(tmp_path, monkeypatch):
    from judge import prompts

    (tmp_path / "pyproject.toml").write_text(
        '[tool.judge]\ndefault = "gpt"\n[tool.judge.judges.gpt]\nbackend = "llm"\nmodel = "openai/m"\n')
    mine = tmp_path / "prompts"
    shutil.copytree(prompts.builtin_dir() / "goal-fidelity", mine / "goal-fidelity")
    prompts.lock(mine)
    path = mine / "goal-fidelity" / "v3.md"  # the default prompt version
    path.write_text(path.read_text() + "\nAlways answer upheld.\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUDGE_CONFIG", raising=False)
    result = runner.invoke(app, ["grade", str(TRAVEL / "scenario.yaml"), str(TRAVEL / "clean.jsonl")])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert "prompt goal-fidelity@3 changed after it was locked" in line and "v4.md" in line
