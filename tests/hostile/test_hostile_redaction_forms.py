"""The redaction misses of issue 39, one by one, with what must stay: a quoted secret after an
unquoted one on the same line, YAML's `''` and escaped quotes, the shapes detect-secrets' plugins
flag (Slack webhooks, Mailchimp, Discord and Telegram bot tokens, ...), secrets said in prose and PIN
fields, and references holding `@` that are no e-mail addresses."""

from __future__ import annotations

import json

import pytest

from judge.trace.redact import Redactor, line_needs_redaction, lines_needing_redaction

R = "[REDACTED:secret_field]"


def _redacted(text: str) -> str:
    out = Redactor().text(text)
    for ensure_ascii in (True, False):  # whatever the detectors find, the reader's precheck sees
        line = json.dumps({"id": "e1", "turn": 1, "kind": "user", "text": text}, ensure_ascii=ensure_ascii)
        assert out == text or (line_needs_redaction(line) and lines_needing_redaction([line])[0]), text
    return out


@pytest.mark.parametrize("text, expected", [
    ('DB_PASSWORD=x1; API_TOKEN="Pl4ntTok2"', f'DB_PASSWORD={R}; API_TOKEN="{R}"'),
    ('DB_PASSWORD=x1, API_TOKEN="Pl4ntTok2"', f'DB_PASSWORD={R}, API_TOKEN="{R}"'),
    ('PGPASSWORD=x1 API_TOKEN="Pl4ntTok2" psql', f'PGPASSWORD={R} API_TOKEN="{R}" psql'),
    ('db_password=x1&api_token="Pl4ntTok2"', f'db_password={R}&api_token="{R}"'),
    ("password = x1 ; secret = 'Pl4ntTok2'", f"password = {R} ; secret = '{R}'"),  # INI
    ('export DB_PASSWORD=x1 API_TOKEN=Pl4ntTok2', f"export DB_PASSWORD={R} API_TOKEN={R}"),  # both unquoted
    ('{db_password: x1, api_token: "Pl4ntTok2"}', f'{{db_password: {R}, api_token: "{R}"}}'),  # JSON-ish
    ('cfg {"password": ["pw-a", "pw-b"], "apiToken": {"inner": "t"}, "user": "bob"}',
     f'cfg {{"password": {R}, "apiToken": {R}, "user": "bob"}}'),  # lists and objects written out
    ("password: correct horse battery staple", f"password: {R}"),  # an unquoted value still goes whole
])
def test_a_quoted_secret_after_an_unquoted_one_on_the_same_line_is_redacted(text, expected):
    assert _redacted(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("password: 'it''s-s3cret' next", f"password: '{R}' next"),  # YAML: `''` is one quote
    ("password: '''' next", f"password: '{R}' next"),
    ("password: '' next: x", "password: '' next: x"),  # an empty value is nothing to redact
    ('password: "it\\"s-s3cret" next', f'password: "{R}" next'),
    ('password: "ends with \\\\" next', f'password: "{R}" next'),  # an escaped backslash, then the close
    ("password: 'it\\'s-s3cret' next", f"password: '{R}' next"),  # Python's repr escapes a quote so
    ('note {\\"password\\": \\"it\\\\\\"s-s3cret\\", \\"user\\": \\"bob\\"}',
     f'note {{\\"password\\": \\"{R}\\", \\"user\\": \\"bob\\"}}'),  # JSON in a string, a quote inside
])
def test_a_quoted_value_is_redacted_to_its_real_closing_quote(text, expected):
    assert _redacted(text) == expected


@pytest.mark.parametrize("text", [
    "registry.example.com/app@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "pkg@1.2.3", "pkg@1.2.3-rc1", "git@github.com:org/repo.git", "git@gitlab.example.com:group/sub/repo",
    "snapshot-2024@prod", "actions/checkout@v4", "image@latest", "node@20", "ref main@head",
])
def test_a_reference_holding_an_at_sign_is_no_email(text):
    assert Redactor().text(text) == text


@pytest.mark.parametrize("text, kept", [
    ("mail jane.doe@example.com", ""), ("root@localhost", ""), ("admin@intranet", ""), ("jane@163.com", ""),
    ("josé@bücher.de", ""), ("to jane.doe@example.com: see you", ": see you"),
    ("push to app@sha256:abc and mail jane@example.org", "app@sha256:abc"),
])
def test_an_email_is_still_redacted(text, kept):
    out = Redactor().text(text)
    assert "[REDACTED:email]" in out and "@example" not in out and kept in out, out


