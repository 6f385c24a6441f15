"""Each redaction miss of issue 12, one by one, and the detectors measured against detect-secrets."""

from __future__ import annotations

import json

import pytest
from planted import FIELD_VALUES, VALUES

from judge.trace.names import is_secret_name
from judge.trace.redact import Redactor, line_needs_redaction, redact_event_dict


@pytest.mark.parametrize("kind, text, secret", VALUES, ids=[v[0] for v in VALUES])
def test_each_kind_is_redacted_in_text_and_the_precheck_sees_it(kind, text, secret):
    redactor = Redactor()
    out = redactor.text(text)
    assert secret not in out and "[REDACTED:" in out, out
    for ensure_ascii in (True, False):
        assert line_needs_redaction(json.dumps({"text": text}, ensure_ascii=ensure_ascii))


@pytest.mark.parametrize("name, value, secret", FIELD_VALUES, ids=[v[0] for v in FIELD_VALUES])
def test_secret_named_fields_lose_their_value_whatever_its_type(name, value, secret):
    redactor = Redactor()
    event = {"id": "e1", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "t",
             "args": {name: value, "body": json.dumps({name: value})}}
    out = json.dumps(redact_event_dict(event, redactor))
    assert secret not in out and redactor.counts["secret_field"] == 2


@pytest.mark.parametrize("name", ["db_password", "DB_PASSWORD", "secret_key", "X-API-Key", "x_api_key", "apiKey",
                                  "AccessToken", "refresh-token", "client_secret", "private_key", "passphrase",
                                  "Authorization", "auth", "Cookie", "aws_secret_access_key", "dbPass", "keyPass"])
def test_secret_names_by_normalised_name(name):
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["token_count", "max_tokens", "input_tokens", "author", "keyboard", "monkey",
                                  "password_min_length", "passes", "key", "tokenizer"])
def test_names_that_only_look_secret(name):
    assert not is_secret_name(name)


def test_what_survives_redaction():
    """Order ids (Luhn fails), dates, versions, hex ids, prose about tokens and passwords."""
    redactor = Redactor()
    for text in ("order 4111 1111 1111 1112", "on 2026-11-29 at 12:30", "build 1.4.2", "pkg@1.2.3",
                 "span a000000000000001 trace 4bf92f3577b34da6a3ce929d0e0e4736", "the token expired",
                 "basic functionality", "use max_tokens=100", "12:30:45.123", "1733040000"):
        assert redactor.text(text) == text, text
    assert not redactor.counts


def test_a_snapshot_ref_and_every_string_field_are_redacted():
    redactor = Redactor()
    event = {"id": "e1", "turn": 1, "kind": "snapshot", "ref": "s3://b/sk-proj-abcdefghijklmnopqrstuvwx",
             "digest": "jane@example.com", "state": {"owner": "+44 20 7946 0958"}}
    out = json.dumps(redact_event_dict(event, redactor))
    assert "sk-proj" not in out and "jane@" not in out and "7946" not in out


def test_ids_are_redacted_stably():
    """A call id holding a secret is redacted the same in the call and its result (they still pair)."""
    from judge.trace import TraceReader

    secret_id = "call-jane@example.com"
    lines = [{"kind": "run", "run_id": "r", "scenario": "s"},
             {"id": "e1", "turn": 1, "kind": "tool-call", "call_id": secret_id, "tool": "t"},
             {"id": "e2", "turn": 1, "kind": "tool-result", "call_id": secret_id, "status": "ok"}]
    events = list(TraceReader([json.dumps(line) for line in lines]))
    assert events[0].call_id == events[1].call_id and "jane" not in events[0].call_id


def test_detect_secrets_finds_nothing_we_miss():
    """detect-secrets' own plugins over the planted texts: whatever they flag, we redact too."""
    detect = pytest.importorskip("detect_secrets.core.plugins.util")
    plugins = [cls() for name, cls in detect.get_mapping_from_secret_type_to_class().items()
               if name not in ("Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)")]
    corpus = [text for _, text, _ in VALUES] + [
        "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx", "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "sk_live_0123456789abcdefghijklmn", "glpat-abcdefghij0123456789", "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789abcdefg", 'password = "hunter2hunter2"',
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "AccountKey=" + "a" * 86 + "==",
    ]
    checked = 0
    for text in corpus:
        out = Redactor().text(text)
        for plugin in plugins:
            for found in plugin.analyze_line(filename="trace.jsonl", line=text, line_number=1):
                if found.secret_value and len(found.secret_value) >= 8:
                    checked += 1
                    assert found.secret_value not in out, (plugin.secret_type, text, out)
    assert checked >= 8
