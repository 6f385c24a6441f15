"""docs/security.md keeps its word: every row of its table of detected kinds is redacted as it says
(the planted values it names), every planted value is named on the page, and every line of its
"Not detected" list holds an example that really survives redaction."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from planted import NO_LEAK_VALUE, VALUES

from judge.trace.redact import Redactor, redact_event_dict, redact_header_dict

DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"
PLANTED = {name: (text, secret) for name, text, secret in VALUES}


def _table() -> list[tuple[list[str], list[str]]]:
    """(the kinds, the planted names) of each row of the table of detected kinds."""
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4:
            rows.append((re.findall(r"`([a-z_]+)`", cells[0]), re.findall(r"`([a-z0-9_]+)`", cells[3])))
    return rows


def _not_detected() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("**Not detected**", 1)[1].split("\n\n**", 1)[0]
    return [item.strip() for item in re.split(r"\n- ", "\n" + section.split("\n", 1)[1]) if item.strip()]


ROWS = _table()
NOT_DETECTED = _not_detected()


def test_the_page_has_its_table_and_list():
    assert len(ROWS) >= 14 and len(NOT_DETECTED) >= 10


def test_every_planted_value_is_named_on_the_page():
    named = {name for _, names in ROWS for name in names}
    assert set(PLANTED) | {"no_leak_value"} == named


@pytest.mark.parametrize("kinds, names", ROWS, ids=[",".join(k) for k, _ in ROWS])
def test_each_row_is_redacted_as_it_says(kinds, names):
    if kinds == ["no_leak"]:
        redactor = Redactor(hidden=[NO_LEAK_VALUE])
        out = redactor.text(f"the file of {NO_LEAK_VALUE.upper()} is here")
        assert NO_LEAK_VALUE.upper() not in out and out.count("[REDACTED:no_leak]") == 1
        return
    produced = set()
    for name in names:
        text, secret = PLANTED[name]
        redactor = Redactor()
        out = redactor.text(text)
        assert secret not in out and "[REDACTED:" in out, (name, out)
        produced |= set(redactor.counts)
    assert produced & set(kinds), (kinds, produced)


@pytest.mark.parametrize("line", NOT_DETECTED, ids=[line[:30] for line in NOT_DETECTED])
def test_each_line_of_not_detected_survives_redaction(line):
    example = re.match(r"`([^`]+)`", line)
    if example is None:
        assert line.startswith("the text a `no-leak` rule's `patterns` match"), line
        _patterns_are_not_redacted()
        return
    text = example.group(1)
    if text.startswith("{"):
        record = json.loads(text)
        before = json.loads(text)
        redactor = Redactor()
        if record.get("kind") == "run":
            assert redact_header_dict(record, redactor)["scenario"] == before["scenario"]
        else:
            assert redact_event_dict(record, redactor) == before
        return
    assert Redactor().text(text) == text


def _patterns_are_not_redacted():
    from judge.ledger import hidden_values
    from judge.model import Scenario

    scenario = Scenario.model_validate({
        "id": "s", "title": "t", "ledger": [{"key": "k", "class": "constraint", "value": "v", "source_turn": 1}],
        "rules": [{"check": "no-leak", "key": "k", "values": ["Initech"], "patterns": [r"acct-\d{6}"]}]})
    assert hidden_values(scenario) == ("Initech",)
    out = Redactor(hidden=hidden_values(scenario)).text("acct-123456 of Initech")
    assert out == "acct-123456 of [REDACTED:no_leak]"
