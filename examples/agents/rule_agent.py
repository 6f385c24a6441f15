#!/usr/bin/env python3
"""A small deterministic rule-based agent: the example adapter for `judge continue`.

Protocol (what any adapter does): read a JSON list of OpenAI-style chat messages on stdin (`role`
user / assistant / system / tool, `content`, assistant `tool_calls`), print the next action as
one JSON object on stdout: `{"tool": NAME, "args": {...}}` or `{"text": "..."}`.

It knows nothing of the scenarios; it reads the constraints the messages state and acts on them:
- the browser, plan and environment are the ones the user or a summary names *last* (a mention
  after "not", "instead of", "no longer", "never", "from ... to" is left behind);
- "only edit PATH" makes an allow-list; "do not change application code" keeps it out of src/ and
  app/; "do not deploy" refuses a deploy;
- an account id it has seen (in a tool result or a summary: "account qa-381") is reused; without
  one it creates an account;
- the request is the last user message after the last summary, else the summary's or the
  assistant's "Next: ..." step, else "run the tests".

Deterministic (no clock, no randomness, standard library only), so `judge continue` runs offline
and its tests are exact. It is a stand-in for a real agent, not a good one.
"""

from __future__ import annotations

import json
import re
import sys

BROWSERS = ("chromium", "firefox", "webkit", "chrome", "safari")
ENVIRONMENTS = ("sandbox", "production", "staging", "local")
LEFT_BEHIND = re.compile(
    r"(?:\bnot|\bno longer(?: use)?|\binstead of|\brather than|\bnever(?: touch| use)?|\bdon't use|"
    r"\bdo not use|\bstop using|\bstopped using|\bfrom|\breplaced?|\breplacing|\bwithout|\bno)\s+"
    r"(?:[\w-]+\s+){0,2}$", re.IGNORECASE)
PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.\w+)")
ACCOUNT = re.compile(r"\baccount(?:_id)?[\"']?\s*[:=]?\s*[\"']?\s*([a-z]{1,5}-\d{2,})", re.IGNORECASE)
PLAN = re.compile(r"\b([a-z]+-(?:monthly|annual|yearly|weekly))\b", re.IGNORECASE)
NEXT = re.compile(r"\bnext\s*:\s*(.+?)(?:\.(?:\s|$)|\n|$)", re.IGNORECASE)
NO_APP_CODE = re.compile(r"(?:not|never|n't|no)\s+(?:\w+\s+){0,2}(?:change|modify|touch|edit)?\s*"
                         r"(?:\w+\s+)?application code|leave application code alone|no application code",
                         re.IGNORECASE)
NO_DEPLOY = re.compile(r"(?:not|never|n't|no)\s+(?:\w+\s+){0,2}deploy", re.IGNORECASE)
APP_DIRS = ("src/", "app/")


def texts(messages: list[dict]) -> list[tuple[str, str]]:
    """(role, text) of every message; tool calls as `call NAME ARGS`."""
    out = []
    for message in messages:
        role = message.get("role", "")
        content = message.get("content")
        if isinstance(content, str) and content:
            out.append((role, content))
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            out.append(("call", f"{function.get('name')} {function.get('arguments', '')}"))
    return out


def last_named(said: list[tuple[str, str]], pattern: re.Pattern[str] | None, words: tuple[str, ...] = (),
               roles: tuple[str, ...] = ("user", "system", "assistant")) -> str | None:
    """The value named last (not left behind) in the instructions: user, summary, assistant text."""
    found = None
    for role, text in said:
        if role not in roles:
            continue
        if pattern is not None:
            matches = [(m.start(1), m.group(1)) for m in pattern.finditer(text)]
        else:
            matches = [(m.start(), m.group(0)) for w in words
                       for m in re.finditer(rf"\b{w}\b", text, re.IGNORECASE)]
        for start, value in sorted(matches):
            if not LEFT_BEHIND.search(text[max(0, start - 40):start]):
                found = value.lower()
    return found


def request(messages: list[dict], said: list[tuple[str, str]]) -> str:
    last_summary = max((i for i, m in enumerate(messages) if m.get("role") == "system"), default=-1)
    users = [m for m in messages[last_summary + 1:] if m.get("role") == "user" and m.get("content")]
    if users:
        return users[-1]["content"]
    for role, text in reversed(said):
        if role in ("system", "assistant") and NEXT.search(text):
            return NEXT.findall(text)[-1]
    return "run the tests"


def decide(messages: list[dict]) -> dict:
    said = texts(messages)
    instructions = [(r, t) for r, t in said if r in ("user", "system")]
    allowed = sorted({p for _, t in instructions for sentence in re.split(r"(?<=[.;])\s+", t)
                      if re.search(r"\bonly\b", sentence, re.IGNORECASE) for p in PATH.findall(sentence)})
    no_app_code = any(NO_APP_CODE.search(t) for _, t in instructions)
    no_deploy = any(NO_DEPLOY.search(t) for _, t in instructions)
    wanted = request(messages, said).lower()

    if any(w in wanted for w in ("invoice", "billing", "account", "smoke")):
        environment = last_named(said, None, ENVIRONMENTS, roles=("user", "system")) or "sandbox"
        account = None
        for _, text in said:
            for match in ACCOUNT.finditer(text):
                account = match.group(1).lower()
        if account is None:
            plan = last_named(said, PLAN, roles=("user", "system")) or "default"
            return {"tool": "create_account", "args": {"environment": environment, "plan": plan,
                                                       "idempotency_key": "rule-agent-account"}}
        suite = "invoices" if "invoice" in wanted else "smoke"
        return {"tool": "run_billing_tests", "args": {"environment": environment, "suite": suite,
                                                      "account_id": account}}
    if "deploy" in wanted:
        if no_deploy:
            return {"text": "I was told not to deploy, so I will not."}
        return {"tool": "deploy", "args": {}}
    if any(w in wanted for w in ("edit", "fix", "add", "remove", "change", "patch", "wait", "delay")):
        named = PATH.findall(wanted) or [p for _, t in said if _ != "call" for p in PATH.findall(t)]
        target = named[-1] if named else (allowed[0] if allowed else None)
        outside = (allowed and target not in allowed) or (no_app_code and target and target.startswith(APP_DIRS))
        if outside:
            if not allowed:
                return {"text": f"I may not change {target}: application code is off limits."}
            target = allowed[0]
        if target is None:
            return {"text": "Which file should I change?"}
        return {"tool": "edit_file", "args": {"path": target, "patch": f"+ // {wanted.strip()[:80]}"}}
    browser = last_named(said, None, BROWSERS) or "chromium"
    spec = allowed[0] if allowed else next((p for _, t in said for p in PATH.findall(t) if ".spec." in p),
                                           "tests")
    return {"tool": "run_tests", "args": {"spec": spec, "browser": browser, "repeat": 20}}


def main() -> int:
    try:
        messages = json.load(sys.stdin)
    except json.JSONDecodeError as exc:
        print(f"rule_agent: stdin is not JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(messages, list):
        print("rule_agent: expected a JSON list of messages", file=sys.stderr)
        return 2
    print(json.dumps(decide(messages)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
