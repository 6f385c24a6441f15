"""Small reliability traps of issue 23: a busy port, swapped arguments, a token in the access log, a
server that would not restart with its labels file inside --scenarios."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from review_data import free_port
from typer.testing import CliRunner

from judge.cli import app

runner = CliRunner()
TOUR = Path(__file__).resolve().parents[2] / "docs" / "tour"
SECRET = "tok-planted-5f3a9c"


def _one_line(result, *parts: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    for part in parts:
        assert part in lines[0], (part, lines[0])


def test_serve_on_a_busy_port_is_exit_2_naming_the_port():
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        _one_line(runner.invoke(app, ["serve", "--port", str(port)]), f"port {port}", "already in use", "--port")
    finally:
        holder.close()


def test_swapped_grade_arguments_are_named_as_such():
    result = runner.invoke(app, ["grade", str(TOUR / "clean.jsonl"), str(TOUR / "scenario.yaml"), "--no-log"])
    _one_line(result, "clean.jsonl", "the arguments are swapped", "SCENARIO first",
              "scenario.yaml looks like the scenario")
    assert "document start" not in result.output


def test_the_token_never_reaches_the_access_log(monkeypatch):
    import uvicorn

    from judge.service import create_app

    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    application = create_app(token=SECRET)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=port, log_level="info"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    handler = Keep()
    logging.getLogger("uvicorn.access").addHandler(handler)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", follow_redirects=False) as http:
            assert http.get("/review", params={"token": SECRET}).status_code == 401
            signed = http.post("/review/sign-in", data={"token": SECRET})
            assert signed.status_code == 303 and "judge_token" in signed.headers["set-cookie"]
            assert http.get("/review").status_code == 200  # the cookie carries it now
            assert http.get("/v1/schema", headers={"Authorization": f"Bearer {SECRET}"}).status_code == 200
    finally:
        logging.getLogger("uvicorn.access").removeHandler(handler)
        server.should_exit = True
        thread.join(timeout=10)
    assert len(seen) >= 4 and any("/review" in line for line in seen)
    assert not [line for line in seen if SECRET in line], seen


def test_the_access_log_filter_blanks_a_token_in_any_request_line():
    from judge.service.auth import AccessLogWithoutTokens

    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5", "GET", f"/review?x=1&token={SECRET}&y=2", "1.1", 401), None)
    AccessLogWithoutTokens().filter(record)
    assert SECRET not in record.getMessage() and "token=[REDACTED]&y=2" in record.getMessage()


def _serve(args: list[str], port: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "JUDGE_API_TOKEN"}
    argv = ["judge", "serve", "--port", str(port), *args]
    code = f"import sys\nfrom judge.cli import main\nsys.argv = {argv!r}\nmain()\n"
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def _healthy(port: int, process: subprocess.Popen) -> bool:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return True
        except httpx.HTTPError:
            time.sleep(0.2)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("inside", ["scenarios", "reports", "both"])
def test_serve_restarts_with_its_labels_file_anywhere(tmp_path, inside):
    """A labels file of a first run, inside --scenarios, inside --reports, or in one folder that is
    both: the server starts again, and the file is appended to, never rewritten."""
    scenarios = tmp_path / "scenarios"
    reports = scenarios if inside == "both" else tmp_path / "reports"
    scenarios.mkdir()
    reports.mkdir(exist_ok=True)
    (scenarios / "scenario.yaml").write_bytes((TOUR / "scenario.yaml").read_bytes())
    labels = (reports if inside == "reports" else scenarios) / "labels.jsonl"
    labels.write_text(json.dumps({"case": "tour/r/1/goal", "label": "upheld", "annotator": "a"}) + "\n")  # a 1st run's
    port = free_port()
    process = _serve(["--scenarios", str(scenarios), "--reports", str(reports), "--labels", str(labels)], port)
    try:
        assert _healthy(port, process), process.stderr.read() if process.poll() is not None else "no answer"
        assert httpx.get(f"http://127.0.0.1:{port}/review/api/queue", timeout=10).status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=20)
    assert labels.read_text().count("\n") == 1  # nothing rewritten


def test_serve_refuses_a_scenario_given_as_the_labels_file(tmp_path):
    scenario = tmp_path / "scenario.yaml"
    scenario.write_bytes((TOUR / "scenario.yaml").read_bytes())
    _one_line(runner.invoke(app, ["serve", "--labels", str(scenario)]), "scenario.yaml", "--labels",
              "not a labels JSONL")
    assert scenario.read_bytes() == (TOUR / "scenario.yaml").read_bytes()


@pytest.fixture(autouse=True)
def _no_token_in_the_environment(monkeypatch):
    monkeypatch.delenv("JUDGE_API_TOKEN", raising=False)
