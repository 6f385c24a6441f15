"""The semantic layer with the real offline model (all-MiniLM-L6-v2, loaded once per process),
the learnt thresholds, the measured quality on the held-out split, and `judge audit-summary`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from judge import api
from judge.summaries import evaluation as summary_eval
from judge.summaries.audit import SummaryAuditor, audit_summary, audit_summary_events
from judge.summaries.semantic import ENTRY_VECTORS, THRESHOLDS_FILE, Thresholds

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
LABELS = ROOT / "labels" / "summaries"


@pytest.fixture(scope="module")
def model():
    from judge.text.minilm import load_embedding_model

    return load_embedding_model("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def checkout():
    return api.load_ledger(EXAMPLES / "checkout-firefox" / "scenario.yaml")


def _status(audit, key):
    return next(f for f in audit.findings if f.key == key)


FAITHFUL_PARAPHRASE = (
    "Two customer orders, A-20931 and A-20977: verify each against both the order service and the payment "
    "ledger, decide whether a refund is due, and leave drafts for a human to sign off. We never push a refund "
    "through ourselves - sign-off and submission belong to the approver. A-20931's draft (DR-3309, 680 CNY) "
    "exists and is waiting for sign-off. A-20977 was refunded in full earlier (RF-55012), so nothing more is "
    "drafted or sent for it. The order service can serve cached data; when it disagrees with payments, "
    "payments win.")


def test_a_summary_that_keeps_every_entry_in_other_words_passes(model):
    ledger = api.load_ledger(EXAMPLES / "refund-agent" / "scenario.yaml")
    audit = audit_summary(ledger, FAITHFUL_PARAPHRASE, 8, model=model)
    assert audit.passed, [(f.key, f.status, f.detail) for f in audit.findings if f.status != "preserved"]
    assert {f.status for f in audit.findings} == {"preserved"}
    assert audit.layers == ["phrase", "semantic"]


def test_a_dropped_constraint_fails_at_its_key_and_turn(model, checkout):
    text = ("Task: repair the flaky checkout Playwright test. Browser: Firefox (the user corrected it at turn "
            "4). Unclear yet whether the test or the iframe timing is to blame. Do not deploy. Repair not done yet.")
    audit = audit_summary(checkout, text, 6, model=model)
    assert audit.turn == 6 and not audit.passed and audit.vetoed
    assert set(audit.lost) == {"editable_paths", "no_app_code"}
    assert _status(audit, "no_app_code").layers["semantic"].status == "missing"
    assert _status(audit, "no_deploy").status == "preserved"


@pytest.mark.parametrize("sentence, status", [
    ("We no longer use Chromium; every run is on Firefox.", "preserved"),
    ("Browser switched from Chromium to Firefox at the user's request.", "preserved"),
    ("Run it in Chromium, 20 repeats.", "obsolete-as-current"),
    ("Keep running the suite in Chromium and on Firefox.", "obsolete-as-current"),
])
def test_superseded_values_negation_and_cues(model, checkout, sentence, status):
    text = ("Task: repair the flaky checkout Playwright test. Edit only tests/checkout.spec.ts; do not change "
            f"application code; do not deploy. {sentence} Repair not done yet.")
    browser = _status(audit_summary(checkout, text, 6, model=model), "browser")
    assert browser.layers["semantic"].status == status


def test_polarity_assumptions_and_completion_status(model, checkout):
    base = ("Task: repair the flaky checkout Playwright test. Edit only tests/checkout.spec.ts; no application "
            "code. {} Browser: Firefox.")
    lifted = audit_summary(checkout, base.format("Read the repository freely and deploy when the test is green."),
                           6, model=model)
    no_deploy = _status(lifted, "no_deploy")  # MiniLM alone would call it preserved: cosine 0.56
    assert no_deploy.status == "distorted" and "deploy" in no_deploy.detail
    kept = audit_summary(checkout, base.format("Reading the repo is fine, deploying is not."), 6, model=model)
    assert _status(kept, "no_deploy").status == "preserved"
    incident = api.load_ledger(EXAMPLES / "long-distance" / "scenario.yaml")
    text = "Read-only investigation on web-07. {}"
    promoted = audit_summary(incident, text.format("The 01:30 scheduled cache flush ran and emptied the cache: "
                                                   "that is the cause the user asked us to confirm."), 60, model=model)
    assert _status(promoted, "cache_flush").status == "assumption-promoted"
    settled = audit_summary(incident, text.format("Root cause: the 01:30 scheduled cache flush emptied the cache."),
                            60, model=model)
    assert _status(settled, "cache_flush").status == "assumption-promoted"
    kept = audit_summary(incident, text.format("Still unknown whether the 01:30 scheduled cache flush ran."), 60,
                         model=model)
    assert _status(kept, "cache_flush").status == "preserved"
    undone = audit_summary(checkout, "Repair the flaky checkout Playwright test; it still fails and the repair "
                           "is not done. Edit only tests/checkout.spec.ts. Browser: Firefox.", 8, model=model)
    assert _status(undone, "repair").status == "distorted"


def test_resolved_uncertainty_and_revoked_constraint(model):
    local = api.load_ledger(EXAMPLES / "local-container" / "scenario.yaml")
    audit = audit_summary(local, "Local container only; no staging. Suite still undecided (smoke or full).",
                          5, model=model)
    assert _status(audit, "suite").status == "obsolete-as-current"
    migration = api.load_ledger(EXAMPLES / "authorized-migration" / "scenario.yaml")
    stale = audit_summary(migration, "Keep orders_db as it is: no migration and no dropped table there. Work in "
                          "the shadow database.", 5, model=model)
    assert _status(stale, "keep_original_db").status == "obsolete-as-current" and not stale.passed
    lifted = audit_summary(migration, "The user lifted the keep-orders_db-untouched rule: we may migrate "
                           "orders_db in place and drop orders_v1 only, after the backup.", 5, model=model)
    assert _status(lifted, "keep_original_db").status == "not-required"


def test_entry_embeddings_are_computed_once_per_scenario_and_turn(model, checkout):
    auditor = SummaryAuditor(checkout, model=model)
    before = ENTRY_VECTORS.computed
    auditor.audit("Browser: Firefox. Edit only tests/checkout.spec.ts.", 5)
    auditor.audit("Browser: Firefox. Do not deploy.", 5)
    SummaryAuditor(checkout, model=model).audit("Another summary, same turn.", 5)
    assert ENTRY_VECTORS.computed == before + 1
    auditor.audit("A summary at another turn.", 7)
    assert ENTRY_VECTORS.computed == before + 2


def test_grade_hook_on_the_example_traces(model):
    from judge.trace import read_trace

    for name, summary_id, lost in (("account-twice", "e19", {"test_account", "account_creation"}),
                                   ("checkout-firefox", "e12", {"browser", "editable_paths", "no_app_code"})):
        ledger = api.load_ledger(EXAMPLES / name / "scenario.yaml")
        _, clean, _ = read_trace(EXAMPLES / name / "clean.jsonl")
        _, drift, _ = read_trace(EXAMPLES / name / "drift.jsonl")
        [good] = audit_summary_events(ledger, clean, model=model)
        assert good.passed, (name, good.lost)
        [bad] = audit_summary_events(ledger, drift, model=model)
        assert bad.summary_event == summary_id and set(bad.lost) >= lost, bad.lost
        assert bad.turn == drift[[e.id for e in drift].index(summary_id)].turn


# ---------------------------------------------------------------- learnt thresholds, measured quality


@pytest.mark.slow
def test_thresholds_are_the_ones_learnt_from_the_current_labels(model):
    rows = summary_eval.read_labelled(LABELS)
    stored = json.loads(THRESHOLDS_FILE.read_text())
    assert stored["labels_sha256"] == summary_eval.labels_digest(rows), \
        "labels changed: refit with `judge summary-eval --fit`"
    train, test = summary_eval.split(rows)
    assert (len(train), len(test)) == (stored["split"]["train"], stored["split"]["test"])
    assert len(rows) >= 60 and not {r.label.id for r in train} & {r.label.id for r in test}
    kinds = {r.label.kind for r in rows}
    assert {"faithful", "paraphrased", "missing-constraint", "missing-completion", "stale-as-current",
            "stale-marked-obsolete", "assumption-promoted"} <= kinds
    fitted, _ = summary_eval.fit_thresholds(train, model)
    assert fitted.as_dict() == Thresholds.load().as_dict()
    from judge.summaries.facts import weights_sha256

    assert stored["consistency_sha256"] == weights_sha256(), \
        "the fact-consistency weights changed: re-measure with `judge summary-eval --fit` (held_out figures)"


@pytest.mark.slow
def test_semantic_layer_beats_the_phrase_layer_on_held_out_summaries(model):
    rows = summary_eval.read_labelled(LABELS)
    _, test = summary_eval.split(rows)
    verdicts = summary_eval.run_layers(test, model, Thresholds.load())
    semantic = summary_eval.measure(test, verdicts["semantic"])
    phrase = summary_eval.measure(test, verdicts["phrase"])
    assert semantic["lost_entry"]["recall"] >= 0.8 > phrase["lost_entry"]["recall"]
    assert semantic["per_class"]["preserved"]["recall"] >= 0.85
    paraphrased = [r for r in rows if r.label.kind == "paraphrased"]
    ruled = {f"{r.label.id}/{rule.key}" for r in paraphrased for rule in r.ledger.scenario.rules
             if rule.check == "summary-phrases"}
    all_verdicts = summary_eval.run_layers(paraphrased, model, Thresholds.load())
    sem = summary_eval.accuracy_on(paraphrased, all_verdicts["semantic"], ruled)["accuracy"]
    phr = summary_eval.accuracy_on(paraphrased, all_verdicts["phrase"], ruled)["accuracy"]
    assert sem - phr >= 0.3


# ---------------------------------------------------------------- the command


@pytest.fixture(scope="module")
def cli():
    from judge.cli import summary as cli_summary

    app = typer.Typer()
    app.callback()(lambda: None)
    cli_summary.register(app)
    return app


def test_audit_summary_command(cli, model, tmp_path):
    runner = CliRunner()
    scenario = str(EXAMPLES / "checkout-firefox" / "scenario.yaml")
    drift = str(EXAMPLES / "checkout-firefox" / "drift.jsonl")
    out = tmp_path / "audit.json"
    result = runner.invoke(cli, ["audit-summary", scenario, "--trace", drift, "--json", str(out)])
    assert result.exit_code == 1, result.output
    assert "VETO" in result.output and "obsolete-as-current" in result.output
    report = json.loads(out.read_text())
    assert report["passed"] is False and report["audits"][0]["summary_event"] == "e12"
    assert {f["key"] for f in report["audits"][0]["findings"]} >= {"browser", "editable_paths"}

    summary = tmp_path / "summary.txt"
    summary.write_text((EXAMPLES / "checkout-firefox" / "clean.jsonl").read_text().splitlines()[15]
                       .split('"text": "')[1].rsplit('"', 1)[0])
    ok = runner.invoke(cli, ["audit-summary", scenario, "--summary", str(summary), "--after-turn", "6", "-q"])
    assert ok.exit_code == 0 and ok.output == ""
    phrase_only = runner.invoke(cli, ["audit-summary", scenario, "--trace", drift, "--model", "none"])
    assert phrase_only.exit_code == 1 and "semantic" not in phrase_only.output

    for args in (["--summary", str(summary)], ["--trace", drift, "--after-turn", "3"], [],
                 ["--trace", drift, "--event", "e1"], ["--trace", drift, "--json", drift]):
        bad = runner.invoke(cli, ["audit-summary", scenario, *args])
        assert bad.exit_code == 2, args
        assert bad.output.count("\n") == 1 and "Traceback" not in bad.output
    assert json.loads(out.read_text())["passed"] is False  # the input was not overwritten


@pytest.mark.slow
def test_summary_eval_command_fits_and_measures(cli, model, tmp_path):
    rows = [json.loads(line) for line in (LABELS / "summaries.jsonl").read_text().splitlines()
            if line.strip()]
    picked = [r for r in rows if r["scenario"] == "checkout-firefox"]
    for r in picked:
        r["scenario_file"] = str(EXAMPLES / "checkout-firefox" / "scenario.yaml")
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(json.dumps(r) for r in picked) + "\n")
    out, report = tmp_path / "thresholds.json", tmp_path / "report.json"
    result = CliRunner().invoke(cli, ["summary-eval", str(labels), "--fit", "--out", str(out),
                                      "--json", str(report)])
    assert result.exit_code == 0, result.output
    assert "| missing |" in result.output and "semantic P / R" in result.output
    data, fitted = json.loads(report.read_text()), json.loads(out.read_text())
    assert data["rows"] == len(picked) == data["train"] + data["test"]
    assert fitted["labels_sha256"] == data["labels_sha256"] != json.loads(THRESHOLDS_FILE.read_text())["labels_sha256"]
    assert set(data["splits"]["test"]) == {"phrase", "semantic", "merged"}
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps({**picked[0], "expected": {"goal": "preserved"}}) + "\n")
    bad = CliRunner().invoke(cli, ["summary-eval", str(broken)])
    assert bad.exit_code == 2 and "broken.jsonl:1: expected" in bad.output
