"""The gates that let grading skip work on a claim (judge.text.acts.may_relate, the lazy clause
reading of judge.text.assertions) must never skip a claim the full reading makes: `may_relate` is
read off a target's verbs and families alone, so `relation` against the same target with any call's
values may be above 0 only where it holds."""

from __future__ import annotations

import json
from pathlib import Path

from judge.text.acts import may_relate, relation, tool_target, with_call
from judge.text.assertions import assertions, assertions_in
from judge.text.claims import target

ROOT = Path(__file__).resolve().parent.parent
CASES = [json.loads(line) for line in (ROOT / "benchmarks" / "claims_paraphrases.jsonl").read_text().splitlines()
         if line.strip()]


def _texts_and_calls():
    tools = sorted({c["tool"] for case in CASES for c in case["calls"]})
    calls = [c for case in CASES for c in case["calls"]]
    return [case["text"] for case in CASES], tools, calls


def test_may_relate_holds_wherever_relation_is_above_zero():
    texts, tools, calls = _texts_and_calls()
    pairs = related = 0
    for text in texts:
        for a in assertions_in(text):
            for tool in tools:
                base = tool_target(tool)
                keyed = target(tool, "repair_" + tool.split("_")[-1])
                for args in [None] + [c["args"] for c in calls if c["tool"] == tool][:3]:
                    for t, gate in ((with_call(base, args) if args else base, base),
                                    (with_call(keyed, args) if args else keyed, keyed)):
                        pairs += 1
                        if relation(a, t) > 0:
                            related += 1
                            assert may_relate(a, gate), (text, a.word, tool, args)
    assert related > 50 and pairs > related  # the cases hold claims of these tools and others


def test_a_clause_with_no_claiming_word_still_lends_its_subject():
    # The first clause holds no claiming word (it is passed over unread) and still lends its subject
    # and values to the claim after it.
    processed = assertions("The refund for A-20931, processed.")
    assert [(a.word, a.head, a.values) for a in processed] == [("processed", ("refund", "a-20931"), ("a-20931",))]
    sent = assertions("Confirmation email: sent.")
    assert [(a.word, a.head) for a in sent] == [("sent", ("confirmation", "email"))]


def test_a_passed_over_clause_lends_nothing():
    # With a claiming word ("failed") the clause is passed over as it is read; without one ("could
    # not go") it is passed over only when the next claim asks for its subject (judge.text.assertions
    # ._shared): either way it lends nothing.
    for sentence in ("The refund failed, and then processed.", "The refund could not go, and then processed."):
        found = assertions(sentence)
        assert [(a.word, a.head) for a in found] == [("processed", ())], sentence
