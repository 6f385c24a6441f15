"""`judge draft --policy-doc`: policy rules from a written policy, each citing its sentence, as a
scenario whose entries hold from turn 0 with no checkpoints (issue 25, item 5)."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from helpers import TraceBuilder
from typer.testing import CliRunner

from judge.cli import app
from judge.draft import draft_policy
from judge.errors import JudgeInputError
from judge.grade import GradeSession
from judge.ledger import lint, load_scenario

POLICY = """# Shop Assistant Policy

You help customers with orders.

## Orders

- Before placing an order, cancelling an order or changing a shipping address, you must list the
  details and obtain explicit customer confirmation (yes) to proceed.
- Express orders cannot be cancelled.
- Orders cannot be changed after the number of items is final.
- If the order has shipped, it cannot be cancelled either.
- All payment methods must already be on the customer's account.

## Refunds

Do not refund more than $50 without asking a supervisor.
Each gift wrap is 5 dollars.
"""

TOOLS = [
    {"type": "function", "function": {"name": "place_order", "parameters": {"type": "object", "properties": {
        "sku": {"type": "string"}, "payment_id": {"type": "string"},
        "shipping": {"type": "string", "enum": ["standard", "express"]}}}}},
    {"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object", "properties": {
        "order_id": {"type": "string"}, "shipping": {"type": "string", "enum": ["standard", "express"]}}}}},
    {"type": "function", "function": {"name": "update_shipping_address", "parameters": {"type": "object",
        "properties": {"order_id": {"type": "string"}, "address": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "change_order", "parameters": {"type": "object", "properties": {
        "order_id": {"type": "string"}, "items": {"type": "array"}}}}},
    {"type": "function", "function": {"name": "issue_refund", "parameters": {"type": "object", "properties": {
        "order_id": {"type": "string"}, "amount": {"type": "number"}}}}},
    {"type": "function", "function": {"name": "get_order", "parameters": {"type": "object", "properties": {
        "order_id": {"type": "string"}}}}},
]


@pytest.fixture
def drafted(tmp_path):
    doc, tools = tmp_path / "policy.md", tmp_path / "tools.json"
    doc.write_text(POLICY, encoding="utf-8")
    tools.write_text(json.dumps(TOOLS), encoding="utf-8")
    return draft_policy(doc, tools=tools), doc, tools


def _rules(result) -> list[dict]:
    return [r.data for r in result.draft.rules]


def test_a_confirmation_the_policy_asks_for_guards_the_actions_it_names(drafted):
    result, _, _ = drafted
    asks = sorted(r["tool"] for r in _rules(result) if r["check"] == "asks-before")
    assert asks == ["cancel_order", "place_order", "update_shipping_address"]  # not change_order, get_order
    entry = result.draft.entry(next(r["key"] for r in _rules(result) if r["check"] == "asks-before"))
    assert entry.key == "confirm_before_placing" and entry.class_ == "permission"


def test_a_prohibition_is_placed_on_the_value_its_schema_lists_or_left_unruled(drafted):
    result, _, _ = drafted
    assert {"check": "forbidden-call", "key": "no_cancel_express", "tool": "cancel_order",
            "args": {"shipping": "express"}} in _rules(result)
    number = next(e for e in result.draft.entries if "number of items" in str(e.value))
    assert not [r for r in _rules(result) if r["key"] == number.key]  # change_order whole would forbid too much
    assert any("change_order would do it, but neither its name nor a value its schema lists says" in note
               and "number" in note for note in number.review)


def test_a_sentence_under_a_condition_is_an_entry_for_the_judge_without_a_rule(drafted):
    result, _, _ = drafted
    shipped = next(e for e in result.draft.entries if "has shipped" in str(e.value))
    assert shipped.conditional and not [r for r in _rules(result) if r["key"] == shipped.key]
    assert any("condition the drafter cannot check" in note for note in shipped.review)


def test_values_on_record_are_grounded_and_a_bound_is_a_limit(drafted):
    result, _, _ = drafted
    assert {"check": "grounded", "key": "payment_methods_on_record", "tool": "place_order",
            "args": ["payment_id"]} in _rules(result)
    [limit] = [r for r in _rules(result) if r["check"] == "limit"]
    # firm: asking a supervisor is no confirmation the user gives
    assert (limit["tool"], limit["arg"], limit["max"]) == ("issue_refund", "amount", 50) and "confirm" not in limit
    assert any(e.class_ == "fact" and e.value == "5 dollars" for e in result.draft.entries)


def test_the_policy_file_holds_from_turn_0_and_cites_every_sentence(drafted, tmp_path):
    result, doc, _ = drafted
    path = tmp_path / "policy.yaml"
    path.write_text(result.text, encoding="utf-8")
    scenario, lines = load_scenario(path)
    assert scenario.id == "shop-assistant-policy-draft" and scenario.draft is True
    assert scenario.checkpoints == [] and scenario.deltas == []
    assert all(e.source_turn == 0 for e in scenario.ledger)
    assert [i for i in lint(scenario, lines)[1] if i.level == "error"] == []
    doc_lines = doc.read_text(encoding="utf-8").splitlines()
    cited = re.findall(r'# (?:guards [^;]+; (?:[^;]+; )?)?policy\.md:(\d+) \(([^)]*)\) \[offline\]: "(.*)"$',
                       result.text, re.MULTILINE)
    assert len(cited) >= len(scenario.ledger) + len(scenario.rules)
    for line, section, quote in cited:
        block = " ".join(x.strip(" -") for x in doc_lines[int(line) - 1:int(line) + 2])
        assert quote.rstrip("…")[:40] in block and section in ("Shop Assistant Policy", "Orders", "Refunds")
    assert "Drafted by `judge draft --policy-doc`" in result.text


def test_the_drafted_policy_grades_a_run(drafted, tmp_path):
    result, _, _ = drafted
    policy = tmp_path / "p.json"
    policy.write_text(json.dumps({**result.scenario, "id": "shop"}), encoding="utf-8")

    def run(*turns) -> bool:
        t = TraceBuilder("shop")
        for turn, kind, text in turns:
            if kind == "call":
                t.call(turn, "place_order", result={"order_id": "O-1"}, sku="A-1", payment_id="card_1")
            else:
                getattr(t, kind)(turn, text)
        trace = tmp_path / "t.jsonl"
        trace.write_text("".join(json.dumps(line) + "\n" for line in t.lines), encoding="utf-8")
        return GradeSession(None).grade_files(policy, [trace], allow_draft=True).runs[0].passed

    assert not run((1, "user", "I want A-1, pay with card_1."), (2, "call", None))
    assert run((1, "user", "I want A-1, pay with card_1."), (2, "say", "Shall I place the order for A-1 with card_1?"),
               (3, "user", "Yes."), (4, "call", None))


def test_the_command(drafted, tmp_path):
    _, doc, tools = drafted
    out = tmp_path / "out.yaml"
    ok = CliRunner().invoke(app, ["draft", "--policy-doc", str(doc), "--tools", str(tools), "-o", str(out)])
    assert ok.exit_code == 0 and "drafted policy shop-assistant-policy-draft:" in ok.output
    assert load_scenario(out)[0].id == "shop-assistant-policy-draft"
    named = CliRunner().invoke(app, ["draft", "--policy-doc", str(doc), "--id", "shop", "-o", str(tmp_path / "b.yaml")])
    assert named.exit_code == 0 and load_scenario(tmp_path / "b.yaml")[0].id == "shop"
    for args in (["--policy-doc", str(doc), "--judge", "gpt"], []):
        bad = CliRunner().invoke(app, ["draft", *args, "-o", str(tmp_path / "c.yaml")])
        assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1, bad.output
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\x00\x01" * 10)
    bad = CliRunner().invoke(app, ["draft", "--policy-doc", str(binary), "-o", str(tmp_path / "d.yaml")])
    assert bad.exit_code == 2 and "b.bin" in bad.output and len(bad.output.strip().splitlines()) == 1
    with pytest.raises(JudgeInputError, match="no sentences"):
        (tmp_path / "empty.md").write_text("# Title\n\n", encoding="utf-8")
        draft_policy(tmp_path / "empty.md")


def test_tau_bench_airline_policy(shared_dir, tmp_path):
    wiki = shared_dir / "data" / "tau-bench" / "tau_bench" / "envs" / "airline" / "wiki.md"
    tools = tmp_path / "tools.json"
    props = lambda **kw: {"type": "object", "properties": kw}  # noqa: E731
    s, cabin = {"type": "string"}, {"type": "string", "enum": ["basic_economy", "economy", "business"]}
    tools.write_text(json.dumps([{"name": n, "parameters": p} for n, p in [
        ("book_reservation", props(user_id=s, cabin=cabin, payment_methods={"type": "array"})),
        ("update_reservation_flights", props(reservation_id=s, cabin=cabin, payment_id=s)),
        ("update_reservation_baggages", props(reservation_id=s, total_baggages={"type": "number"}, payment_id=s)),
        ("update_reservation_passengers", props(reservation_id=s, passengers={"type": "array"})),
        ("cancel_reservation", props(reservation_id=s)), ("send_certificate", props(user_id=s, amount={"type": "number"})),
        ("get_reservation_details", props(reservation_id=s)), ("transfer_to_human_agents", props(summary=s))]]))
    result = draft_policy(wiki, tools=tools)
    rules = _rules(result)
    assert sorted(r["tool"] for r in rules if r["check"] == "asks-before") == [
        "book_reservation", "update_reservation_baggages", "update_reservation_flights", "update_reservation_passengers"]
    assert {"check": "forbidden-call", "key": "no_modify_basic_economy_flights", "tool": "update_reservation_flights",
            "args": {"cabin": "basic_economy"}} in rules
    assert not [r for r in rules if r.get("tool") in ("cancel_reservation", "transfer_to_human_agents")]
    text = wiki.read_text(encoding="utf-8").splitlines()
    for line, quote in re.findall(r'wiki\.md:(\d+) \([^)]*\) \[offline\]: "(.*)"$', result.text, re.MULTILINE):
        assert quote.rstrip("…")[:30] in text[int(line) - 1]
    assert not {"deltas", "checkpoints"} & set(yaml.safe_load(result.text))  # a policy has neither


def test_every_rule_cites_the_sentence_its_entry_came_from(drafted):
    result, doc, _ = drafted
    lines = doc.read_text(encoding="utf-8").splitlines()
    assert result.draft.rules
    for rule in result.draft.rules:
        [evidence] = rule.evidence
        entry = result.draft.entry(rule.data["key"])
        assert evidence.kind == "policy" and evidence == entry.evidence[0]
        line = int(evidence.event.rsplit(":", 1)[1])
        block = " ".join(x.strip(" -") for x in lines[line - 1:line + 2])
        assert evidence.quote.split()[0] in block and evidence.turn == 0


def test_without_tools_a_policy_has_entries_and_no_rule(tmp_path):
    doc = tmp_path / "policy.md"
    doc.write_text(POLICY, encoding="utf-8")
    result = draft_policy(doc)
    assert result.draft.entries and not result.draft.rules
    assert "none known (give --tools or traces): no rule names a tool" in result.text
    assert yaml.safe_load(result.text)["draft"] is True
