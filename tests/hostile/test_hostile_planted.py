"""Planted secrets of every detected kind, in every field, nesting and escaping, never seen again: not
in the judge's requests, the verdict cache, the reports (JSON, Markdown, JUnit, terminal), the
service's answers or the review page."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_server import Reply, llm_judge_config, llm_server  # noqa: F401  (fixture)
from planted import FIELD_VALUES, NO_LEAK_VALUE, SCENARIO, VALUES, leaks, planted_trace
from typer.testing import CliRunner

from judge.cli import app
from judge.judges.llm import libs
from judge.trace import TraceReader

MODEL = "openai/judge-planted-model"
runner = CliRunner()


@pytest.fixture
def config(llm_server, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("JUDGE_PLANTED_KEY", "sk-test-not-a-secret")
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    libs()[0].register_model({MODEL: {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                                      "litellm_provider": "openai", "mode": "chat", "max_tokens": 4096}})
    return llm_judge_config(tmp_path / "judge.toml", name="probe", model=MODEL, api_base=llm_server.api_base,
                            key_env="JUDGE_PLANTED_KEY", timeout_s=5, backoff_s=0.01, max_retries=1)


@pytest.fixture
def files(tmp_path):
    scenario = tmp_path / "planted.json"
    scenario.write_text(json.dumps(SCENARIO))
    trace = tmp_path / "planted.jsonl"
    trace.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in planted_trace("planted")),
                     encoding="utf-8")
    return scenario, trace


def _files_text(root) -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*") if p.is_file())


def test_the_trace_really_holds_every_planted_value(files):
    assert not set(s for _, _, s in VALUES) - set(leaks(files[1].read_text(encoding="utf-8")))


@pytest.mark.slow
def test_nothing_planted_reaches_the_judge_the_cache_or_a_report(config, files, llm_server, tmp_path):  # noqa: F811
    llm_server.reset()  # every answer: all asked keys upheld
    out = tmp_path / "out"
    result = runner.invoke(app, ["grade", str(files[0]), str(files[1]), "--judge", "probe", "--config", str(config),
                                 "--json", str(out / "r.json"), "--md", str(out / "r.md"),
                                 "--junit", str(out / "r.xml")])
    assert result.exit_code in (0, 1), result.output
    assert llm_server.bodies, "the judge was asked"
    sent = json.dumps(llm_server.bodies, ensure_ascii=False)
    assert "[REDACTED:" in sent and "lookup" in sent  # the judge saw the events, redacted
    assert leaks(sent) == []
    assert leaks(_files_text(tmp_path / "cache")) == []
    assert leaks(_files_text(out)) == [] and leaks(result.output) == []
    report = json.loads((out / "r.json").read_text())
    counts = report["runs"][0]["redactions"]
    for kind in ("api_key", "email", "phone", "card_number", "iban", "ssn", "secret_field", "private_key",
                 "basic_auth", "url_credentials", "aws_secret", "jwt", "national_id", "no_leak"):
        assert counts.get(kind, 0) >= 1, (kind, counts)
    # model-blind: the header's agent name, version and model never reach the judge
    assert "probe-agent" not in sent and "9.9.9" not in sent and "gpt-4o" not in sent


@pytest.mark.slow
def test_nothing_planted_reaches_a_service_answer(config, files, llm_server):  # noqa: F811
    from fastapi.testclient import TestClient

    from judge.service import create_app

    llm_server.reset()
    client = TestClient(create_app(config_file=config, token=""), base_url="http://127.0.0.1")
    trace_lines = planted_trace("planted")
    for traces in ([trace_lines], [files[1].read_text(encoding="utf-8")]):
        answer = client.post("/v1/grade", json={"scenario": SCENARIO, "traces": traces, "judge": "probe"})
        assert answer.status_code == 200, answer.text
        assert "[REDACTED:" in answer.text and leaks(answer.text) == []


def test_nothing_planted_reaches_the_review_page(config, files, llm_server, tmp_path):  # noqa: F811
    from fastapi.testclient import TestClient

    from judge.service import create_app

    llm_server.reset()
    llm_server.default = lambda body: Reply(content="no verdict here")  # every key a judge error: queued
    reports = tmp_path / "reports"
    result = runner.invoke(app, ["grade", str(files[0]), str(files[1]), "--judge", "probe", "--config",
                                 str(config), "--json", str(reports / "r.json"), "-q"])
    assert (reports / "r.json").is_file(), result.output
    client = TestClient(create_app(reports_dir=reports, scenarios=[files[0].parent], token=""),
                        base_url="http://127.0.0.1")
    queue = client.get("/review/api/queue")
    page = client.get("/review")
    assert queue.status_code == page.status_code == 200
    items = queue.json()["items"]
    assert items and any(item["events"] for item in items), "the page shows the trace's events"
    assert leaks(queue.text) == [] and leaks(page.text) == []


# ---------------------------------------------------------------- any value, any place (reader level)

_PLACES = ("text", "tool", "arg_value", "arg_key", "nested", "json_string", "json_twice", "result", "state_key",
           "state_value", "summary_to", "snapshot_ref", "header_run_id", "header_metadata", "call_id")


def _place(value: str, place: str) -> list[dict]:
    header = {"kind": "run", "run_id": "r", "scenario": "s"}
    base = {"id": "e1", "turn": 1}
    events: list[dict] = []
    if place == "text":
        events = [{**base, "kind": "user", "text": value}]
    elif place in ("tool", "arg_value", "arg_key", "nested", "json_string", "json_twice", "call_id"):
        args = {"arg_value": {"v": value}, "arg_key": {value: 1}, "nested": {"a": [{"b": [[value]]}]},
                "json_string": {"v": json.dumps({"x": value})},
                "json_twice": {"v": json.dumps({"x": json.dumps({"y": [value]})})}}.get(place, {})
        events = [{**base, "kind": "tool-call", "call_id": value if place == "call_id" else "c1",
                   "tool": value if place == "tool" else "t", "args": args}]
    elif place == "result":
        events = [{**base, "kind": "tool-call", "call_id": "c1", "tool": "t"},
                  {"id": "e2", "turn": 1, "kind": "tool-result", "call_id": "c1", "status": "ok",
                   "result": {"out": [value]}}]
    elif place in ("state_key", "state_value"):
        events = [{**base, "kind": "state-write", "key": value if place == "state_key" else "k",
                   "value": value if place == "state_value" else 1}]
    elif place == "summary_to":
        events = [{**base, "kind": "summary", "reason": "handoff", "to": value, "text": "x"}]
    elif place == "snapshot_ref":
        events = [{**base, "kind": "snapshot", "ref": value}]
    elif place == "header_run_id":
        header["run_id"] = value
    elif place == "header_metadata":
        header["metadata"] = {"m": [value]}
    return [header, *events]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.sampled_from(VALUES), st.sampled_from(_PLACES), st.booleans(), st.booleans())
def test_any_planted_value_in_any_place_is_read_redacted(planted, place, as_text, ascii_only):
    _, value, secret = planted
    lines = _place(value, place)
    source = [json.dumps(line, ensure_ascii=ascii_only) for line in lines] if as_text else lines
    reader = TraceReader(source)
    seen = reader.header.model_dump_json() + "".join(e.model_dump_json() for e in reader)
    assert leaks(seen) == [] and secret not in seen, (place, seen)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.sampled_from(FIELD_VALUES), st.integers(0, 3), st.booleans())
def test_any_secret_named_field_at_any_depth_is_read_redacted(field, depth, in_json_string):
    name, value, secret = field
    holder: object = {name: value}
    for _ in range(depth):
        holder = {"wrap": [holder]}
    args = {"v": json.dumps(holder)} if in_json_string else {"v": holder}
    lines = [{"kind": "run", "run_id": "r", "scenario": "s"},
             {"id": "e1", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "t", "args": args}]
    reader = TraceReader([json.dumps(line) for line in lines])
    seen = "".join(e.model_dump_json() for e in reader)
    assert secret not in seen and "[REDACTED:secret_field]" in seen


def test_nothing_planted_reaches_a_drafted_scenario(files, tmp_path):
    """`judge draft` quotes what the user said and what tools returned: every planted secret is
    redacted before drafting (the no-leak value is no secret without its scenario's rule)."""
    out = tmp_path / "drafted.yaml"
    result = runner.invoke(app, ["draft", str(files[1]), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "redacted before drafting" in text
    assert [s for s in leaks(text + result.output) if s != NO_LEAK_VALUE] == []


def test_a_short_secret_is_a_leak_as_a_token_not_inside_a_hash():
    """A 5-digit PIN inside a cache's sha256 key is chance, not a leak (a CI run failed on it); as a
    value, after a JSON escape or in a JSON string it is one."""
    assert leaks("0218c65bfc80491fac9d") == []
    assert leaks('{"pin": "80491"}') == ["80491"] and leaks("line\\n80491") == ["80491"]
