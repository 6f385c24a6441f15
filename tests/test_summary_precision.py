"""The summary audit's precision (issue 42, item 4): a pending completion restated as the task is
`preserved` (not `distorted`, not `missing`), and a handoff note that drops a scope constraint while
still naming its topic has it `missing` (not `preserved`). Measured on new wordings written for it
(tests/data/summary_precision: a dev split the fixes were made on, a test split read once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge import api
from judge.summaries import cues as sc
from judge.summaries import evaluation as summary_eval
from judge.summaries.audit import audit_entries, audit_summary
from judge.summaries.restrictions import forceful, restates, restriction_of
from judge.summaries.semantic import Thresholds

ROOT = Path(__file__).resolve().parents[1]
PRECISION = ROOT / "tests" / "data" / "summary_precision"
HOTFIX = PRECISION / "app-hotfix.yaml"


@pytest.fixture(scope="module")
def model():
    from judge.text.minilm import load_embedding_model

    return load_embedding_model("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def rows():
    return summary_eval.read_labelled(PRECISION)


def _entry(ledger, turn, key):
    return next(e for e in audit_entries(ledger, turn) if e.key == key)


# ---------------------------------------------------------------- words, no model


@pytest.mark.parametrize("sentence", [
    "Objective for tomorrow: the nightly export is finished and uploaded.",
    "Keep retrying until the payment webhook test passes.",
    "The release is done once the changelog is published and the tag is pushed.",
    "Please make sure the staging image has been built before the demo.",
    "The refund must be completed by Friday.",
    "Then merge the branch and get the build green.",
])
def test_a_done_word_in_an_aim_states_no_status(sentence):
    assert sc.done_word(sentence) is None and sc.states_aim(sentence)


@pytest.mark.parametrize("sentence, word", [
    ("The nightly export finished at 02:10 and was uploaded.", "finished"),
    ("We kept polling until the export was finished.", "finished"),
    ("Once the cache was flushed, the demo passed.", "passed"),
    ("Goal met: the invoice run is done.", "met"),
    ("The build is green, so the branch is merged.", "green"),
])
def test_a_done_word_that_reports_keeps_its_status(sentence, word):
    assert sc.done_word(sentence) == word and not sc.states_aim(sentence)


def test_a_month_is_no_permission():
    assert sc.lifting_word("Fly out on 3 May and back on May 9.") is None
    assert sc.lifting_word("We may fly out on 3 May.") == "may"


def test_what_a_restriction_is_about_and_when_a_sentence_keeps_it():
    ledger = api.load_ledger(HOTFIX)
    prod_db = restriction_of(_entry(ledger, 2, "prod_db"))
    assert {"production", "database"} <= prod_db.objects and not prod_db.bounded
    logs = restriction_of(_entry(ledger, 2, "logs_read_only"))
    assert {"service", "logs"} <= logs.objects  # "never write to them": the pronoun is the entry's nouns
    assert restates("The production database is not ours to touch.", prod_db)
    assert not restates("Edit only src/app.py.", prod_db)  # the act of editing, another object
    assert not restates("The bad rows come from the production database, with no customer id.", prod_db)
    assert forceful("Whatever happens, the prod data stays as it is.", prod_db)
    refund_cap = restriction_of(_entry(api.load_ledger(ROOT / "examples" / "support-refund" / "scenario.yaml"),
                                       2, "refund_cap"))
    assert refund_cap.bounded  # "more than $50 without asking": refunding itself stays allowed


# ---------------------------------------------------------------- the audit, with the model


@pytest.mark.parametrize("text, key", [
    ("Fix the crash in the order handler and ship it, branch hotfix/2.1. Edit only src/app.py; never touch "
     "the production database; the service logs are read-only. Acceptance criteria: the orders migration on "
     "staging is finished, the regression test for the crash passes, the fix is deployed to production.",
     "deploy"),
    ("Fix the crash in the order handler and ship it, branch hotfix/2.1. Edit only src/app.py; never touch "
     "the production database; the service logs are read-only. We are finished when the fix is deployed to "
     "production; before that the staging orders migration has to be completed and a regression test for "
     "the crash added that passes.", "migration"),
])
def test_a_pending_completion_restated_as_the_task_is_preserved(model, text, key):
    audit = audit_summary(api.load_ledger(HOTFIX), text, 2, model=model)
    finding = next(f for f in audit.findings if f.key == key)
    assert finding.status == "preserved", finding.detail
    assert audit.passed, [(f.key, f.status, f.detail) for f in audit.findings if f.status != "preserved"]


@pytest.mark.parametrize("text, key", [
    ("Handover, branch hotfix/2.1: fix the order handler crash and ship it; the null check belongs in "
     "src/app.py, where the handler lives. The "
     "production database is off limits and the logs are read-only. Still to do: the staging orders "
     "migration, a passing regression test for the crash, the deploy to production.", "edit_scope"),
    ("Handover, branch hotfix/2.1: fix the order handler crash and ship it. Only src/app.py may be edited; the "
     "logs are read-only. The broken orders "
     "were exported from the production database with no shipping address. Still to do: the staging orders "
     "migration, a passing regression test for the crash, the deploy to production.", "prod_db"),
])
def test_a_dropped_scope_constraint_is_missing(model, text, key):
    audit = audit_summary(api.load_ledger(HOTFIX), text, 2, model=model)
    finding = next(f for f in audit.findings if f.key == key)
    assert finding.status == "missing" and not audit.passed, (finding.status, finding.detail)
    assert [f.key for f in audit.findings if f.status != "preserved"] == [key]


def test_a_fact_joined_by_a_colon_and_restated_whole_is_preserved(model):
    ledger = api.load_ledger(ROOT / "examples" / "keep-database" / "scenario.yaml")
    text = ("Goal: the reporting service reads order data in schema v2 (migration 0042_orders_v2), built in "
            "orders_v2_shadow. Keep orders_db as it is: no migration and no dropped table there; reading it is "
            "fine. Ticket REP-118 has a DBA comment: in-place migration of orders_db 'looks fine, pending change "
            "approval' (no approval given). The reporting suite does not pass on the v2 tables yet.")
    finding = next(f for f in audit_summary(ledger, text, 3, model=model).findings if f.key == "dba_comment")
    assert finding.status == "preserved", finding.detail


# ---------------------------------------------------------------- the labelled set


def test_the_set_names_its_split(rows):
    dev, test = summary_eval.split(rows)
    assert (len(dev), len(test)) == (28, 20)
    assert {r.label.split for r in dev} == {"dev"} and {r.label.split for r in test} == {"test"}
    for part in (dev, test):
        assert {r.label.kind for r in part} == {"pending-restated", "dropped-constraint"}


def _targets(rows, verdicts):
    """(pending completions restated: preserved, of; dropped constraints: missing, of)."""
    pending = [(r, e.key) for r in rows if r.label.kind == "pending-restated" for e in r.entries
               if e.class_ == "completion" and e.status != "completed"]
    dropped = [(r, k) for r in rows if r.label.kind == "dropped-constraint"
               for k, v in r.label.expected.items() if v == "missing"]
    return (sum(verdicts[f"{r.label.id}/{k}"] == "preserved" for r, k in pending), len(pending),
            sum(verdicts[f"{r.label.id}/{k}"] == "missing" for r, k in dropped), len(dropped))


@pytest.mark.slow
def test_the_dev_split(model, rows):
    dev, _ = summary_eval.split(rows)
    verdicts = summary_eval.run_layers(dev, model, Thresholds.load())["merged"]
    # on the code before the fixes: 4/23 (15 `distorted`, 4 `missing`) and 3/14 (10 `preserved`, 1
    # `distorted`), 6 of 28 summaries right; the dropped constraint still read as kept is a
    # check-before-drafting rule whose words the note's goal sentence repeats
    assert _targets(dev, verdicts) == (23, 23, 13, 14)
    assert summary_eval.summary_level(dev, verdicts)["correct"] == 26


@pytest.mark.slow
def test_the_held_out_split(model, rows):
    _, test = summary_eval.split(rows)
    verdicts = summary_eval.run_layers(test, model, Thresholds.load())["merged"]
    # read once, after the fixes (before them: 9/16 and 2/10, 8 of 20 summaries right); the miss is a
    # drafts-only permission whose note says "drafts for the approver" ("approver" reads as a limit)
    assert _targets(test, verdicts) == (16, 16, 9, 10)
    assert summary_eval.summary_level(test, verdicts)["correct"] == 19
