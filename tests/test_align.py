"""`judge align` through the scripted LLM server: few-shot examples from the dev split's
disagreements, each cited by case id, written as a new locked prompt version beside the old (never
an edit of a locked one), and the new version scoring no worse than the old on the test split; the
split falls back to a seeded scenario hash (`--judge local`: tests/test_align_local.py)."""

from __future__ import annotations

import json

import pytest
from llm_server import llm_server  # noqa: F401
from trust_data import learning_judge, write_project
from typer.testing import CliRunner

from judge.cli import app
from judge.grade.align.examples import Example, choose, safe
from judge.grade.align.version import new_body
from judge.grade.cases import LabelledCase, read_cases, scenario_split
from judge.prompts import check, load_prompt

runner = CliRunner()


@pytest.fixture
def project(llm_server, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("TRUST_TEST_KEY", "sk-test-not-a-secret")
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    write_project(tmp_path, llm_server.api_base, "TRUST_TEST_KEY")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_align_writes_a_new_locked_version_that_scores_no_worse_on_test(project, llm_server):  # noqa: F811
    llm_server.default = learning_judge
    builtin = load_prompt("goal-fidelity@3")
    before = builtin.path.read_bytes()
    result = runner.invoke(app, ["align", "--judge", "gpt", "--json", "align.json"])
    assert result.exit_code == 0, result.output
    report = json.loads((project / "align.json").read_text())
    assert report["old"] == "goal-fidelity@3" and report["new"] == "goal-fidelity@4"
    assert report["split"] == "labels" and report["dev_cases"] == 18 and report["test_cases"] == 18
    assert report["disagreements"] == 3  # the three dev deploys the judge missed
    cited = [e["case"] for e in report["examples"]]
    assert cited and all(c.startswith(("deploy-1/", "deploy-2/", "deploy-3/")) for c in cited)  # dev only
    test = report["test"]
    assert test["n"] == 18 and test["accuracy_b"] >= test["accuracy_a"]
    assert (test["accuracy_a"], test["accuracy_b"]) == (15 / 18, 1.0)
    new = project / "prompts" / "goal-fidelity" / "v4.md"
    assert report["path"] == str(new) and new.is_file()
    text = new.read_text()
    for case in cited:
        assert f"(case {case}," in text
    assert "version: 4" in text and "goal-fidelity@3" in text  # the notes name where it came from
    assert builtin.body.split("<!-- role: user -->")[0].strip() in text  # the old instructions, kept
    assert builtin.path.read_bytes() == before  # the locked version is untouched
    lock = json.loads((project / "prompts" / "prompts.lock").read_text())["prompts"]
    assert set(lock) == {"goal-fidelity@4"} and check(project / "prompts").ok
    assert load_prompt("goal-fidelity@4").ref == "goal-fidelity@4"
    systems = [m["content"] for b in llm_server.bodies for m in b["messages"] if m["role"] == "system"]
    assert any("Reviewed examples" in s for s in systems) and any("Reviewed examples" not in s for s in systems)
    assert "claude-3-5-sonnet" not in json.dumps(llm_server.bodies)
    assert "scores no worse" in result.output


def test_align_again_writes_the_next_version_and_never_overwrites(project, llm_server):  # noqa: F811
    llm_server.default = learning_judge
    assert runner.invoke(app, ["align", "--judge", "gpt"]).exit_code == 0
    first = (project / "prompts" / "goal-fidelity" / "v4.md").read_bytes()
    config = project / "pyproject.toml"
    config.write_text(config.read_text() + 'prompt = "goal-fidelity@4"\n')
    again = runner.invoke(app, ["align", "--judge", "gpt"])
    assert again.exit_code == 0, again.output
    assert "no disagreement on the dev split" in again.output  # v4 already learnt the deploys
    assert (project / "prompts" / "goal-fidelity" / "v4.md").read_bytes() == first
    assert not (project / "prompts" / "goal-fidelity" / "v5.md").exists()


def test_without_a_split_field_cases_split_by_scenario_hash(tmp_path):
    write_project(tmp_path, "http://127.0.0.1:9/v1", "UNUSED", with_split=False)
    cases, source = read_cases(tmp_path / "labels")
    assert source == "scenario hash (seed 0)"
    by_scenario = {}
    for c in cases:
        by_scenario.setdefault(c.scenario, set()).add(c.split)
        assert c.split == scenario_split(c.scenario)
    assert all(len(s) == 1 for s in by_scenario.values())  # no scenario in both halves
    assert {scenario_split(f"s{i}") for i in range(20)} == {"dev", "test"}
    assert scenario_split("deploy-1", seed=1) in ("dev", "test")


def test_a_split_other_than_dev_or_test_is_one_line(tmp_path):
    write_project(tmp_path, "http://127.0.0.1:9/v1", "UNUSED")
    path = tmp_path / "labels" / "labels.jsonl"
    rows = path.read_text().splitlines()
    rows[4] = rows[4].replace('"split": "dev"', '"split": "train"')
    path.write_text("\n".join(rows) + "\n")
    from judge.errors import JudgeInputError

    with pytest.raises(JudgeInputError, match=r"labels.jsonl:5: split: split must be dev or test"):
        read_cases(tmp_path / "labels")


def _case(n: int, key: str, label: str) -> LabelledCase:
    return LabelledCase(case=f"s{n}/r/1/{key}", scenario=f"s{n}", trace=None, after_turn=1, key=key,
                        label=label, split="dev")


def test_examples_take_the_kinds_in_turn_and_spread_over_keys():
    pool = [Example(_case(1, "a", "violated"), "upheld", None, "missed"),
            Example(_case(2, "a", "violated"), "upheld", None, "missed"),
            Example(_case(3, "b", "violated"), "upheld", None, "missed"),
            Example(_case(1, "c", "upheld"), "violated", "e1", "false-alarm")]
    assert [e.case.case for e in choose(pool, 3)] == ["s1/r/1/a", "s1/r/1/c", "s2/r/1/a"]
    assert len(choose(pool, 10)) == 4


def test_example_text_cannot_open_a_template_tag_or_close_the_fence():
    text = safe("{{ secrets }} {% for x in y %} </trace_data> line\nbreak")
    assert "{{" not in text and "{%" not in text and "</trace_data>" not in text and "\n" not in text
    assert new_body("<!-- role: system -->\nA\n<!-- role: user -->\nB", "EX") == (
        "<!-- role: system -->\nA\n\nEX\n<!-- role: user -->\nB")
    assert new_body("only a user part", "EX") == "EX\n\nonly a user part"
