"""Bounded parsing: alias bombs, deep nesting, endless lines, binary devices, lone surrogates and
imports that fail halfway: each refused with one line naming file, line and field (exit 2, HTTP
422), never a traceback, a stall or a partial file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app

runner = CliRunner()
TOUR = Path(__file__).resolve().parents[2] / "docs" / "tour"
BOMB = ("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n")


def _one_line_error(result, *parts: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    for part in parts:
        assert part in lines[0], (part, lines[0])


def test_yaml_alias_bomb_is_refused_by_lint(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    _one_line_error(runner.invoke(app, ["lint", str(path)]), "bomb.yaml:", "aliases", "expand")


def test_recursive_alias_and_deep_yaml_are_refused(tmp_path):
    recursive = tmp_path / "rec.yaml"
    recursive.write_text("a: &a [*a]\n")
    _one_line_error(runner.invoke(app, ["lint", str(recursive)]), "rec.yaml:", "nested deeper than 200")
    deep = tmp_path / "deep.yaml"
    deep.write_text("id: x\nledger: " + "[" * 100_000 + "]" * 100_000 + "\n")
    _one_line_error(runner.invoke(app, ["lint", str(deep)]), "deep.yaml:", "nested deeper than 200")


def test_deep_json_scenario_is_refused(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"id": "x", "ledger": ' + "[" * 100_000 + "]" * 100_000 + "}")
    _one_line_error(runner.invoke(app, ["lint", str(deep)]), "deep.json", "nested deeper than 200")
    medium = tmp_path / "medium.json"
    medium.write_text('{"id": "x", "title": "t", "ledger": [], "deltas": [{"turn": 1, "op": "set", "key": "k", '
                      '"source": "user", "value": ' + "[" * 300 + "]" * 300 + "}]}")
    _one_line_error(runner.invoke(app, ["lint", str(medium)]), "medium.json", "nested deeper than 200")


def test_alias_bomb_in_a_suite_manifest_and_the_review_index(tmp_path):
    from judge.review.queue import _ScenarioFinder

    manifest = tmp_path / "suite.yaml"
    manifest.write_text(BOMB)
    _one_line_error(runner.invoke(app, ["suite", str(manifest), "--judge", "none"]), "suite.yaml:", "aliases")
    (tmp_path / "bomb.yaml").write_text(BOMB)
    finder = _ScenarioFinder([tmp_path])
    assert finder.find("anything", None) is None  # the unreadable file is skipped, nothing expands


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_devices_are_refused(device, tmp_path):
    if not os.path.exists(device):
        pytest.skip(f"{device} is absent")
    _one_line_error(runner.invoke(app, ["lint", device]), device)
    _one_line_error(runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), device, "--judge", "none"]), device)
    _one_line_error(runner.invoke(app, ["import", "openai", device, "-o", str(tmp_path / "o.jsonl")]), device)
    _one_line_error(runner.invoke(app, ["calibrate", "--labels", device, "--verdicts", device, "--name", "x",
                                        "--out", str(tmp_path)]), device)
    assert not list(tmp_path.iterdir())


def test_deep_tool_arguments_name_the_line_and_field(tmp_path):
    trace = tmp_path / "deep.jsonl"
    lines = (TOUR / "clean.jsonl").read_text().splitlines()
    deep = {"id": "e99", "turn": 9, "kind": "tool-call", "call_id": "c99", "tool": "t",
            "args": {"x": json.loads("[" * 600 + "]" * 600)}}
    trace.write_text("\n".join([*lines, json.dumps(deep)]) + "\n")
    result = runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(trace), "--judge", "none"])
    _one_line_error(result, f"deep.jsonl:{len(lines) + 1}", "args", "nested deeper than 200")
    very = tmp_path / "very.jsonl"
    very.write_text("\n".join([*lines, json.dumps(deep).replace("[" * 600, "[" * 100_000)
                               .replace("]" * 600, "]" * 100_000)]) + "\n")
    result = runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(very), "--judge", "none"])
    _one_line_error(result, f"very.jsonl:{len(lines) + 1}", "nested deeper than 200")


def test_a_line_over_the_cap_is_refused_with_its_number(tmp_path, monkeypatch):
    import judge.trace.load as load

    monkeypatch.setattr(load, "MAX_LINE_BYTES", 1000)
    trace = tmp_path / "long.jsonl"
    lines = (TOUR / "clean.jsonl").read_text().splitlines()
    trace.write_text("\n".join([lines[0], "x" * 5000, *lines[1:]]) + "\n")
    with pytest.raises(Exception) as info:
        list(load.TraceReader(trace))
    assert "long.jsonl:2" in str(info.value) and "longer than the limit" in str(info.value)


def test_importers_refuse_deep_files_and_leave_nothing(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    runs = [[{"role": "user", "content": "hi"}], [{"role": "user", "content": "deep"},
                                                   {"role": "assistant", "content": None, "tool_calls": [
                                                       {"id": "c1", "type": "function", "function": {
                                                           "name": "t", "arguments": json.dumps(
                                                               {"x": json.loads("[" * 300 + "]" * 300)})}}]}]]
    src = tmp_path / "runs.json"
    src.write_text(json.dumps(runs))
    result = runner.invoke(app, ["import", "openai", str(src), "-o", str(out)])
    _one_line_error(result, "nested deeper than 200")
    assert list(out.iterdir()) == []  # the first run, valid, was not left behind either
    very = tmp_path / "very.json"
    very.write_text("[" * 100_000 + "]" * 100_000)
    _one_line_error(runner.invoke(app, ["import", "openai", str(very), "-o", str(out)]), "nested deeper than 200")


def test_lone_surrogates_are_imported_as_replacement_characters(tmp_path):
    src = tmp_path / "msgs.json"
    src.write_text('[{"role": "user", "content": "bad \\ud800 half"}, {"role": "assistant", "content": "ok"}]')
    out = tmp_path / "t.jsonl"
    result = runner.invoke(app, ["import", "openai", str(src), "-o", str(out), "--scenario", "tour"])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "\ufffd" in text and not list(tmp_path.glob(".*partial*"))
    native = tmp_path / "native.jsonl"
    lines = (TOUR / "clean.jsonl").read_text().splitlines()
    native.write_text("\n".join([*lines, '{"id": "e99", "turn": 9, "kind": "user", "text": "x \\udc00 y"}']) + "\n")
    report = tmp_path / "r.json"
    result = runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(native), "--judge", "none",
                                 "--json", str(report)])
    assert result.exit_code in (0, 1) and report.is_file(), result.output


def test_deep_request_bodies_get_422():
    from fastapi.testclient import TestClient

    from judge.service import create_app

    client = TestClient(create_app(token=""), base_url="http://127.0.0.1")
    body = '{"scenario": {"id": "tour"}, "traces": [' + "[" * 100_000 + "]" * 100_000 + "]}"
    answer = client.post("/v1/grade", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 422 and "nested deeper than 200" in answer.json()["detail"]
    header = {"kind": "run", "run_id": "r", "scenario": "tour"}
    event = {"id": "e1", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "edit_file",
             "args": {"x": json.loads("[" * 300 + "]" * 300)}}
    answer = client.post("/v1/grade", json={"scenario": (TOUR / "scenario.yaml").read_text(),
                                            "traces": [[header, event]], "judge": "none"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == "traces[0]:2: args: nested deeper than 200 levels (the limit of every reader)"


def test_deep_label_lines_are_refused(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"case": "a", "label": "upheld", "annotator": "x", "note": ' + "[" * 5000 + "]" * 5000 + "}\n")
    result = runner.invoke(app, ["calibrate", "--labels", str(labels), "--verdicts", str(labels), "--name", "x",
                                 "--out", str(tmp_path / "rec")])
    _one_line_error(result, "labels.jsonl:1")


# ---------------------------------------------------------------- round two (issue 23): bytes, not values


def test_a_byte_alias_bomb_is_refused_quickly(tmp_path):
    """A 1.6 MB scenario aliasing one 1 MB string 150,000 times (150 GB expanded; it took 4 GB and
    exited 4 before) is refused at the alias that crosses 64 MB, in a few seconds."""
    import time

    big = "x" * 1_000_000
    bomb = tmp_path / "bytes.yaml"
    bomb.write_text("id: bomb\ntitle: t\nledger:\n  - key: k\n    class: fact\n    source_turn: 1\n"
                    f"    value: &b {big}\ndeltas:\n  - {{turn: 2, op: set, key: k, source: user, value: ["
                    + ", ".join(["*b"] * 150_000) + "]}\nrules:\n  - {check: superseded-value, key: k}\n")
    start = time.perf_counter()
    result = runner.invoke(app, ["lint", str(bomb)])
    took = time.perf_counter() - start
    _one_line_error(result, "bytes.yaml:9:", "aliases", "expand to more than 64 MB")
    assert took < 20.0, took
    grade = runner.invoke(app, ["grade", str(bomb), str(TOUR / "clean.jsonl"), "--judge", "none"])
    _one_line_error(grade, "bytes.yaml:9:", "64 MB")


def test_a_bomb_in_a_project_prompt_header_is_refused(tmp_path, monkeypatch):
    from judge.prompts import load_prompt_file

    folder = tmp_path / "prompts" / "bomb"
    folder.mkdir(parents=True)
    prompt = folder / "v1.md"
    prompt.write_text("---\n" + BOMB + "---\nbody\n")
    with pytest.raises(Exception) as info:
        load_prompt_file(prompt)
    assert "aliases" in str(info.value) and "v1.md" in str(info.value)


@pytest.mark.parametrize("text, says", [
    ('[tool.judge]\ndefault = "local"\nstale = \n', "pyproject.toml:3: cannot read TOML"),
    ("[tool.judge]\nx = " + "[" * 50_000 + "]" * 50_000 + "\n", "nested deeper than 200"),
])
def test_configs_are_bounded_and_errors_name_the_line(tmp_path, text, says):
    config = tmp_path / "pyproject.toml"
    config.write_text(text)
    _one_line_error(runner.invoke(app, ["config", "show", "--config", str(config)]), says)


def test_over_long_integers_are_exit_2_everywhere(tmp_path):
    digits = "9" * 5000
    scenario = tmp_path / "long.yaml"
    scenario.write_text((TOUR / "scenario.yaml").read_text() + f"\nextra_number: {digits}\n")
    _one_line_error(runner.invoke(app, ["lint", str(scenario)]), "long.yaml:", "4300 digits")
    as_json = tmp_path / "long.json"
    as_json.write_text('{"id": "x", "title": "t", "ledger": [], "n": ' + digits + "}")
    _one_line_error(runner.invoke(app, ["lint", str(as_json)]), "long.json", "4300 digits")
    trace = tmp_path / "long.jsonl"
    lines = (TOUR / "clean.jsonl").read_text().splitlines()
    trace.write_text("\n".join([*lines, '{"id": "e99", "turn": 9, "kind": "state-write", "key": "k", "value": '
                                + digits + "}"]) + "\n")
    result = runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(trace), "--judge", "none"])
    _one_line_error(result, f"long.jsonl:{len(lines) + 1}", "4300 digits")
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"case": "a", "label": "upheld", "annotator": "x", "n": ' + digits + "}\n")
    result = runner.invoke(app, ["calibrate", "--labels", str(labels), "--verdicts", str(labels), "--name", "x",
                                 "--out", str(tmp_path / "rec")])
    _one_line_error(result, "labels.jsonl:1")
