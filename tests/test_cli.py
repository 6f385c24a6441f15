"""The CLI surface: schema, ledger, lint, grade outputs."""

import json

from typer.testing import CliRunner

from judge.cli import app

runner = CliRunner()


def test_schema_lists_and_prints_every_format():
    listed = runner.invoke(app, ["schema"])
    assert listed.exit_code == 0
    names = listed.output.split()
    assert {"scenario", "event", "run-header", "grade-report", "rule", "judge-verdict"} <= set(names)
    for name in names:
        result = runner.invoke(app, ["schema", name])
        assert result.exit_code == 0, name
        schema = json.loads(result.output)
        assert schema["$schema"].startswith("https://json-schema.org/")
    event = json.loads(runner.invoke(app, ["schema", "event"]).output)
    kinds = json.dumps(event)
    for kind in ("tool-call", "tool-result", "state-write", "summary"):
        assert kind in kinds
    assert runner.invoke(app, ["schema", "nope"]).exit_code == 2


def test_scenario_schema_forbids_unknown_fields():
    schema = json.loads(runner.invoke(app, ["schema", "scenario"]).output)
    assert schema["additionalProperties"] is False
    entry = schema["$defs"]["LedgerEntry"]
    assert "class" in entry["properties"] and entry["additionalProperties"] is False


def test_ledger_command_shows_the_turn_and_its_delta(shared_dir):
    path = str(shared_dir / "contract" / "checkout-firefox.yaml")
    result = runner.invoke(app, ["ledger", path, "--turn", "4", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    turn = data["turns"][0]
    assert turn["turn"] == 4 and turn["delta"][0]["op"] == "set"
    browser = next(e for e in turn["ledger"] if e["key"] == "browser")
    assert browser["value"] == "firefox" and browser["superseded"] == [{"value": "chromium", "replaced_at": 4}]
    table = runner.invoke(app, ["ledger", path])
    assert "after turn 7" in table.output and "completed" in table.output


def test_lint_ok_on_the_contract(shared_dir):
    result = runner.invoke(app, ["lint", str(shared_dir / "contract" / "checkout-firefox.yaml")])
    assert result.exit_code == 0 and "ok" in result.output
