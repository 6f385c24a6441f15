"""The judge against servers that are not OpenAI (issue 40), over real HTTP to the scripted server
behaving like them: the structured-output form falls back when a server refuses or ignores one, and
says which it used; every request carries `max_tokens`; what a grammar cannot hold (ranges, each key
once) is validated and re-asked with the exact error; a cut answer says so."""

from __future__ import annotations

import json

import pytest
from llm_server import Reply, llm_server  # noqa: F401  (fixture)
from test_llm_judge import GOAL_UPHELD, MODEL, make_judge, make_request, run, violated  # noqa: F401

from judge.config import JudgeConfig
from judge.errors import ConfigError
from judge.judges.answers import json_in
from judge.judges.llm import LLMJudge, libs
from judge.judges.schema import answer_tokens, verdict_model

VIOLATED = violated().args["findings"][0]
LLAMA_MAX_TOKENS = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens'"


@pytest.fixture(autouse=True)
def _test_model(monkeypatch):
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-not-a-secret")
    libs()[0].register_model({MODEL: {"input_cost_per_token": 1e-6, "output_cost_per_token": 3e-6,
                                      "litellm_provider": "openai", "mode": "chat", "max_tokens": 4096}})


def forms_sent(llm_server) -> list[str]:  # noqa: F811
    def form(body):
        if body.get("tools"):
            return "tool_required" if body.get("tool_choice") == "required" else "tool"
        return "json_schema" if body.get("response_format") else "plain_json"
    return [form(b) for b in llm_server.bodies]


def test_an_object_tool_choice_dropped_falls_back_to_required_and_stays_there(make_judge, llm_server):  # noqa: F811
    """llama-server takes tool_choice only as a string: the named tool goes unforced and the model
    answers in text; "required" it honours. The judge says so, and asks the next call that way."""
    llm_server.reset(violated(more=[GOAL_UPHELD]), violated(more=[GOAL_UPHELD]))  # then every key upheld
    llm_server.tool_choice = "string"
    judge = make_judge(cache=False)
    first = run(judge)
    assert first.error is None and forms_sent(llm_server) == ["tool", "tool_required"]
    call = first.extra["calls"][0]
    assert call["form"] == "tool_required" and call["attempts"] == 2
    assert call["refused"] == ["tool: the forced tool was not called (the answer came as text)"]
    again = run(judge)
    assert again.error is None and forms_sent(llm_server)[2:] == ["tool_required"]  # remembered for the endpoint
    assert again.extra["calls"][0]["refused"] == [] and again.verdict.findings[0].verdict == "upheld"


def test_a_server_that_never_calls_a_tool_gets_the_schema_as_response_format(make_judge, llm_server):  # noqa: F811
    llm_server.reset()
    llm_server.tool_choice = "ignored"
    result = run(make_judge(cache=False))
    assert result.error is None and forms_sent(llm_server) == ["tool", "tool_required", "json_schema"]
    assert {f.verdict for f in result.verdict.findings} == {"upheld"} and result.attempts == 3
    assert [r.split(":")[0] for r in result.extra["calls"][0]["refused"]] == ["tool", "tool_required"]


def test_a_refused_response_format_falls_back_to_the_schema_in_the_prompt(make_judge, llm_server):  # noqa: F811
    llm_server.reset(Reply(content="Sure! ```json\n" + json.dumps({"findings": [VIOLATED, GOAL_UPHELD]}) + "\n```"))
    llm_server.refuse = {"response_format": "response_format is not supported"}
    result = run(make_judge(cache=False, mode="strict"))
    assert result.error is None and forms_sent(llm_server) == ["json_schema", "plain_json"]
    assert result.extra["calls"][0]["refused"] == [
        "json_schema: BadRequestError: Error code: 400 - {\"error\":{\"message\":\"response_format is not "
        "supported\",\"type\":\"invalid_request_error\",\"code\":400}}"]
    system = llm_server.bodies[1]["messages"][0]
    assert system["role"] == "system" and "JSON Schema:" in system["content"] and '"findings":' in system["content"]
    assert {f.key: f.verdict for f in result.verdict.findings} == {"no_app_code": "violated", "goal": "upheld"}


def test_a_server_that_refuses_every_form_is_one_judge_error_naming_each(make_judge, llm_server):  # noqa: F811
    llm_server.reset()
    llm_server.refuse = {"messages": "this server takes no chat"}
    result = run(make_judge(cache=False, options={"forms": ["json_schema", "plain_json"]}))
    assert result.verdict is None and len(llm_server.bodies) == 2
    assert result.error.startswith("the endpoint took none of the forms json_schema, plain_json (json_schema: ")
    assert "; plain_json: BadRequestError" in result.error


@pytest.mark.parametrize("forms", [["tools"], [], "json_schema"])
def test_options_forms_is_checked(llm_server, forms):  # noqa: F811
    with pytest.raises(ConfigError, match="options.forms must be a non-empty list of tool, tool_required"):
        LLMJudge(JudgeConfig(backend="llm", model=MODEL, api_key_env="JUDGE_TEST_KEY", options={"forms": forms}))
    with pytest.raises(ConfigError, match="options.forms needs the direct client"):
        LLMJudge(JudgeConfig(backend="llm", model=MODEL, api_key_env="JUDGE_TEST_KEY", mode="json",
                             options={"forms": ["plain_json"]}))


@pytest.mark.parametrize("mode", ["tools", "strict", "json", "md_json"])
def test_every_request_carries_the_answers_bound(make_judge, llm_server, mode):  # noqa: F811
    llm_server.reset(*([violated(more=[GOAL_UPHELD])] if mode == "tools" else
                       [Reply(content=("```json\n{}\n```" if mode == "md_json" else "{}").format(
                           json.dumps({"findings": [VIOLATED, GOAL_UPHELD]})))]))
    result = run(make_judge(cache=False, mode=mode))
    assert result.error is None, result.error
    model = verdict_model(("goal", "no_app_code"), [f"e{i}" for i in range(1, 7)])
    assert llm_server.bodies[0]["max_tokens"] == answer_tokens(model) == 128 + 2 * 160
    llm_server.reset(*([violated(more=[GOAL_UPHELD])] if mode == "tools" else
                       [Reply(content=("```json\n{}\n```" if mode == "md_json" else "{}").format(
                           json.dumps({"findings": [VIOLATED, GOAL_UPHELD]})))]))
    assert run(make_judge(cache=False, mode=mode, max_tokens=300)).error is None
    assert llm_server.bodies[0]["max_tokens"] == 300


def test_an_endpoint_that_wants_max_completion_tokens_gets_it(make_judge, llm_server):  # noqa: F811
    llm_server.reset(violated(more=[GOAL_UPHELD]), violated(more=[GOAL_UPHELD]))
    llm_server.refuse = {"max_tokens": LLAMA_MAX_TOKENS}
    judge = make_judge(cache=False)
    result = run(judge)
    assert result.error is None and len(llm_server.bodies) == 2 and result.extra["calls"][0]["refused"] == []
    assert llm_server.bodies[1]["max_completion_tokens"] == 448 and "max_tokens" not in llm_server.bodies[1]
    assert run(judge).error is None and "max_tokens" not in llm_server.bodies[2]


def test_an_answer_cut_at_max_tokens_is_reasked_saying_so(make_judge, llm_server):  # noqa: F811
    cut = '{"findings": [{"key": "goal", "verdict": "upheld", "confidence": 0.5, "rationale": "the'
    llm_server.reset(Reply(content=cut, finish_reason="length"), Reply(content=json.dumps({"findings": [VIOLATED]})))
    result = run(make_judge(cache=False, mode="strict", max_tokens=40))
    assert result.error is None and result.attempts == 2
    reask = llm_server.bodies[1]["messages"][-1]["content"]
    assert "the answer stopped at max_tokens=40 before it was complete" in reask


def test_what_a_grammar_cannot_hold_is_reasked_with_the_exact_error(make_judge, llm_server):  # noqa: F811
    """The 1.5B model under llama-server's grammar: confidence 100 and each key twice. Both are
    re-asked with pydantic's own words, recorded in the call, and the judge error names them."""
    hundred = dict(GOAL_UPHELD, confidence=100)
    twice = {"findings": [GOAL_UPHELD, GOAL_UPHELD]}
    llm_server.reset(Reply(content=json.dumps({"findings": [hundred]})), Reply(content=json.dumps(twice)),
                     Reply(content=json.dumps(twice)))
    result = run(make_judge(cache=False, mode="strict", max_retries=2))
    assert result.verdict is None and result.attempts == 3
    reasks = [b["messages"][-1]["content"] for b in llm_server.bodies[1:]]
    assert "findings.0.confidence\n  Input should be less than or equal to 1" in reasks[0]
    assert "key 'goal' is answered more than once: give one finding per key" in reasks[1]
    errors = result.extra["calls"][0]["answer_errors"]
    assert len(errors) == 3 and "less than or equal to 1" in errors[0] and "more than once" in errors[2]
    assert result.error.startswith("invalid answer after 3 attempts (form json_schema): 1 validation error")
    schema = llm_server.bodies[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["findings"]["maxItems"] == 2  # a grammar stops at one finding per key


def test_the_default_prompt_says_confidence_is_0_to_1(make_judge, llm_server):  # noqa: F811
    llm_server.reset()
    judge = make_judge(cache=False)
    assert run(judge).error is None and judge.prompt.ref == "goal-fidelity@3"
    system = llm_server.bodies[0]["messages"][0]["content"]
    assert "Confidence 0-1, rationale at most 20 words." in system


@pytest.mark.parametrize("content, expected", [
    ('{"a": 1}', '{"a": 1}'),
    ('Here it is:\n```json\n{"a": 1}\n```\nDone.', '{"a": 1}'),
    ('The answer is {"a": {"b": 2}} as asked.', '{"a": {"b": 2}}'),
    ('{"findings": [ {not json', '{"findings": [ {not json'),
    ("```\nno closing fence {", "```\nno closing fence {"),
])
def test_json_in_finds_the_answer_in_text(content, expected):
    assert json_in(content) == expected


def test_config_check_probe_sends_one_request_and_says_what_answered(llm_server, tmp_path, monkeypatch):  # noqa: F811
    from llm_server import llm_judge_config
    from typer.testing import CliRunner

    from judge.cli import app

    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    config = llm_judge_config(tmp_path / "judge.toml", model=MODEL, api_base=llm_server.api_base,
                              key_env="JUDGE_TEST_KEY", timeout_s=5)
    llm_server.reset()
    llm_server.tool_choice = "string"  # llama-server: an object tool_choice dropped, "required" honoured
    result = CliRunner().invoke(app, ["config", "check", "--probe", "--config", str(config)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "probe: form tool_required answered in" in text and "2 request(s), max_tokens 448" in text
    assert "refused: tool: the forced tool was not called (the answer came as text)" in text
    assert "probe:" not in text.split("local")[-1]  # the embedding judge sends no request
    assert forms_sent(llm_server) == ["tool", "tool_required"] and not (tmp_path / "cache").exists()
    llm_server.reset()
    llm_server.refuse = {"messages": "no chat here"}
    result = CliRunner().invoke(app, ["config", "check", "--probe", "--config", str(config)])
    assert result.exit_code == 2
    assert "the probe request got no valid answer: the endpoint took none of the forms" in " ".join(result.output.split())
