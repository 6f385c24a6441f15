"""Bootstrap, judge comparison, self-consistency and the corrected violation rate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

from calibration.bootstrap import percentile_interval, resample_counts
from calibration.compare import agreement, compare_judges
from calibration.errors import CalibrationInputError
from calibration.inputs import LabelRecord, VerdictRecord
from calibration.metrics import kappa_from_confusion
from calibration.prevalence import estimate_prevalence, rogan_gladen


def test_multinomial_tables_have_the_distribution_of_case_resampling():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, 200)
    pred = np.where(rng.random(200) < 0.7, truth, rng.integers(0, 3, 200))
    counts = np.zeros((3, 3), dtype=int)
    np.add.at(counts, (truth, pred), 1)
    tables = resample_counts(counts, n_boot=4000, rng=np.random.default_rng(1))
    via_tables = kappa_from_confusion(tables)
    index = np.random.default_rng(2).integers(0, 200, size=(500, 200))  # explicit case resampling
    via_cases = np.array([cohen_kappa_score(truth[i], pred[i]) for i in index[:500]])
    assert tables.sum(axis=(1, 2)).tolist() == [200] * 4000
    assert np.mean(via_tables) == pytest.approx(np.mean(via_cases), abs=0.01)
    assert np.std(via_tables) == pytest.approx(np.std(via_cases), rel=0.15)


def test_percentile_interval_skips_undefined_resamples():
    interval = percentile_interval(np.array([np.nan, *np.arange(101.0)]))
    assert (interval.lower, interval.upper) == (pytest.approx(2.5), pytest.approx(97.5))
    assert percentile_interval(np.array([np.nan])).lower is None


def labelled(truth):
    return [LabelRecord(case=f"c{i}", label=t, annotator="a") for i, t in enumerate(truth)]


def judged(said, judge="j", confidence=None, prefix="c"):
    return [VerdictRecord(case=f"{prefix}{i}", verdict=s, judge=judge, confidence=confidence)
            for i, s in enumerate(said)]


def test_compare_counts_discordant_pairs_and_runs_the_exact_mcnemar_test():
    rng = np.random.default_rng(4)
    truth = rng.choice(["violated", "upheld"], 300).tolist()
    flip = lambda t: "upheld" if t == "violated" else "violated"  # noqa: E731
    a = [t if rng.random() < 0.75 else flip(t) for t in truth]
    b = [t if rng.random() < 0.9 else flip(t) for t in truth]
    result = compare_judges(labelled(truth), judged(a, "A"), judged(b, "B"), n_boot=500)
    right_a, right_b = np.array(a) == truth, np.array(b) == truth
    only_a, only_b = int(np.sum(right_a & ~right_b)), int(np.sum(~right_a & right_b))
    assert (result.mcnemar.only_a_right, result.mcnemar.only_b_right) == (only_a, only_b)
    assert result.mcnemar.p_value == pytest.approx(binomtest(only_a, only_a + only_b, 0.5).pvalue)
    assert len(result.flipped) == only_a + only_b
    assert sum(case.change == "fixed" for case in result.flipped) == only_b
    expected = cohen_kappa_score(truth, b) - cohen_kappa_score(truth, a)
    assert result.kappa_difference == pytest.approx(expected)
    assert result.kappa_difference_ci.lower < expected < result.kappa_difference_ci.upper
    assert result.kappa_difference_ci.lower > 0  # B is clearly better with 300 cases


def test_compare_of_a_judge_with_itself_has_no_flips_and_p_one():
    truth = ["violated", "upheld"] * 20
    said = ["violated"] * 40
    result = compare_judges(labelled(truth), judged(said), judged(said), n_boot=100)
    assert result.flipped == [] and result.mcnemar.p_value == 1.0
    assert result.kappa_difference == 0.0
    assert result.kappa_difference_ci.lower == result.kappa_difference_ci.upper == 0.0


def test_agreement_on_shared_cases_equals_sklearn():
    rng = np.random.default_rng(8)
    a = rng.choice(["1", "2"], 50).tolist()
    b = [x if rng.random() < 0.8 else rng.choice(["1", "2"]) for x in a]
    result = agreement(judged(a, "run1"), judged(b, "run2")[:45] + judged(["1"], "run2", prefix="z"))
    assert (result.n, result.n_only_a, result.n_only_b) == (45, 5, 1)
    assert result.percent_agreement == pytest.approx(np.mean(np.array(a[:45]) == np.array(b[:45])))
    assert result.cohen_kappa == pytest.approx(cohen_kappa_score(a[:45], b[:45]))
    with pytest.raises(CalibrationInputError, match="share no case"):
        agreement(judged(a), judged(a, prefix="other"))


def simulated_study(seed, *, prevalence=0.3, tpr=0.85, tnr=0.9, n_labelled=300, n_unlabelled=1500):
    rng = np.random.default_rng(seed)

    def judge(truth):
        right = rng.random(len(truth)) < np.where(truth, tpr, tnr)
        return np.where(right == truth, "violated", "upheld")  # says violated iff right xor negative

    truth = rng.random(n_labelled) < prevalence
    labels = labelled(np.where(truth, "violated", "upheld").tolist())
    verdicts = judged(judge(truth).tolist())
    unlabelled = judged(judge(rng.random(n_unlabelled) < prevalence).tolist(), prefix="u")
    return labels, verdicts, unlabelled


@pytest.mark.slow
def test_rogan_gladen_recovers_the_true_rate_within_its_interval_in_most_seeds():
    covered = 0
    for seed in range(50):
        labels, verdicts, unlabelled = simulated_study(seed)
        estimate = estimate_prevalence(labels, verdicts, unlabelled, seed=seed, n_boot=1000)
        covered += estimate.interval.lower <= 0.3 <= estimate.interval.upper
    assert covered >= 45  # at least 90% of 50 seeds for a nominal 95% interval


def test_rogan_gladen_corrects_a_biased_observed_rate():
    labels, verdicts, unlabelled = simulated_study(0, n_labelled=3000, n_unlabelled=20000)
    estimate = estimate_prevalence(labels, verdicts, unlabelled, n_boot=200)
    assert estimate.observed_rate == pytest.approx(0.3 * 0.85 + 0.7 * 0.1, abs=0.02)
    assert estimate.prevalence == pytest.approx(0.3, abs=0.03)
    assert rogan_gladen(0.0, 0.9, 0.9) == 0.0  # clipped at 0
    assert np.isnan(rogan_gladen(0.5, 0.5, 0.5))


def test_an_uninformative_judge_cannot_be_corrected():
    truth = ["violated", "upheld"] * 30
    said = ["violated"] * 60  # TPR 1, TNR 0
    with pytest.raises(CalibrationInputError, match=r"TPR \+ TNR = 1.000 \+ 0.000 <= 1"):
        estimate_prevalence(labelled(truth), judged(said), judged(said, prefix="u"))


def test_unlabelled_verdicts_of_another_judge_are_an_error():
    labels, verdicts, unlabelled = simulated_study(1, n_labelled=50, n_unlabelled=50)
    other = [v.model_copy(update={"judge": "other"}) for v in unlabelled]
    with pytest.raises(CalibrationInputError, match="another judge"):
        estimate_prevalence(labels, verdicts, other)
