"""User patterns in linear time (RE2), and a service that one request cannot hold up.

`(a+)+$` against 26 `a`s and a `b` took Python's `re` about 40 s (issue 23); through RE2 it takes
microseconds. The bounds below are loose (a shared, loaded machine): they catch backtracking, which
would take minutes, not a slow second."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import time

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_server import Reply, llm_judge_config, llm_server  # noqa: F401  (fixture)
from review_data import live_server
from typer.testing import CliRunner

from judge.cli import app
from judge.model.patterns import PatternError, compile_pattern, glob_match

runner = CliRunner()
HOSTILE = "(a+)+$"
SUBJECT = "a" * 26 + "b"


def _scenario(patterns: list[str], tool_glob: str = "deploy") -> dict:
    return {
        "id": "hostile", "title": "A hostile pattern",
        "ledger": [{"key": "goal", "class": "goal", "value": "answer", "source_turn": 1},
                   {"key": "others", "class": "constraint", "value": "no data of other users", "source_turn": 1,
                    "sensitivity": "safety-critical"}],
        "checkpoints": [{"after_turn": 2, "must_retain": ["goal", "others"]}],
        "rules": [{"check": "no-leak", "key": "others", "patterns": patterns},
                  {"check": "forbidden-call", "key": "others", "tool": tool_glob}],
    }


def _trace(repeat: int = 50) -> list[dict]:
    lines: list[dict] = [{"kind": "run", "run_id": "r1", "scenario": "hostile"}]
    for i in range(repeat):
        lines.append({"id": f"e{2 * i + 1}", "turn": 1 + i * 2 // repeat, "kind": "assistant", "text": SUBJECT})
        lines.append({"id": f"e{2 * i + 2}", "turn": 1 + i * 2 // repeat, "kind": "tool-call", "call_id": f"c{i}",
                      "tool": "a" * 40 + "b", "args": {"q": SUBJECT}})
    lines.append({"id": "e-last", "turn": 2, "kind": "assistant", "text": "a" * 26})  # this one matches
    return lines


def _files(tmp_path, scenario: dict, trace: list[dict]):
    s, t = tmp_path / "hostile.json", tmp_path / "hostile.jsonl"
    s.write_text(json.dumps(scenario))
    t.write_text("".join(json.dumps(line) + "\n" for line in trace))
    return s, t


def test_the_pattern_itself_is_linear():
    start = time.perf_counter()
    assert compile_pattern(HOSTILE).search(SUBJECT * 1000) is None
    assert compile_pattern(HOSTILE).search("a" * 100_000) is not None
    assert time.perf_counter() - start < 1.0


def test_the_hostile_pattern_grades_quickly_through_the_cli(tmp_path):
    scenario, trace = _files(tmp_path, _scenario([HOSTILE], tool_glob="*a*a*a*a*a*a*a*a*a*a*a*c"), _trace())
    start = time.perf_counter()
    result = runner.invoke(app, ["grade", str(scenario), str(trace), "--judge", "none", "--json",
                                 str(tmp_path / "r.json")])
    took = time.perf_counter() - start
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    veto = report["runs"][0]["veto"]
    assert veto["key"] == "others" and veto["event"] == "e-last"  # the only text that ends in `a`
    assert took < 10.0, took


def test_a_pattern_re2_cannot_compile_is_one_line_naming_file_rule_and_pattern(tmp_path):
    scenario, trace = _files(tmp_path, _scenario([r"(\w+)\1"]), _trace(2))
    result = runner.invoke(app, ["grade", str(scenario), str(trace), "--judge", "none"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output
    assert "hostile.json" in lines[0] and "rules.0" in lines[0] and "no-leak:others" in lines[0]
    assert r"'(\w+)\1'" in lines[0] and "RE2" in lines[0]
    lint = runner.invoke(app, ["lint", str(scenario)])
    assert lint.exit_code == 2 and r"(\w+)\1" in lint.output


@pytest.mark.parametrize("pattern", [r"(?<=a)b", r"(?!x)y", "a{1001}", "(", "x" * 1001])
def test_what_re2_refuses_is_a_pattern_error(pattern):
    with pytest.raises(PatternError):
        compile_pattern(pattern)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.text(alphabet="ab*?[]!-/\\.z", max_size=8), st.text(alphabet="ab-/.z]![\\é\n", max_size=8))
def test_globs_match_as_fnmatchcase_does(glob, text):
    assert glob_match(text, glob) == fnmatch.fnmatchcase(text, glob)


def test_a_globs_kept_answers_are_its_answers_and_bounded():
    from judge.model.patterns import MEMO_CHARS, MEMO_TEXTS, glob_matcher

    match = glob_matcher("src/*.py")
    texts = [f"src/m{i}.py" for i in range(MEMO_TEXTS + 10)] + ["src/" + "x" * MEMO_CHARS + ".py", "docs/a.md"]
    for _ in range(3):  # asked again: the kept answers, and the ones past the bound computed again
        assert [match(t) for t in texts] == [fnmatch.fnmatchcase(t, "src/*.py") for t in texts]
    assert len(match.kept) == MEMO_TEXTS and all(len(t) <= MEMO_CHARS for t in match.kept)


def test_a_hostile_glob_is_linear():
    glob = "*a" * 40 + "*c"
    start = time.perf_counter()
    assert not glob_match("a" * 50_000, glob)
    assert time.perf_counter() - start < 2.0


# ---------------------------------------------------------------- the service


def _body(scenario: dict, trace: list[dict], judge: str = "none") -> dict:
    return {"scenario": scenario, "traces": [trace], "judge": judge}


async def _grade_while_polling(url: str, body: dict, polls: int = 20) -> tuple[httpx.Response, list[float]]:
    """POST the grade request, and meanwhile GET /healthz every 50 ms: (the answer, each health latency)."""
    latencies: list[float] = []
    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        grading = asyncio.create_task(http.post("/v1/grade", json=body))
        await asyncio.sleep(0.05)
        while not grading.done() and len(latencies) < polls:
            start = time.perf_counter()
            health = await http.get("/healthz")
            latencies.append(time.perf_counter() - start)
            assert health.status_code == 200
            await asyncio.sleep(0.05)
        return await grading, latencies


def test_the_hostile_pattern_through_the_service_while_healthz_answers():
    from judge.service import create_app

    body = _body(_scenario([HOSTILE]), _trace())
    with live_server(create_app(token="")) as url:
        start = time.perf_counter()
        answer, latencies = asyncio.run(_grade_while_polling(url, body))
        took = time.perf_counter() - start
    assert answer.status_code == 200 and answer.headers["x-judge-exit-code"] == "1", answer.text
    assert took < 30.0, took  # the first request also starts a worker process
    assert all(latency < 1.0 for latency in latencies), latencies


@pytest.mark.slow
def test_a_request_over_the_deadline_gets_503_and_the_server_stays_up(llm_server, tmp_path, monkeypatch):  # noqa: F811
    from judge.service import create_app

    monkeypatch.setenv("JUDGE_SLOW_KEY", "sk-test-not-a-secret")
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    config = llm_judge_config(tmp_path / "judge.toml", name="slow", model="openai/slow-judge",
                              api_base=llm_server.api_base, key_env="JUDGE_SLOW_KEY", timeout_s=60, max_retries=0)
    llm_server.reset()
    llm_server.default_delay_s = 30.0  # the judge takes 30 s to answer: far past the deadline
    scenario = _scenario(["never-matches-anything-here"])
    body = _body(scenario, _trace(2), judge="slow")
    application = create_app(token="", config_file=config, deadline_s=3.0, workers=1)
    try:
        _over_the_deadline(application, body, scenario)
    finally:
        llm_server.default_delay_s = 0.0  # the server is shared by the session's tests
    assert application.state.workers.started == 2


def _over_the_deadline(application, body, scenario):
    with live_server(application) as url:
        start = time.perf_counter()
        answer, latencies = asyncio.run(_grade_while_polling(url, body))
        took = time.perf_counter() - start
        assert answer.status_code == 503, answer.text
        assert answer.headers["x-judge-exit-code"] == "2"
        assert "deadline of 3 s" in answer.json()["detail"] and "judge serve --deadline" in answer.json()["detail"]
        assert took < 20.0, took
        assert latencies and all(latency < 1.0 for latency in latencies), latencies
        # the worker was killed and replaced: the next request is graded
        again = httpx.post(f"{url}/v1/grade", json=_body(scenario, _trace(2)), timeout=60)
        assert again.status_code == 200, again.text


@pytest.mark.parametrize(("globs", "path", "denied"), [
    (["src/**", "app/**"], "tests/checkout.spec.ts", None),
    (["src/**", "app/**"], "src/cart.ts", "src/**"),
    (["src/**"], "tests/../src/cart.ts", "src/**"),  # resolved as well as written
    (["*.env"], "deploy/prod.env", "*.env"),
])
def test_path_globs_of_scope_answer_through_re2(globs, path, denied):
    """The path globs of `scope` (judge.checks.kinds._pathlike) read RE2's yes or no, never a match
    object (a `False` read as `is not None` denied every path: a clean run failed)."""
    from judge.checks.kinds._pathlike import allowed_by, denied_by

    assert denied_by(globs, path) == denied
    assert allowed_by(globs, path) is (denied is not None)


@pytest.mark.slow
def test_the_hostile_pattern_through_judge_serve_while_healthz_answers():
    """The same through the command a user runs (`judge serve` in its own process, its default
    workers): /healthz answers within a second while the hostile pattern grades."""
    import os
    import subprocess
    import sys

    from review_data import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "JUDGE_API_TOKEN"}
    code = f"import sys\nfrom judge.cli import main\nsys.argv = ['judge', 'serve', '--port', '{port}']\nmain()\n"
    process = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            pytest.fail(process.stderr.read() if process.poll() is not None else "judge serve did not answer")
        # 6,000 events that the pattern must scan: long enough that /healthz is asked while it grades
        answer, latencies = asyncio.run(_grade_while_polling(url, _body(_scenario([HOSTILE]), _trace(3000))))
    finally:
        process.terminate()
        process.wait(timeout=20)
    assert answer.status_code == 200 and answer.headers["x-judge-exit-code"] == "1", answer.text
    assert answer.json()["runs"][0]["veto"]["event"] == "e-last"
    assert latencies and all(latency < 1.0 for latency in latencies), latencies


@pytest.mark.parametrize(("line", "read"), [
    ("## Refunds ##", (2, "Refunds")), ("#   Task: book a flight  ", (1, "Task: book a flight")),
    ("# C#", (1, "C")), ("Title # #", None), ("####### seven", None), ("#no space", None), ("#  ", (1, "")),
])
def test_headings_of_policies_and_task_statements(line, read):
    from judge.draft.headings import heading

    assert heading(line) == read


def test_a_hostile_heading_is_linear():
    """`# a` + spaces + `x` took the backtracking heading pattern 22 s at 2,000 spaces (issue 23's
    rule: text from users is matched in linear time; judge draft --policy-doc and task statements)."""
    from judge.draft.headings import heading
    from judge.draft.task import statement_text

    line = "# a" + " " * 200_000 + "x"
    start = time.perf_counter()
    assert heading(line) == (1, "a" + " " * 200_000 + "x")
    assert statement_text(f"{line}\nBook the flight to Oslo for me.") != ""
    assert time.perf_counter() - start < 2.0
