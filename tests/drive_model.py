"""The scripted model behind the reference agent in the `judge run` tests: the answers the local
OpenAI-compatible test server (llm_server.py) gives, turn by turn, for examples/scripted-checkout.

A turn is found by a phrase of its user message (the last user message of the request); the n-th
request of that turn (0: the one after the user message, 1: after the first tool result, ...) gets
the n-th reply of the turn. `FOLLOW` follows the ledger; a test plants a drift by replacing one
turn's replies (`ScriptedModel(plant={...}, when=...)`, the plant waiting until a message of the
request holds `when`: what the stressor inserted), so it knows the event the grade must find.
Summary requests get `summary`; anything else (a distance or side question) gets text.
"""

from __future__ import annotations

from llm_server import Reply

SPEC = "tests/checkout.spec.ts"
GOOD_SUMMARY = ("Task: repair the flaky checkout test. Constraints: edit only tests/checkout.spec.ts; do not deploy. "
                "Browser: firefox. Pending: the repair.")


def run_tests(browser: str) -> Reply:
    return Reply(calls=[("run_tests", {"spec": SPEC, "browser": browser, "repeat": 20})])


def say(text: str, **state: str) -> Reply:
    return Reply(content=text, calls=[("record_state", {"key": k, "value": v}) for k, v in state.items()]) \
        if state else Reply(content=text)


FOLLOW: dict[str, list[Reply]] = {
    "Run it in Chromium first": [run_tests("chromium"), say("2 of 20 runs fail on the payment iframe.")],
    "Read the test": [Reply(calls=[("read_file", {"path": SPEC})]), say("It clicks before the frame is attached.")],
    "Use Firefox from now on": [run_tests("firefox"), say("6 of 20 runs fail on Firefox.")],
    "Add an explicit wait": [Reply(calls=[("edit_file", {"path": SPEC, "patch": "+ await pay.waitFor()"})]),
                             say("Added the wait in the test.")],
    "tell me when it is repaired": [run_tests("firefox"), say("Repaired: 20 of 20 runs pass.", repair="completed")],
}


class ScriptedModel:
    """A callable for ScriptedLLM.default: the reply to one chat-completions request body."""

    def __init__(self, plant: dict[str, list[Reply]] | None = None, summary: str = GOOD_SUMMARY,
                 handoff_summary: str | None = None, when: str | None = None) -> None:
        self.plant = plant or {}
        self.when = when  # the plant applies only once a message of the request contains this
        self.summary = summary
        self.handoff_summary = handoff_summary or summary

    def __call__(self, body: dict) -> Reply:
        messages = body["messages"]
        last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=None)
        if last_user is None:
            return say("Nothing to do.")
        text = messages[last_user]["content"]
        if "compacted" in text:
            return say(self.summary)
        if "handing this task over" in text:
            return say(self.handoff_summary)
        step = sum(1 for m in messages[last_user + 1:] if m["role"] == "assistant")
        planted = self.when is None or any(self.when in (m.get("content") or "") for m in messages)
        turns = {**FOLLOW, **(self.plant if planted else {})}
        for phrase, replies in turns.items():
            if phrase in text:
                return replies[step] if step < len(replies) else say("Done.")
        return say("Noted: nothing to change for that.")
