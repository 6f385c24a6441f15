"""Credentials known by a shape without a key prefix of their own: each anchored on a literal or a
short shape (found by a C-level scan), then checked around it in bounded steps.

- Slack webhooks (`hooks.slack.com/services/T.../B.../...`, and its `workflows/` and `triggers/`
  paths): the path after the host (the host stays: a reader still sees a Slack webhook was used);
- Mailchimp API keys: 32 lower-case letters or digits, then `-us` and the data centre's number;
- Discord bot tokens: a base64 user id (starting M, N or O, 24-26 characters), a dot, 6 characters, a
  dot and 27 or more;
- Telegram bot tokens: the bot's 8-10 digit id, a colon, 35 characters;
- SoftLayer API URLs (`api.softlayer.com/soap/v3/` and a 64-character key);
- PuTTY private key files (`PuTTY-User-Key-File-N:` to its `Private-MAC:` line, or to the end).

The shapes are detect-secrets' (its plugins discord, mailchimp, slack, softlayer, telegram_token,
private_key): whatever they flag is redacted here too (tests/hostile/test_hostile_redaction.py), and
a little more where a bound would only let a longer token through (a Mailchimp key after a longer
run, a Discord token whose last part is longer). The line precheck (judge.trace.precheck) and the
prescan (judge.trace.prescan) hold the same anchors, as literals or shapes, so a line holding one is
never cleared.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

Span = tuple[int, int, str]

SLACK_HOOK = "hooks.slack.com/"
_SLACK_PATH = re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/]{8,}+)")
_MAILCHIMP = re.compile(r"-us[0-9]{1,2}+")
_LOWER_RUN = re.compile(r"[0-9a-z]{0,64}")  # applied to the reversed text before `-us`
_DISCORD = re.compile(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,}+")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_-]{0,80}")  # applied to the reversed text before a dot
_TELEGRAM = re.compile(r":[A-Za-z0-9_-]{35,}+")
_DIGIT_RUN = re.compile(r"[0-9]{0,20}")  # applied to the reversed text before a colon
_SOFTLAYER = re.compile(r"(?i:api\.softlayer\.com/soap/v3(?:\.1)?/)([A-Za-z0-9]{64})")
_PUTTY = re.compile(r"PuTTY-User-Key-File-[0-9]{1,3}:")
_PUTTY_END = re.compile(r"Private-MAC:[ \t]*[0-9a-fA-F]*+")


def provider_spans(text: str, lowered: str) -> Iterator[Span]:
    """Every credential of the table above in `text` (`lowered`: the same text, lowered)."""
    if SLACK_HOOK in text:
        for m in _SLACK_PATH.finditer(text):
            yield m.start(1), m.end(1), "api_key"
    if "-us" in text:
        yield from _mailchimp(text)
    if "." in text:
        yield from _discord(text)
    if ":" in text:
        yield from _telegram(text)
    if "softlayer.com" in lowered:
        for m in _SOFTLAYER.finditer(text):
            yield m.start(1), m.end(1), "api_key"
    if "PuTTY-User-Key-File-" in text:
        yield from _putty(text)


def _mailchimp(text: str) -> Iterator[Span]:
    for m in _MAILCHIMP.finditer(text):
        at = m.start()
        run = _LOWER_RUN.match(text[max(0, at - 64):at][::-1])
        assert run is not None  # `{0,64}`: it matches everywhere
        if run.end() >= 32:
            yield at - run.end(), m.end(), "api_key"


def _discord(text: str) -> Iterator[Span]:
    for m in _DISCORD.finditer(text):
        dot = m.start()
        run = _TOKEN_RUN.match(text[max(0, dot - 80):dot][::-1])
        assert run is not None  # `{0,80}`: it matches everywhere
        left = run.end()
        if any(n <= left and text[dot - n] in "MNO" for n in (24, 25, 26)):
            yield dot - left, m.end(), "api_key"


def _telegram(text: str) -> Iterator[Span]:
    for m in _TELEGRAM.finditer(text):
        colon = m.start()
        run = _DIGIT_RUN.match(text[max(0, colon - 20):colon][::-1])
        assert run is not None  # `{0,20}`: it matches everywhere
        if run.end() >= 8:
            yield colon - run.end(), m.end(), "api_key"


def _putty(text: str) -> Iterator[Span]:
    pos = 0
    while (m := _PUTTY.search(text, pos)) is not None:
        end = _PUTTY_END.search(text, m.end())
        stop = end.end() if end is not None else len(text)  # no MAC line: the rest is the key
        yield m.start(), stop, "private_key"
        pos = max(stop, m.end())
