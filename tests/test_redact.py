"""Redaction at load time: values never reach the report, counts by kind do."""

import json

import pytest

from judge.grade import grade_trace
from judge.trace.redact import Redactor, luhn_ok
from tests.helpers import TraceBuilder, ledger_of

SECRETS = {
    "email": "mail jane.doe@example.com now",
    "card_number": "card 4111 1111 1111 1111 exp",
    "phone": "call +44 20 7946 0958 today",
    "jwt": "tok eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "api_key": "key sk-proj-abcdefghijklmnopqrstuvwx",
    "bearer_token": "Authorization: Bearer abcdef1234567890abcdef",
    "private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
}


def test_each_kind_is_redacted_and_counted():
    for kind, text in SECRETS.items():
        r = Redactor()
        out = r.text(text)
        assert f"[REDACTED:{kind}]" in out, (kind, out)
        assert r.counts[kind] == 1


def test_luhn_invalid_numbers_and_dates_survive():
    r = Redactor()
    for text in ("order 4111 1111 1111 1112", "on 2026-11-29 at 12:30", "build 1.4.2", "passed 17 of 20",
                 "trace 0af7651916cd43dd8448eb211c80319c"):
        assert r.text(text) == text
    assert not r.counts
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")


def test_secret_named_fields_are_redacted():
    r = Redactor()
    assert r.value({"api_key": "abc", "nested": [{"password": "hunter2"}], "user": "bob"}) == {
        "api_key": "[REDACTED:secret_field]", "nested": [{"password": "[REDACTED:secret_field]"}], "user": "bob"}


def test_nothing_redacted_reaches_the_report():
    ledger = ledger_of(ledger=[{"key": "g", "class": "goal", "value": "x", "source_turn": 1}],
                       rules=[])
    t = TraceBuilder()
    t.user(1, SECRETS["email"] + " " + SECRETS["card_number"])
    t.call(1, "send", to="jane.doe@example.com", header="Bearer abcdef1234567890abcdef", token="t0k3n")
    t.write(2, "g", SECRETS["api_key"])
    report = grade_trace(ledger, [json.dumps(line) for line in t.lines])
    dumped = report.model_dump_json()
    assert "jane.doe" not in dumped and "4111" not in dumped and "sk-proj" not in dumped and "t0k3n" not in dumped
    assert report.redactions == {"api_key": 1, "bearer_token": 1, "card_number": 1, "email": 2, "secret_field": 1}


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from judge.trace.redact import line_needs_redaction, lines_needing_redaction, redact_event_dict  # noqa: E402

_PIECES = st.sampled_from([*SECRETS.values(), "\n", "\t", "\r", "\\", '"', " ", "+", "@", "é", "٣", ":", "=", "\u2028",
                           "4111111111111111", "+1 415 555 2671", "13812345678", "x@y.io", "AKIAABCDEFGHIJKLMNOP",
                           "order 12345", "v1.2.3", "2026-11-29", "ok", "user@localhost", "用户@例子.广告",
                           "github_pat_11ABCDEFG0123456789_abcdefghij", "-----BEGIN EC PRIVATE KEY-----",
                           "Basic dXNlcjpwYXNzd29yZA==", "postgres://admin:s3cr3t@10.0.0.5/db", "DB_PASSWORD=",
                           "token", "X-API-Key", "db_password", ": ", "=", "hunter2", "aws",
                           "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                           "4111.1111.1111.1111", "020 7946 0958", "(02) 9876 5432", "03-1234-5678", "2025550143",
                           "0044 20 7946 0958", "DE89 3704 0044 0532 0130 00", "536-90-4399", "{", "}", "[", "]",
                           "٤١١١١١١١١١١١١١١١", "0", "5", "-", ".", "(", ")", "n", "pass", "key", "api_", "secret",
                           # issue 23: kinds and disguises of round two
                           "xapp-1-A0123456789-1234567890123-abcdef", "eyAiYWxnIjogIkhTMjU2IiB9.eyJzdWIiOiIxIn0.sig",
                           "bWFpbCBqYW5lQGV4YW1wbGUuY29t", "dG9rZW46IGdocF9hYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk", "jane%40example.com", "%40", "%2", "\u200b", "\uff20", "\u00a0",
                           "\u202f", "\u2009", "\u00ad", "\ufeff", "\u2011", "/", "11010519491231002X", "12345678Z",
                           "X1234567L", "2345 6789 0124", "943 476 5919", "123.456.789-09", "NaN", ": 1e999",
                           "AIzaSyB-1234567890abcdefghijklmnopqrs", "4111/1111/1111/1111", "Cookie: a=1; b=2",
                           "password: correct horse", "ＡＫＩＡ", "４１１１",
                           # issue 39: the shapes and forms of round three
                           "https://hooks.slack.com/services/T0A/B0B/abcdefgh", "0f3e5a9c1b7d2e4f6a8c0b1d3e5f7a39-us12",
                           "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
                           "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0", "GR1348941abcdefghijklmnopqrst",
                           "AKCp8abcdefghijk", "AP6xxxxxxxxxx ", "ACabcdefghijklmnopqrstuvwxyz012345",
                           "PuTTY-User-Key-File-2: ", "BEGIN RSA PRIVATE KEY", "---- ", "xoxb-1-a",
                           "api.softlayer.com/soap/v3/", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0", "'it''s'",
                           'DB_PASSWORD=x1; API_TOKEN="t0k"', "the db password is hunter2xyz", "my pin is 4921",
                           " is ", " was ", "pin", "PIN code", "api key", "passcode: ", "@sha256:", "@prod",
                           "git@github.com:org/repo.git", '["a", "b"]', "{", "pin_code"])


def _event(text: str) -> dict:
    """An event holding `text` as a value, as a key, and as JSON inside a string."""
    return {"id": "e1", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "t",
            "args": {"v": text, text: 1, "nested": json.dumps({"k": [text]})}}


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(_PIECES, max_size=8), st.text(max_size=20))
def test_a_line_the_precheck_clears_needs_no_redaction(pieces, noise):
    text = "".join(pieces) + noise
    line = json.dumps({"id": "e1", "turn": 1, "kind": "assistant", "text": text})
    if not line_needs_redaction(line):
        assert Redactor().text(text) == text
    unicode_line = json.dumps({"text": text}, ensure_ascii=False)
    if not line_needs_redaction(unicode_line):
        assert Redactor().text(text) == text
    for ensure_ascii in (True, False):
        event = _event(text)
        if not line_needs_redaction(json.dumps(event, ensure_ascii=ensure_ascii)):
            redactor = Redactor()
            assert redact_event_dict(json.loads(json.dumps(event)), redactor) == event
            assert not redactor.counts


@pytest.mark.slow
@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.lists(_PIECES, max_size=6), st.text(max_size=10), st.booleans()), max_size=12))
def test_the_chunked_precheck_flags_every_line_the_line_precheck_does(rows):
    """lines_needing_redaction (the reader's, CHUNK lines at a time) is a superset of the line test."""
    lines = []
    for pieces, noise, ascii_only in rows:
        text = "".join(pieces) + noise
        lines.append(json.dumps({"id": "e1", "turn": 1, "kind": "assistant", "text": text}, ensure_ascii=ascii_only))
        lines.append(json.dumps(_event(text), ensure_ascii=ascii_only))
        lines.append(text)  # not a JSON object: the reader checks such a line alone
        lines.append(lines[-2] + "\n")  # as the file reader yields it
    flags = lines_needing_redaction(lines)
    for line, flag in zip(lines, flags, strict=False):
        assert flag >= line_needs_redaction(line), line
