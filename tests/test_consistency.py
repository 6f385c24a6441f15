"""The fact-consistency model (judge.text): alignment cues, training pairs, shipped weights, verdicts
with a stand-in embedder and with MiniLM, the SummEdits adapter's inputs, and the bit-for-bit rebuild.
All sentences here are made up for the tests."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from judge.text import consistency as cm
from judge.text.align import align
from judge.text.perturb import DISTORTED, KEPT, make_pairs

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"


def bag_of_words(texts: list[str]) -> np.ndarray:
    """A stand-in embedder: hashed word counts, normalised (cosine = word overlap)."""
    out = np.zeros((len(texts), 512))
    for i, text in enumerate(texts):
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            out[i, int(hashlib.sha256(word.encode()).hexdigest(), 16) % 512] += 1
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


# ---------------------------------------------------------------- alignment cues


def test_number_words_and_digits_are_compared_by_value():
    al = align("The ticket costs fifty euros.", "The ticket costs fifty-five euros.")
    assert al.cues["num_lost"] == 1 and al.cues["num_new"] == 1
    assert "number 50 not kept" in al.reasons and "number 55 added" in al.reasons
    same = align("The ticket costs 50 euros.", "The ticket costs fifty euros.")
    assert same.cues["num_lost"] == 0 and same.cues["num_new"] == 0


def test_a_changed_name_is_lost_and_added():
    al = align("Tom wants to watch Casablanca with Lea.", "Tom wants to watch Vertigo with Lea.")
    assert al.cues["name_lost"] == 1 and al.cues["name_new"] == 1 and al.cues["any_hard"] == 1


def test_negation_parity_and_contractions():
    assert align("She shares the file.", "She doesn't share the file.").cues["neg_parity"] == 1
    assert align("She does not share the file.", "She doesn't share the file.").cues["neg_parity"] == 0


def test_antonyms_categories_and_prefixes():
    assert align("The room was too expensive.", "The room was too cheap.").cues["antonym"] == 1
    assert align("A visa is necessary.", "A visa is unnecessary.").cues["antonym"] == 1
    assert align("Kim buys milk today.", "Kim buys cheese today.").cues["category_swap"] == 1
    # "easy" is already in the reference: the swap is still read off the diff
    assert align("Easy for some, difficult for others.", "Easy for some, easy for others.").cues["antonym"] == 1


def test_roles_swapped_without_a_new_name():
    al = align("Ann paid Bob for the tickets.", "Bob paid Ann for the tickets.")
    assert al.cues["name_order"] == 1 and al.cues["name_new"] == 0


def test_content_from_another_fact_is_not_unsupported():
    ref, cand = "Kim booked a room.", "Kim booked a room near the harbour."
    assert align(ref, cand).cues["cand_new_frac"] > 0
    assert align(ref, cand, context="The hotel is near the harbour.").cues["cand_new_frac"] == 0


def test_a_synonym_paraphrase_has_no_hard_cue():
    al = align("The agent offers a quick answer to the client.", "The agent proposes a fast reply to the customer.")
    assert al.cues["any_hard"] == 0 and len(al.replaced) >= 2


# ---------------------------------------------------------------- training pairs

SENTENCES = [("s1", "Maria asked Peter to book two rooms in Paris for Friday."),
             ("s1", "The manager does not want to pay for the expensive upgrade."),
             ("s2", "Some users said the remote was easy to use and cheap."),
             ("s2", "Leo will send the invoice to the client on Monday morning."),
             ("s3", "The team agreed to drop the premium plan and keep the basic one.")]


def test_pairs_are_deterministic_and_depend_on_the_seed():
    first, again, other = make_pairs(SENTENCES, 7), make_pairs(SENTENCES, 7), make_pairs(SENTENCES, 8)
    assert first == again and first != other
    assert {p.label for p in first} <= {"kept", "distorted", "missing"}
    assert all(p.cand != p.ref for p in first if p.label == "distorted")


@pytest.mark.parametrize("kind", sorted(DISTORTED))
def test_every_distortion_changes_a_sentence_it_applies_to(kind):
    import random

    changed = [DISTORTED[kind](s, random.Random(3), {"sentences": [t for _, t in SENTENCES], "names": ["Zoe", "Ivan"]})
               for _, s in SENTENCES]
    applied = [(s, out) for (_, s), out in zip(SENTENCES, changed, strict=False) if out]
    assert applied, f"{kind} applied to no test sentence"
    assert all(out != s for s, out in applied)


def test_meaning_preserving_edits_keep_names_and_numbers():
    import random

    for kind, edit in sorted(KEPT.items()):
        for _, s in SENTENCES:
            out = edit(s, random.Random(1), {})
            if out:
                assert align(s, out).cues["num_lost"] == 0 and align(s, out).cues["name_lost"] == 0, (kind, out)


# ---------------------------------------------------------------- shipped weights and verdicts


def test_shipped_weights_are_small_complete_and_valid():
    text = cm.WEIGHTS_FILE.read_text(encoding="utf-8")
    weights = cm.Weights.model_validate_json(text)
    assert len(text) < 20_000
    assert tuple(weights.features) == cm.FEATURES and tuple(weights.classes) == cm.CLASSES
    assert 0 < weights.threshold < 1 and weights.temperature_beta > 0
    assert {s["corpus"] for s in weights.training["sources"]} >= {"tau-bench", "who-and-when", "llmbar"}
    assert all(len(s["sha256"]) == 64 for s in weights.training["sources"])
    assert weights.metrics["synthetic_held_out"]["accuracy"] > 0.8
    assert weights.embedding["weights_sha256"]


def test_verdicts_with_a_stand_in_embedder():
    model = cm.ConsistencyModel.load(embed=bag_of_words)
    ref = "Maria booked two rooms in Paris for Friday."
    verdicts = model.judge_pairs([ref] * 4, [ref, "Maria booked five rooms in Paris for Friday.",
                                             "Maria booked two rooms in Rome for Friday.",
                                             "The weather forecast promises heavy rain."])
    assert [v.status for v in verdicts] == ["kept", "distorted", "distorted", "missing"]
    assert all(abs(v.p_kept + v.p_distorted + v.p_missing - 1) < 1e-3 for v in verdicts)
    assert verdicts[0].p_kept > verdicts[1].p_kept
    assert "number 5 added" in verdicts[1].reasons


def test_other_features_are_refused(tmp_path):
    data = json.loads(cm.WEIGHTS_FILE.read_text(encoding="utf-8"))
    data["features"] = data["features"][:-1] + ["something_else"]
    path = tmp_path / "w.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="other features"):
        cm.ConsistencyModel.load(path)


def test_sentences_split_but_not_after_titles():
    assert cm.split_sentences("Mr. Lee called. He asked about Dr. Kim's plan!") == [
        "Mr. Lee called.", "He asked about Dr. Kim's plan!"]


def test_audit_with_minilm_tells_kept_distorted_and_missing():
    model = cm.ConsistencyModel.load()
    facts = ["The customer booked two tickets to Lisbon for Friday.",
             "She does not want travel insurance.",
             "The agent promised a refund of 40 dollars by Monday."]
    faithful = ("The customer reserved two tickets to Lisbon for Friday. She doesn't want travel insurance. "
                "The agent promised a 40 dollar refund by Monday.")
    audits = model.audit_many([
        (facts, faithful),
        (facts, faithful.replace("two tickets", "three tickets")),
        (facts, faithful.replace("She doesn't want", "She wants")),
        (facts, faithful.replace("Monday", "Thursday")),
        (facts, "The customer reserved two tickets to Lisbon for Friday. She doesn't want travel insurance."),
    ])
    statuses = [[v.status for v in a] for a in audits]
    assert statuses[0] == ["kept", "kept", "kept"]
    assert statuses[1][0] == "distorted" and statuses[1][1:] == ["kept", "kept"]
    assert statuses[2][1] == "distorted"
    assert statuses[3][2] == "distorted"
    assert statuses[4][2] in ("missing", "distorted") and statuses[4][:2] == ["kept", "kept"]


# ---------------------------------------------------------------- SummEdits adapter and the rebuild


def test_summedits_adapter_shows_the_model_only_the_two_summaries():
    sys.path.insert(0, str(REPO / "benchmarks"))
    import summedits

    seen = []

    class Recorder:
        def audit_many(self, items):
            seen.extend(items)
            return [[cm.PairVerdict(status="kept", p_kept=1, p_distorted=0, p_missing=0)] for _ in items]

    record = {"seed": "Ann pays. Bob waits.", "summary": "Ann paid.", "label": 0, "edit_types": ["x"],
              "split": "test", "id": "secret_og", "doc": "Ann: hi"}
    flags, _ = summedits.predict_model(Recorder(), [record])
    assert seen == [(["Ann pays.", "Bob waits."], "Ann paid.")] and flags == [False]


# How far the rebuilt weights may move on another machine (scripts/consistency_tolerance.py measures
# it): the features are float32 MiniLM cosines, which another BLAS build or CPU kind computes with
# last-bit differences; fed to the L-BFGS fit, relative feature noise of 1e-7 moved the six-digit
# weights by up to 1e-5 and noise of 1e-6 to 1e-5 by up to 2.0e-3, while none of the 1,307 held-out
# predictions and none of the 244 SummEdits flags changed (4 trials each, 2026-12-06). The weights are
# held to 2.5x that; what must not move at all is the predictions.
WEIGHT_TOLERANCE = 5e-3
METRIC_TOLERANCE = 2e-3


def _same_within_tolerance(rebuilt, committed, where: str = "") -> None:
    """Equal structure and values; floats within WEIGHT_TOLERANCE (metrics and the threshold within
    METRIC_TOLERANCE: a pair or two of the held-out split)."""
    if isinstance(committed, dict):
        assert isinstance(rebuilt, dict) and rebuilt.keys() == committed.keys(), where
        for key in committed:
            _same_within_tolerance(rebuilt[key], committed[key], f"{where}.{key}")
    elif isinstance(committed, list):
        assert isinstance(rebuilt, list) and len(rebuilt) == len(committed), where
        for i, (a, b) in enumerate(zip(rebuilt, committed, strict=True)):
            _same_within_tolerance(a, b, f"{where}[{i}]")
    elif isinstance(committed, float) and not isinstance(committed, bool):
        bound = METRIC_TOLERANCE if where.startswith(".metrics") or where == ".threshold" else WEIGHT_TOLERANCE
        assert abs(rebuilt - committed) <= bound, (where, rebuilt, committed)
    else:
        assert rebuilt == committed, (where, rebuilt, committed)


def test_the_tolerance_check_tells_a_moved_weight_from_noise():
    committed = json.loads(cm.WEIGHTS_FILE.read_text())
    near = json.loads(cm.WEIGHTS_FILE.read_text())
    near["coef"][0][1] += 5e-6  # issue 39: a fresh clone's rebuild differed so (0.261085 against 0.26108)
    _same_within_tolerance(near, committed)
    near["coef"][0][1] += 0.01
    with pytest.raises(AssertionError):
        _same_within_tolerance(near, committed)


def _load_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_consistency", REPO / "scripts/train_consistency.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_rebuild_matches_the_committed_weights(tmp_path):
    """Runs scripts/train_consistency.py and compares its output with judge/text/consistency.json:
    byte for byte when the machine computes the same floats, else what matters, so a loaded or
    different machine passes too (issue 23: one digit at byte 107 differed under load; issue 39: a
    weight 5e-6 off on fresh clones): the same structure, every weight within WEIGHT_TOLERANCE, and
    identical decisions on the committed held-out pairs and on the SummEdits evaluation split the
    threshold is tuned on. Slow: a full rebuild embeds ~17k texts (~1.5 min on 2 idle cores,
    several minutes on a busy machine; ~10 s with a warm feature cache)."""
    if not DATA.is_dir():
        pytest.skip("../shared/data is absent (it sits beside the clone in CI and on developer machines)")
    out = tmp_path / "consistency.json"
    # One BLAS thread for the fits: their sums are then added in one order on any machine.
    env = dict(os.environ, PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    subprocess.run([sys.executable, str(REPO / "scripts/train_consistency.py"), "--out", str(out)],
                   check=True, env=env, capture_output=True, timeout=1800)
    if out.read_bytes() == cm.WEIGHTS_FILE.read_bytes():
        return
    rebuilt, committed = json.loads(out.read_text()), json.loads(cm.WEIGHTS_FILE.read_text())
    _same_within_tolerance(rebuilt, committed)
    script = _load_script()
    models = [(cm.ConsistencyModel(cm.Weights.model_validate(w)), w["threshold"]) for w in (rebuilt, committed)]
    held_out = script.held_out_rows(DATA)  # the rebuild's cached features
    predicted = [[int(np.argmax(p)) for p in model.proba(held_out)] for model, _ in models]
    assert len(held_out) > 1000 and predicted[0] == predicted[1]
    tune = script.summedits_rows(DATA, script.lazy_minilm())
    for domain, records in tune.items():
        flags = [[min(p[0] for p in model.proba(rows)) < threshold for rows, _ in records]
                 for model, threshold in models]
        assert flags[0] == flags[1], domain
