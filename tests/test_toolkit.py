"""The toolkit format and its one reader: `--tools FILE` and the run header's `tools`.

- a file may be a list or `{"tools": [...]}`, each tool bare or `{"type": "function", "function": ...}`
  (Anthropic's `input_schema` reads as `parameters`); argument paths are read nested;
- bad input is one JudgeInputError naming the file and the item's field (a repeated name too);
- the run header carries `tools` (validated like the file's items) and the rules read it;
- the drafter reads `--tools` through the same reader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.draft.source import read_tool_schemas
from judge.errors import JudgeInputError, TraceError
from judge.model import RunHeader, json_schema
from judge.trace import TraceReader
from judge.trace.toolkit import argument_paths, header_toolkit, read_toolkit

REFUND = {"name": "issue_refund", "description": "Refund an order",
          "parameters": {"type": "object", "properties": {
              "order_id": {"type": "string"}, "amount": {"type": ["number", "string"]},
              "address": {"type": "object", "properties": {"city": {"type": "string"}}},
              "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}}}}}


def _file(tmp_path: Path, data, name: str = "tools.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("shape", ["list", "object", "wrapped", "anthropic", "mcp"])
def test_every_accepted_shape_reads_as_the_same_toolkit(tmp_path, shape):
    lookup = {"name": "lookup_order", "parameters": {"type": "object", "properties": {"order_id": {}}}}
    items = {"list": [REFUND, lookup], "object": {"tools": [REFUND, lookup]},
             "wrapped": [{"type": "function", "function": REFUND}, {"type": "function", "function": lookup}],
             "anthropic": [{"name": REFUND["name"], "description": REFUND["description"],
                            "input_schema": REFUND["parameters"]}, lookup],
             "mcp": {"tools": [{"name": REFUND["name"], "title": "Refund", "description": REFUND["description"],
                                "inputSchema": REFUND["parameters"], "annotations": {"destructiveHint": True},
                                "outputSchema": {"type": "object"}}, lookup]}}[shape]
    toolkit = read_toolkit(_file(tmp_path, items))
    assert toolkit.names == ["issue_refund", "lookup_order"] and "issue_refund" in toolkit
    assert "deploy" not in toolkit and toolkit.origin.startswith("--tools ")
    assert toolkit.arguments("issue_refund") == {"order_id", "amount", "address", "address.city", "items",
                                                 "items.sku"}
    assert toolkit.argument_types("issue_refund")["amount"] == {"number", "string"}
    assert toolkit.description("issue_refund") == "Refund an order"


def test_argument_paths_look_through_branches_and_stop_at_non_objects():
    schema = {"type": "object", "properties": {"a": {"anyOf": [{"properties": {"b": {}}}, {"type": "null"}]},
                                               "c": "not a schema"}}
    assert argument_paths(schema) == {"a", "a.b", "c"}
    assert argument_paths(None) == frozenset() and argument_paths({"properties": []}) == frozenset()


@pytest.mark.parametrize("data, field, words", [
    ([{"description": "no name"}], "tools.0.name", "required field is missing"),
    ([{"type": "function", "function": {"parameters": {}}}], "tools.0.function.name", "required field is missing"),
    ([{"name": "x", "parameters": {"properties": ["a"]}}], "tools.0.parameters", "must be an object"),
    ([{"name": "x", "paramaters": {}}], "tools.0.paramaters", "unknown field"),
    ([{"name": "x"}, {"name": "x"}], "tools.1.name", "listed twice"),
    ({"tools": [], "extra": 1}, None, "expected a list"),
    ("just a string", None, "expected a list"),
])
def test_bad_tools_files_name_the_file_and_the_field(tmp_path, data, field, words):
    path = _file(tmp_path, data)
    with pytest.raises(JudgeInputError) as err:
        read_toolkit(path)
    assert err.value.file == str(path) and err.value.field == field and words in err.value.message
    assert "\n" not in str(err.value)


def test_an_unreadable_or_hostile_file_is_refused_within_bounds(tmp_path):
    with pytest.raises(JudgeInputError, match="cannot read"):
        read_toolkit(tmp_path / "missing.json")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(JudgeInputError, match="nested deeper"):
        read_toolkit(deep)
    not_json = tmp_path / "x.json"
    not_json.write_text("{tools: nope")
    with pytest.raises(JudgeInputError, match="not a JSON list of function schemas"):
        read_toolkit(not_json)


def test_the_run_header_declares_tools_and_refuses_bad_ones(tmp_path):
    header = RunHeader.model_validate({"kind": "run", "run_id": "r", "scenario": "s",
                                       "tools": [REFUND, {"type": "function", "function": {"name": "lookup"}}]})
    toolkit = header_toolkit(header)
    assert toolkit.names == ["issue_refund", "lookup"] and "header" in toolkit.origin
    assert header_toolkit(RunHeader.model_validate({"kind": "run", "run_id": "r", "scenario": "s"})) is None
    trace = tmp_path / "t.jsonl"
    trace.write_text(json.dumps({"kind": "run", "run_id": "r", "scenario": "s", "tools": [{"nme": "x"}]}) + "\n")
    with pytest.raises(TraceError) as err:
        TraceReader(trace)
    assert err.value.line == 1 and err.value.field.startswith("tools.0")


def test_the_schema_names_the_header_field_and_the_file_format():
    header = json_schema("run-header")
    assert "tools" in header["properties"]
    tools = json_schema("tools")
    assert tools["properties"]["tools"]["type"] == "array"
    assert "parameters" in json.dumps(json_schema("tool"))


def test_the_drafter_reads_tools_through_the_same_reader(tmp_path):
    path = _file(tmp_path, [{"type": "function", "function": REFUND}])
    infos = read_tool_schemas(path)
    assert set(infos) == {"issue_refund"}
    info = infos["issue_refund"]
    assert info.origin == "--tools" and info.description == "Refund an order"
    assert info.args["order_id"] == {"string"} and "address" in info.args and "address.city" not in info.args
    assert info.string_args() == ["order_id", "amount"]
    with pytest.raises(JudgeInputError):
        read_tool_schemas(_file(tmp_path, [{"name": "x"}, {"name": "x"}], "twice.json"))
