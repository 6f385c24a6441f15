"""The HTTP service: same report as the CLI, CLI-identical error lines, auth, body limit, judges,
schemas, concurrency on a live server, and the review page's queue and labels API."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import typer
import yaml
from fastapi.testclient import TestClient as _TestClient
from review_data import QUEUE, live_server, make_reports
from typer.testing import CliRunner

from judge.service import create_app


def TestClient(app, **kwargs) -> _TestClient:  # noqa: N802
    """A client whose Host is a loopback name: the service answers only to those by default."""
    return _TestClient(app, base_url="http://127.0.0.1", **kwargs)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="module")
def _no_token_in_the_environment():
    """create_app() reads JUDGE_API_TOKEN: these tests choose their token themselves."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("JUDGE_API_TOKEN", raising=False)
        yield


def _cli(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "judge"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=REPO)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def client() -> _TestClient:
    return TestClient(create_app())


@pytest.fixture
def contract(shared_dir: Path) -> Path:
    return shared_dir / "contract"


# ---------------------------------------------------------------- POST /v1/grade


def test_grade_report_is_the_cli_json_byte_for_byte(client: TestClient, contract: Path, tmp_path: Path) -> None:
    scenario, drift = contract / "checkout-firefox.yaml", contract / "checkout-firefox.drift.jsonl"
    out = tmp_path / "cli.json"
    cli = _cli("grade", str(scenario), str(drift), "--judge", "none", "--json", str(out), "-q")
    assert cli.returncode == 1
    as_object = client.post("/v1/grade", json={
        "scenario": yaml.safe_load(scenario.read_text()), "traces": [_lines(drift)], "judge": "none",
        "trace_names": [str(drift)]})
    as_text = client.post("/v1/grade", json={
        "scenario": scenario.read_text(), "traces": [drift.read_text()], "judge": "none",
        "trace_names": [str(drift)]})
    cli_report = json.loads(out.read_text(encoding="utf-8"))
    for response in (as_object, as_text):
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.headers["x-judge-exit-code"] == "1"
        served = response.json()
        # Provenance names the inputs as received: the same bytes give the same sha256.
        served_inputs = served["runs"][0]["provenance"].pop("inputs")
        cli_inputs = cli_report["runs"][0]["provenance"]["inputs"]
        assert served_inputs["traces"][0] == cli_inputs["traces"][0] or response is as_object
        assert json.dumps(served, indent=2) == json.dumps(
            {**cli_report, "runs": [{**cli_report["runs"][0], "provenance": {
                k: v for k, v in cli_report["runs"][0]["provenance"].items() if k != "inputs"}}]}, indent=2)
    assert as_text.json()["runs"][0]["provenance"]["inputs"]["scenario"]["sha256"] == \
        cli_report["runs"][0]["provenance"]["inputs"]["scenario"]["sha256"]
    run = as_object.json()["runs"][0]
    assert (run["eligible_for_release"], run["first_divergence"]["event"]) == (False, "e10")


def test_grade_without_names_differs_only_in_the_trace_field_and_inputs(client: TestClient, contract: Path,
                                                             tmp_path: Path) -> None:
    scenario = contract / "checkout-firefox.yaml"
    traces = [contract / "checkout-firefox.clean.jsonl", contract / "checkout-firefox.drift.jsonl"]
    out = tmp_path / "cli.json"
    _cli("grade", str(scenario), *map(str, traces), "--judge", "none", "--json", str(out), "-q")
    response = client.post("/v1/grade", json={"scenario": yaml.safe_load(scenario.read_text()),
                                              "traces": [_lines(t) for t in traces], "judge": "none"})
    served, written = response.json(), json.loads(out.read_text())
    assert [r["trace"] for r in served["runs"]] == ["traces[0]", "traces[1]"]
    for run in (*served["runs"], *written["runs"]):
        run.pop("trace")
        run["provenance"].pop("inputs")  # names and hashes of what was received
    assert served == written
    assert [r["passed"] for r in served["runs"]] == [True, False]
    assert response.headers["x-judge-exit-code"] == "1"


def test_a_clean_run_exits_0(client: TestClient, contract: Path) -> None:
    response = client.post("/v1/grade", json={
        "scenario": (contract / "checkout-firefox.yaml").read_text(),
        "traces": [(contract / "checkout-firefox.clean.jsonl").read_text()], "judge": "none"})
    assert response.status_code == 200
    assert response.headers["x-judge-exit-code"] == "0"
    assert response.json()["runs"][0]["passed"] is True


def test_bad_trace_gets_the_cli_error_line(client: TestClient, contract: Path, tmp_path: Path) -> None:
    scenario = contract / "checkout-firefox.yaml"
    lines = (contract / "checkout-firefox.drift.jsonl").read_text().splitlines()
    lines[5] = json.dumps({"id": "e99", "turn": 2, "kind": "tool-result", "call_id": "c9", "status": "ok"})
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    cli = _cli("grade", str(scenario), str(bad), "--judge", "none", "-q")
    assert cli.returncode == 2
    response = client.post("/v1/grade", json={"scenario": scenario.read_text(), "traces": [bad.read_text()],
                                              "judge": "none", "trace_names": [str(bad)]})
    assert response.status_code == 422
    assert "error: " + response.json()["detail"] == cli.stderr.strip()
    assert response.json()["detail"].endswith(":6: call_id: tool result for call id 'c9', which no earlier "
                                              "tool-call issued")


def test_bad_scenario_gets_the_cli_error_line(client: TestClient, contract: Path, tmp_path: Path) -> None:
    text = (contract / "checkout-firefox.yaml").read_text().replace(
        "{turn: 7, op: complete, key: repair, source: tool}", "{turn: 7, op: revoke, key: no_deploy, source: agent}")
    broken = tmp_path / "broken.yaml"
    broken.write_text(text)
    cli = _cli("grade", str(broken), str(contract / "checkout-firefox.clean.jsonl"), "--judge", "none", "-q")
    assert cli.returncode == 2
    as_text = client.post("/v1/grade", json={"scenario": text, "scenario_name": str(broken), "judge": "none",
                                             "traces": [(contract / "checkout-firefox.clean.jsonl").read_text()]})
    assert as_text.status_code == 422
    assert "error: " + as_text.json()["detail"] == cli.stderr.strip()
    as_object = client.post("/v1/grade", json={"scenario": yaml.safe_load(text), "judge": "none",
                                               "traces": [_lines(contract / "checkout-firefox.clean.jsonl")]})
    assert as_object.status_code == 422
    assert as_object.json()["detail"] == "request.scenario: deltas.1.source: only a user may revoke " \
                                         "('no_deploy' revoked by agent)"


@pytest.mark.parametrize("body, detail", [
    ({"scenario": {"id": "s"}, "traces": [[]], "bogus": 1}, "request: bogus: unknown field"),
    ({"scenario": {"id": "s"}, "traces": []}, "request: traces: List should have at least 1 item after validation, not 0"),
    ({"scenario": {"id": "s"}, "traces": [[]], "floor": 2}, "request: floor: Input should be less than or equal to 1"),
    ({"scenario": 5, "traces": [[]]}, "request: scenario: must be a JSON object (the scenario) or the text of a "
                                      "scenario file (YAML or JSON)"),
    ({"scenario": {"id": "s"}, "traces": [[1]]}, "request: traces.0: must be a list of JSON objects (the run "
                                                 "header, then the events) or the JSONL text of a trace"),
    ({"scenario": {"id": "s"}, "traces": [[]], "trace_names": ["a", "b"]}, "request: trace_names: 2 names for 1 traces"),
    ({"scenario": {"id": "s", "ledger": [{"key": "k", "class": "nope", "source_turn": 1}]}, "traces": [[]],
      "judge": "none"}, "request.scenario: ledger.0.class: Input should be 'goal', 'constraint', 'fact', "
                        "'permission', 'completion' or 'uncertainty' (got 'nope')"),
    ({"scenario": {"id": "s"}, "traces": [[]], "judge": "none"},
     "traces[0]: trace is empty: expected a run header and events"),
    ({"scenario": {"id": "s"}, "traces": [[{"kind": "run", "run_id": "r", "scenario": "other"}]], "judge": "none"},
     "traces[0]:1: scenario: trace is for scenario 'other', not 's'"),
    ({"scenario": {"id": "s"}, "traces": [str(Path(__file__))], "judge": "none"},  # text, never a path to open
     "traces[0]:1: not a JSON object: Expecting value at column 1"),
    ({"scenario": "id: s\nx: &a [1, 2]\ny: [*a, *a]\n", "traces": [[]]},
     "request.scenario:3: YAML aliases (*name) are not accepted by the service; write the values out"),
    ({"scenario": {"id": "s"}, "traces": [[]], "judge": "nobody"}, "unknown judge 'nobody'"),
])
def test_bad_requests_get_one_line(client: TestClient, body: dict, detail: str) -> None:
    response = client.post("/v1/grade", json=body)
    assert response.status_code == 422
    got = response.json()["detail"]
    assert isinstance(got, str) and "\n" not in got
    assert detail in got if body.get("judge") == "nobody" else got == detail


def test_invalid_json_body(client: TestClient) -> None:
    response = client.post("/v1/grade", content=b'{"scenario": ', headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert response.json()["detail"].startswith("request: body is not valid JSON")


# ---------------------------------------------------------------- other endpoints


def test_audit_summary_keeps_or_loses_entries(client: TestClient, contract: Path) -> None:
    scenario = yaml.safe_load((contract / "checkout-firefox.yaml").read_text())
    kept = ("Goal: repair the flaky checkout Playwright test. Only tests/checkout.spec.ts may be edited; "
            "application code must not change. Read the repo but never deploy. Run it in Firefox, "
            "not Chromium any more. The repair is still pending.")
    good = client.post("/v1/audit-summary", json={"scenario": scenario, "summary": kept, "after_turn": 5,
                                                  "semantic": False})
    assert good.status_code == 200, good.text
    audit = good.json()["audits"][0]
    assert audit["turn"] == 5 and {f["key"] for f in audit["findings"]} >= {"goal", "browser", "no_deploy"}
    bad = client.post("/v1/audit-summary", json={"scenario": scenario, "summary": "Fix the test.",
                                                 "after_turn": 5, "semantic": True})
    assert bad.status_code == 200 and bad.headers["x-judge-exit-code"] == "1"
    lost = bad.json()["audits"][0]["lost"]
    assert "editable_paths" in lost and "no_app_code" in lost
    missing = client.post("/v1/audit-summary", json={"summary": "x", "after_turn": 1})
    assert missing.status_code == 422 and "scenario" in missing.json()["detail"]


def test_schema_endpoints(client: TestClient) -> None:
    from judge.api import format_schemas
    from judge.model.schemas import json_schema, schema_names

    # the same names as `judge schema`, suite formats included
    assert client.get("/v1/schema").json() == {"schemas": [*schema_names(), "suite-report", "suite-part",
                                                           "run-report"]}
    assert client.get("/v1/schema/suite-part").json() == json_schema("suite-part", format_schemas())
    assert client.get("/v1/schema/grade-report").json() == json_schema("grade-report")
    missing = client.get("/v1/schema/nothing")
    assert missing.status_code == 404 and "unknown schema 'nothing'" in missing.json()["detail"]
    assert missing.headers["x-judge-exit-code"] == "2"  # as `judge schema nothing` exits
    assert "x-judge-exit-code" not in client.get("/v1/schema").headers  # a plain answer has no exit code


def test_health_and_openapi(client: TestClient) -> None:
    assert client.get("/healthz").json()["status"] == "ok"
    spec = client.get("/openapi.json").json()
    assert {"/v1/grade", "/v1/judges", "/v1/audit-summary", "/v1/schema/{name}", "/healthz"} <= set(spec["paths"])
    grade_ok = spec["paths"]["/v1/grade"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert grade_ok["$ref"].split("/")[-1] in spec["components"]["schemas"]
    assert client.get("/docs").status_code == 200


def _replay_config(tmp_path: Path) -> Path:
    make = make_reports(tmp_path / "data")
    assert make["reports"].is_dir()
    config = tmp_path / "judge.toml"
    config.write_text(f"""[tool.judge]
default = "replay"
[tool.judge.judges.replay]
backend = "replay"
path = "{(tmp_path / 'data' / 'recorded.jsonl').as_posix()}"
[tool.judge.judges.broken]
backend = "llm"
""")
    return config


def test_judges_lists_fingerprints_and_calibration(tmp_path: Path) -> None:
    client = TestClient(create_app(config_file=_replay_config(tmp_path)))
    body = client.get("/v1/judges").json()
    by_name = {j["name"]: j for j in body["judges"]}
    assert body["default"] == "replay" and set(by_name) == {"local", "replay", "broken"}
    assert by_name["replay"]["fingerprint"] == {"backend": "replay-test"}
    assert by_name["local"]["fingerprint"]["weights_sha256"]
    assert by_name["replay"]["calibration"]["status"] in ("missing", "stale")
    assert by_name["replay"]["calibration"]["reasons"]
    assert "needs `model`" in by_name["broken"]["error"]


def test_concurrent_requests_on_a_live_server_share_the_judge(tmp_path: Path) -> None:
    config = _replay_config(tmp_path)
    runs = tmp_path / "data" / "runs"
    body = {"scenario": (runs / "scenario.yaml").read_text(), "traces": [(runs / "drift.jsonl").read_text()],
            "judge": "replay"}
    app = create_app(config_file=config)

    async def fire(url: str) -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            return await asyncio.gather(*(http.post("/v1/grade", json=body) for _ in range(12)))

    with live_server(app) as url:
        responses = asyncio.run(fire(url))
    assert {r.status_code for r in responses} == {200}
    assert len({r.text for r in responses}) == 1
    report = responses[0].json()
    assert report["judge"]["name"] == "replay"
    findings = {(cp["after_turn"], f["key"]): f for cp in report["runs"][0]["checkpoints"] for f in cp["findings"]}
    assert findings[(3, "goal")]["verdict"] == "judge-error"
    assert findings[(6, "browser")]["disagreement"] is True
    # 12 requests, graded by the worker processes (each keeps the judge it built for the next request)
    assert 1 <= app.state.workers.started <= app.state.workers.size


# ---------------------------------------------------------------- auth and limits


def test_token_guards_v1_and_review(tmp_path: Path) -> None:
    client = TestClient(create_app(token="s3cret tok;en"), follow_redirects=False)
    assert client.get("/healthz").status_code == 200
    for path in ("/v1/judges", "/v1/schema", "/review"):
        refused = client.get(path)
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert refused.headers["x-judge-exit-code"] == "2"  # as every refusal: the caller's input, not the agent
        assert "Authorization: Bearer" in refused.json()["detail"]
    assert client.get("/v1/schema", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/v1/schema", headers={"Authorization": "Bearer s3cret tok;en"}).status_code == 200
    assert client.post("/v1/audit-summary", json={}).status_code == 401
    in_url = client.get("/review", params={"token": "s3cret tok;en"})
    assert in_url.status_code == 401  # a token in a URL would be written to access logs: it signs nothing in
    page = client.get("/review", headers={"accept": "text/html"})
    assert page.status_code == 401 and 'action="/review/sign-in"' in page.text  # a browser gets the form
    assert client.post("/review/sign-in", data={"token": "wrong"}).status_code == 401
    hop = client.post("/review/sign-in", data={"token": "s3cret tok;en"})
    assert hop.status_code == 303 and hop.headers["location"] == "/review"
    assert "HttpOnly" in hop.headers["set-cookie"] and "SameSite=Strict" in hop.headers["set-cookie"]
    assert client.get("/review").status_code == 200  # the cookie now
    assert client.get("/v1/schema").status_code == 401  # the cookie is for the page only


def test_token_comes_from_the_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_API_TOKEN", "from-env")
    guarded = TestClient(create_app())
    assert guarded.get("/v1/schema").status_code == 401
    assert guarded.get("/v1/schema", headers={"Authorization": "Bearer from-env"}).status_code == 200
    assert TestClient(create_app(token="")).get("/v1/schema").status_code == 200  # explicitly off


def test_body_limit_by_length_and_while_streaming() -> None:
    client = TestClient(create_app(max_body=2000))
    big = {"scenario": {"id": "s"}, "traces": [[{"pad": "x" * 3000}]]}
    by_length = client.post("/v1/grade", json=big)
    assert by_length.status_code == 413 and by_length.headers["x-judge-exit-code"] == "2"
    assert by_length.json()["detail"] == "request body larger than the limit of 2000 bytes (judge serve --max-body)"

    def chunks():
        data = json.dumps(big).encode()
        for i in range(0, len(data), 500):
            yield data[i:i + 500]

    streamed = client.post("/v1/grade", content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413 and streamed.headers["x-judge-exit-code"] == "2"
    assert "2000 bytes" in streamed.json()["detail"]
    small = client.post("/v1/grade", json={"scenario": {"id": "s"}, "traces": [[]], "judge": "none"})
    assert small.status_code == 422  # under the limit: graded (and refused for its content)


def test_serve_refuses_a_public_bind_without_token(monkeypatch: pytest.MonkeyPatch) -> None:
    from judge.cli.serve import is_loopback, register

    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)  # a group, so `serve` is addressed by name
    monkeypatch.delenv("JUDGE_API_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "JUDGE_API_TOKEN" in lines[0] and "0.0.0.0" in lines[0]
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")


# ---------------------------------------------------------------- review queue and labels


@pytest.fixture
def review(tmp_path: Path):
    paths = make_reports(tmp_path)
    return paths, TestClient(create_app(reports_dir=paths["reports"], labels_path=paths["labels"],
                                        annotator="reviewer-a"))


def test_queue_holds_the_findings_to_review(review) -> None:
    paths, client = review
    body = client.get("/review/api/queue").json()
    items = {i["case"]: i for i in body["items"]}
    assert sorted(items) == QUEUE
    assert any("notes.json" in n for n in body["notes"])
    browser = items["checkout-firefox/checkout-drift-01/6/browser"]
    assert browser["reasons"] == ["disagreement"]
    assert browser["entry"]["value"] == "firefox" and browser["entry"]["superseded"][0]["value"] == "chromium"
    assert [e["id"] for e in browser["events"]] == ["e8", "e9", "e10", "e11", "e12"]
    assert browser["deterministic"]["evidence_event"] == "e10"
    assert browser["finding"]["judge_verdict"] == "upheld"
    assert items["checkout-firefox/checkout-drift-01/3/goal"]["reasons"] == ["judge error"]
    assert items["checkout-firefox/checkout-drift-01/6/goal"]["reasons"] == ["needs review"]
    page = client.get("/review")
    assert page.status_code == 200 and page.text.count('class="item"') == 5
    assert "model timed out" in page.text and "is-rule-evidence" in page.text


def test_answers_are_appended_as_labels_calibrate_reads(review) -> None:
    from calibration import read_labels

    paths, client = review
    labels = paths["labels"]
    labels.write_text('{"case": "older/line", "label": "upheld", "annotator": "x"}')  # no final newline
    case = "checkout-firefox/checkout-drift-01/6/browser"
    first = client.post("/review/api/labels", json={"case": case, "label": "violated", "evidence_event": "e10",
                                                    "annotator": "reviewer-a", "note": "ran chromium"})
    assert first.status_code == 200 and first.json()["conflict"] is False
    second = client.post("/review/api/labels", json={"case": case, "label": "upheld", "annotator": "reviewer-b"})
    assert second.json()["conflict"] is True and len(second.json()["labels"]) == 2
    rows = _lines(labels)
    assert rows[0] == {"case": "older/line", "label": "upheld", "annotator": "x"}  # kept as it was
    assert rows[1] == {"case": case, "scenario": "checkout-firefox", "trace": "../runs/drift.jsonl",
                       "after_turn": 6, "key": "browser", "label": "violated", "evidence_event": "e10",
                       "annotator": "reviewer-a", "note": "ran chromium"}
    assert rows[2]["label"] == "upheld" and rows[2]["evidence_event"] is None
    assert (labels.parent / rows[1]["trace"]).resolve() == (paths["runs"] / "drift.jsonl").resolve()
    assert [r.label for r in read_labels(labels)] == ["upheld", "violated", "upheld"]
    assert "Conflicting labels" in client.get("/review").text


@pytest.mark.parametrize("answer, status, detail", [
    ({"label": "violated"}, 422, "needs its evidence event"),
    ({"label": "violated", "evidence_event": "e17"}, 422, "'e17' is not in the slice"),
    ({"label": "maybe"}, 422, "request: label: Input should be"),
    ({"label": "upheld", "annotator": "  "}, 422, "the annotator needs a name"),
    ({"label": "upheld", "case": "nope/r/1/k"}, 404, "not in the review queue"),
])
def test_bad_answers_are_refused(review, answer: dict, status: int, detail: str) -> None:
    paths, client = review
    body = {"case": "checkout-firefox/checkout-drift-01/6/browser", "annotator": "a", **answer}
    response = client.post("/review/api/labels", json=body)
    assert response.status_code == status
    assert detail in response.json()["detail"]
    assert not paths["labels"].exists()


def test_review_degrades_without_trace_scenario_or_labels(tmp_path: Path) -> None:
    paths = make_reports(tmp_path)
    report = paths["reports"] / "drift.json"
    data = json.loads(report.read_text())
    data["runs"][0]["trace"] = "gone/drift.jsonl"
    report.write_text(json.dumps(data))
    client = TestClient(create_app(reports_dir=paths["reports"]))
    items = client.get("/review/api/queue").json()["items"]
    assert len(items) == 5
    assert all(i["events"] == [] and "not found" in i["events_note"] for i in items)
    assert all(i["entry"] is None and "no scenario file" in i["entry_note"] for i in items)
    page = client.get("/review")
    assert page.status_code == 200 and "judge serve --labels FILE" in page.text
    refused = client.post("/review/api/labels", json={"case": QUEUE[0], "label": "upheld", "annotator": "a"})
    assert refused.status_code == 409
    with_scenarios = TestClient(create_app(reports_dir=paths["reports"], scenarios=[paths["runs"]]))
    assert all(i["entry"] for i in with_scenarios.get("/review/api/queue").json()["items"])


def test_judge_calibrate_reads_the_answers(review) -> None:
    from judge.grade.labelled import judge_verdicts_for_labels
    from judge.judges.replay import ReplayJudge

    paths, client = review
    for case, label, evidence in [(QUEUE[1], "violated", "e10"), (QUEUE[4], "upheld", None)]:
        response = client.post("/review/api/labels", json={"case": case, "label": label, "annotator": "a",
                                                           "evidence_event": evidence})
        assert response.status_code == 200
    run = judge_verdicts_for_labels(paths["labels"], ReplayJudge(paths["runs"].parent / "recorded.jsonl"))
    verdicts = {v["case"]: v["verdict"] for v in run.verdicts}
    assert verdicts == {QUEUE[1]: "upheld", QUEUE[4]: "violated"}  # the recorded judge's answers
    assert run.missing == [] and run.judge_errors == []
