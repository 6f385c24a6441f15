"""Every planted form, in every sink, one test each (issue 39): the judge's requests, the verdict
cache, the JSON, Markdown, JUnit and terminal reports, the `--html` page, `judge draft`'s scenario,
and what `judge run` records (its traces, `run.json`, its Markdown and JUnit reports). The sinks are
made once for the module: the planted trace graded with an LLM judge on the local test server and
drafted; an agent that repeats every planted text in its messages, tool arguments and state driven
by `judge run` through a script whose messages and fixtures hold them too. The kept texts (a
snapshot ref with `@`, prose about a password) reach the judge and the recorded traces as written."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from llm_server import llm_judge_config, shared_server
from planted import FIELD_VALUES, KEPT, NO_LEAK_VALUE, SCENARIO, VALUES, leaks, planted_trace
from typer.testing import CliRunner

from judge.cli import app
from judge.judges.llm import libs

pytestmark = pytest.mark.slow  # the sinks: one graded run with a judge, a draft and a driven run (~10 s)

MODEL = "openai/judge-sinks-model"
runner = CliRunner()
AGENT = """
    import json
    from pathlib import Path

    TEXTS = json.loads((Path(__file__).parent / "texts.json").read_text(encoding="utf-8"))

    def act(messages, context):
        if messages[-1]["role"] == "user":
            return {"tool": "lookup", "args": {"query": " | ".join(TEXTS), "each": TEXTS}}
        return {"text": "Found: " + " | ".join(TEXTS), "state": {"notes": TEXTS}}
"""
GRADE_SINKS = ("judge_request", "verdict_cache", "json_report", "markdown_report", "junit_report", "terminal",
               "html_page", "draft")
RUN_SINKS = ("run_trace", "run_reports")


def _texts(root: Path, pattern: str = "*") -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.rglob(pattern))
                   if p.is_file())


def _graded(tmp: Path) -> dict[str, str]:
    llm = shared_server()
    libs()[0].register_model({MODEL: {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                                      "litellm_provider": "openai", "mode": "chat", "max_tokens": 4096}})
    config = llm_judge_config(tmp / "judge.toml", name="probe", model=MODEL, api_base=llm.api_base,
                              key_env="JUDGE_SINKS_KEY", timeout_s=5, backoff_s=0.01, max_retries=1)
    scenario, trace, out = tmp / "planted.json", tmp / "planted.jsonl", tmp / "out"
    scenario.write_text(json.dumps(SCENARIO))
    trace.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in planted_trace("planted")),
                     encoding="utf-8")
    graded = runner.invoke(app, ["grade", str(scenario), str(trace), "--judge", "probe", "--config", str(config),
                                 "--json", str(out / "r.json"), "--md", str(out / "r.md"), "--junit",
                                 str(out / "r.xml"), "--html", str(out / "r.html")])
    assert graded.exit_code in (0, 1), graded.output
    assert llm.bodies, "the judge was asked"
    drafted = runner.invoke(app, ["draft", str(trace), "-o", str(tmp / "drafted.yaml")])
    assert drafted.exit_code == 0, drafted.output
    return {"judge_request": json.dumps(llm.bodies, ensure_ascii=False), "verdict_cache": _texts(tmp / "cache"),
            "json_report": _texts(out, "*.json"), "markdown_report": _texts(out, "*.md"),
            "junit_report": _texts(out, "*.xml"), "terminal": graded.output, "html_page": _texts(out, "*.html"),
            "draft": (tmp / "drafted.yaml").read_text(encoding="utf-8") + drafted.output}


def _driven(tmp: Path) -> dict[str, str]:
    texts = [text for _, text, _ in VALUES] + [NO_LEAK_VALUE, *KEPT]
    (tmp / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    (tmp / "agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    fields = {name: value for name, value, _ in FIELD_VALUES}
    scenario = {**{k: v for k, v in SCENARIO.items() if k != "checkpoints"},
                "checkpoints": [{"after_turn": 2, "must_retain": ["goal", "no_prod"]}],
                "script": {"turns": [{"turn": 1, "user": "Look these up: " + " | ".join(texts)},
                                     {"turn": 2, "user": "And these fields: " + json.dumps(fields)}],
                           "fixtures": [{"tool": "lookup", "result": {"found": texts, "fields": fields}}]}}
    path = tmp / "run-scenario.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    out = tmp / "run-out"
    result = runner.invoke(app, ["run", str(path), "--agent", f"{tmp / 'agent.py'}:act", "-o", str(out),
                                 "--judge", "none", "--md", str(tmp / "run.md"), "--junit", str(tmp / "run.xml")])
    assert result.exit_code in (0, 1), result.output
    traces = _texts(out, "*.jsonl")
    assert "[REDACTED:" in traces and "Found:" in traces, "the run recorded what the agent said, redacted"
    return {"run_trace": traces, "run_reports": _texts(out, "*.json") + (tmp / "run.md").read_text(encoding="utf-8")
            + (tmp / "run.xml").read_text(encoding="utf-8") + result.output}


@pytest.fixture(scope="module")
def sinks(tmp_path_factory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("sinks")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUDGE_SINKS_KEY", "sk-test-not-a-secret")
        patch.setenv("JUDGE_CACHE_DIR", str(tmp / "cache"))
        return {**_graded(tmp), **_driven(tmp)}


FORMS = [(name, secret) for name, _, secret in VALUES] + [(name, secret) for name, _, secret in FIELD_VALUES]


@pytest.mark.parametrize("sink", GRADE_SINKS + RUN_SINKS)
@pytest.mark.parametrize("form, secret", FORMS, ids=[name for name, _ in FORMS])
def test_no_planted_form_reaches_any_sink(sinks, form, secret, sink):
    text = sinks[sink]
    assert text, sink
    found = [s for s in leaks(text) if s == secret]
    assert found == [], f"{form} reaches {sink}"


@pytest.mark.parametrize("sink", ("judge_request", "run_trace"))
def test_the_kept_texts_reach_the_judge_and_the_recorded_trace_as_written(sinks, sink):
    missing = [text for text in KEPT if text not in sinks[sink]]
    assert missing == [], f"redacted in {sink}: {missing}"


def test_the_no_leak_value_is_recorded_for_its_rule_and_redacted_in_the_run_reports(sinks):
    """The recorder keeps a scenario's no-leak values (the rule must see them in the trace); the
    run's reports are graded with the scenario, so they show them redacted."""
    assert NO_LEAK_VALUE in sinks["run_trace"]
    assert NO_LEAK_VALUE not in sinks["run_reports"]
