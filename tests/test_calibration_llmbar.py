"""External check: calibration reproduces LLMBar's own numbers for GPT-4 on the Natural set.

LLMBar's statistics.json (princeton-nlp/LLMBar, LLMEvaluator/evaluate.py) reports, for GPT-4/Vanilla:
95/100 right with the outputs in the original order, 96/100 swapped, and 95/100 equal verdicts in both
orders. Its `kappa_False`/`kappa_True` are not Cohen's kappa against gold as usually meant: the script
codes the judge's winner "1" -> 1 and "2" -> 0 but leaves the gold label as 1 or 2, so the table is
3 x 3 and a right "2" verdict never counts as agreement. `kappa_agreement` codes both orders the same
way and so is a true Cohen's kappa between them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from calibration.compare import agreement
from calibration.inputs import read_labels, read_verdicts
from calibration.record import calibrate

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
LLMBAR = DATA / "llmbar"
STATISTICS = LLMBAR / "Dataset/LLMBar/Natural/evaluators/GPT-4/Vanilla/statistics.json"

pytestmark = pytest.mark.skipif(not LLMBAR.is_dir(),
                                reason="../shared/data/llmbar is absent (only beside a CI or dev clone)")


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    out = tmp_path_factory.mktemp("llmbar")
    subprocess.run([sys.executable, str(REPO / "scripts" / "llmbar_to_calibration.py"), str(out),
                    "--data", str(LLMBAR)], check=True, capture_output=True, text=True)
    return (read_labels(out / "labels.jsonl"), read_verdicts(out / "verdicts-original.jsonl"),
            read_verdicts(out / "verdicts-swapped.jsonl"))


def test_conversion_refuses_to_write_into_the_repository():
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "llmbar_to_calibration.py"),
                          str(REPO / "llmbar-extract"), "--data", str(LLMBAR)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "inside the repository" in run.stderr
    assert not (REPO / "llmbar-extract").exists()


@pytest.mark.parametrize(("order", "right"), [("original", 95), ("swapped", 96)])
def test_accuracy_reproduces_llmbar(converted, order, right):
    labels, original, swapped = converted
    verdicts = original if order == "original" else swapped
    record = calibrate(labels, verdicts, name=f"gpt4-{order}", positive="1", n_boot=200)
    assert record.n == 100 and record.ties_excluded == 0 and record.n_unmatched == 0
    assert round(record.accuracy * record.n) == right
    truth = [lab.label for lab in sorted(labels, key=lambda lab: lab.case)]
    said = [v.verdict for v in sorted(verdicts, key=lambda v: v.case)]
    assert record.cohen_kappa == pytest.approx(cohen_kappa_score(truth, said))
    assert record.ece is None  # LLMBar stores hard verdicts only


def test_positional_agreement_reproduces_llmbar(converted):
    _, original, swapped = converted
    result = agreement(original, swapped)
    statistics = json.loads(STATISTICS.read_text())
    assert statistics["equal"].startswith("95 / 100")
    assert result.n == 100 and round(result.percent_agreement * 100) == 95
    assert result.cohen_kappa == pytest.approx(statistics["kappa_agreement"])


def test_llmbar_kappa_vs_gold_uses_mixed_codes(converted):
    labels, original, swapped = converted
    statistics = json.loads(STATISTICS.read_text())
    gold = [int(lab.label) for lab in sorted(labels, key=lambda lab: lab.case)]
    for verdicts, field in ((original, "kappa_False"), (swapped, "kappa_True")):
        coded = [1 if v.verdict == "1" else 0 for v in sorted(verdicts, key=lambda v: v.case)]
        assert cohen_kappa_score(coded, gold) == pytest.approx(statistics[field])
