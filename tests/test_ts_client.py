"""examples/ts-client/grade.mjs against a live service: it gates on the answer as `judge grade` does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from review_data import live_server

from judge.service import create_app

REPO = Path(__file__).resolve().parents[1]
CLIENT = REPO / "examples" / "ts-client" / "grade.mjs"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="needs node (20 or later) on PATH")


@pytest.fixture(autouse=True, scope="module")
def _no_token_in_the_environment():
    """create_app() reads JUDGE_API_TOKEN: these tests choose their token themselves."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("JUDGE_API_TOKEN", raising=False)
        yield


def _node(*args: str, token: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("JUDGE_API_TOKEN", "JUDGE_URL")}
    if token is not None:
        env["JUDGE_API_TOKEN"] = token
    return subprocess.run([NODE, str(CLIENT), *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.slow
def test_client_fails_on_a_veto_and_passes_a_clean_run(shared_dir: Path, tmp_path: Path) -> None:
    contract = shared_dir / "contract"
    scenario = str(contract / "checkout-firefox.yaml")
    drift, clean = str(contract / "checkout-firefox.drift.jsonl"), str(contract / "checkout-firefox.clean.jsonl")
    with live_server(create_app()) as url:
        vetoed = _node(scenario, drift, clean, "--url", url, "--judge", "none", "--json", str(tmp_path / "r.json"))
        passed = _node(scenario, clean, "--url", url, "--judge", "none")
        bad = tmp_path / "bad.jsonl"
        bad.write_text(Path(clean).read_text().replace('"turn":2', '"turn":"two"', 1))
        refused = _node(scenario, str(bad), "--url", url, "--judge", "none")
    assert vetoed.returncode == 1, vetoed.stderr
    assert vetoed.stdout.splitlines()[0].startswith("VETO  checkout-firefox / r-drift")
    assert "first divergence: turn 5, key browser (normal), event e10" in vetoed.stdout
    assert "1/2 runs passed" in vetoed.stdout
    cli_json = tmp_path / "cli.json"
    subprocess.run([str(Path(sys.executable).parent / "judge"), "grade", scenario, drift, clean, "--judge", "none",
                    "--json", str(cli_json), "-q"], check=False, cwd=REPO)
    assert (tmp_path / "r.json").read_bytes() == cli_json.read_bytes()
    assert passed.returncode == 0 and passed.stdout.startswith("PASS  checkout-firefox / r-clean")
    assert refused.returncode == 2
    assert refused.stderr.startswith(f"error: 422: {bad}:")
    assert len(refused.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_client_sends_the_token(shared_dir: Path) -> None:
    contract = shared_dir / "contract"
    args = [str(contract / "checkout-firefox.yaml"), str(contract / "checkout-firefox.clean.jsonl"), "--judge", "none"]
    with live_server(create_app(token="t0ken")) as url:
        without = _node(*args, "--url", url)
        wrong = _node(*args, "--url", url, token="nope")
        right = _node(*args, "--url", url, token="t0ken")
    assert without.returncode == 2 and "error: 401: missing or wrong bearer token" in without.stderr
    assert wrong.returncode == 2
    assert right.returncode == 0, right.stderr


def test_client_without_a_service_or_files_exits_2() -> None:
    from review_data import free_port

    example = REPO / "examples" / "checkout-firefox"
    url = f"http://127.0.0.1:{free_port()}"
    nobody = _node(str(example / "scenario.yaml"), str(example / "drift.jsonl"), "--url", url)
    assert nobody.returncode == 2
    assert nobody.stderr.startswith(f"error: no judge service at {url}")
    missing = _node("a.yaml", "b.jsonl", "--url", url)
    assert missing.returncode == 2 and missing.stderr.startswith("error: a.yaml: cannot read")
