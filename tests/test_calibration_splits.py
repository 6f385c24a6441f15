"""Splits that cannot leak (issue 24, item 1): labels may declare `split: dev | test`; the record
certifies on test only, fits its calibrator on dev only, reports both halves, says which figures
are held out and how often the test half was read; `--cv K` folds by scenario (GroupKFold)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import typer
from sklearn.metrics import cohen_kappa_score
from sklearn.model_selection import GroupKFold
from typer.testing import CliRunner

from calibration.api import calibrate_files
from calibration.calibrators import fit_calibrator
from calibration.errors import CalibrationInputError
from calibration.inputs import LabelRecord, VerdictRecord, labels_sha256, read_labels
from calibration.record import CalibrationRecord, calibrate
from calibration.splits import fold_indices
from judge.cli.calibration import register

REPO = Path(__file__).resolve().parents[1]
JUDGE = {"backend": "llm", "model": "m"}


def _set(*, dev_skill: float, test_skill: float, n_scenarios: int = 8, per: int = 40, seed: int = 0):
    """Scenarios s0..s{n-1}, the first half dev, the rest test; the judge is right with `*_skill`."""
    rng = np.random.default_rng(seed)
    labels, verdicts = [], []
    for s in range(n_scenarios):
        split = "dev" if s < n_scenarios // 2 else "test"
        skill = dev_skill if split == "dev" else test_skill
        for i in range(per):
            case = f"s{s}/run/1/k{i}"
            truth = "violated" if i % 3 == 0 else "upheld"
            right = rng.random() < skill
            said = truth if right else ("upheld" if truth == "violated" else "violated")
            labels.append(LabelRecord(case=case, label=truth, annotator="a", split=split))
            verdicts.append(VerdictRecord(case=case, verdict=said, judge=JUDGE,
                                          confidence=float(np.clip(rng.normal(0.9 if right else 0.6, 0.05), 0, 1))))
    return labels, verdicts


def test_certification_is_the_test_splits_alone():
    labels, verdicts = _set(dev_skill=1.0, test_skill=0.6)
    record = calibrate(labels, verdicts, name="j", n_boot=100)
    assert record.held_out.figures == "test" and not record.certified
    test = [(lab.label, v.verdict) for lab, v in zip(labels, verdicts, strict=False) if lab.split == "test"]
    assert record.n == len(test) == 160 and record.n_unmatched == 0  # the dev verdicts are not unmatched
    truth, said = zip(*test, strict=False)
    assert record.accuracy == pytest.approx(np.mean(np.array(truth) == np.array(said)))
    assert record.cohen_kappa == pytest.approx(cohen_kappa_score(truth, said), abs=1e-6)
    assert record.splits["dev"].accuracy == 1.0 and record.splits["dev"].n == 160
    assert record.splits["test"].accuracy == pytest.approx(record.accuracy)
    assert record.splits["dev"].groups == record.splits["test"].groups == 4
    good = calibrate(*_set(dev_skill=0.6, test_skill=1.0), name="j", n_boot=100)
    assert good.certified and good.splits["dev"].accuracy < 0.8  # a bad dev half does not block it


def test_the_calibrator_is_fitted_on_dev_only():
    labels, verdicts = _set(dev_skill=0.8, test_skill=0.9)
    record = calibrate(labels, verdicts, name="j", n_boot=100)
    dev = [(lab.label == v.verdict, v.confidence) for lab, v in sorted(zip(labels, verdicts, strict=False), key=lambda p: p[0].case)
           if lab.split == "dev"]  # in case order, as the record pairs them
    correct, confidence = map(np.array, zip(*dev, strict=False))
    expected = fit_calibrator(correct.astype(float), confidence)
    assert record.calibrator.model_dump() == expected.model_dump()
    assert "calibrator (fitted on dev)" in record.held_out.in_sample
    assert {"accuracy", "tpr", "tnr", "coverage"} <= set(record.held_out.held_out)


def test_without_splits_every_figure_is_in_sample_and_the_hash_is_unchanged():
    labels, verdicts = _set(dev_skill=0.9, test_skill=0.9)
    bare = [lab.model_copy(update={"split": None}) for lab in labels]
    record = calibrate(bare, verdicts, name="j", n_boot=100)
    assert record.held_out.figures == "all" and record.held_out.held_out == []
    assert record.n == 320 and record.splits is None
    assert "accuracy" in record.held_out.in_sample
    assert labels_sha256(bare) != labels_sha256(labels)  # a split is part of what a record was made on
    before = [(lab.case, lab.label, lab.annotator, None, None) for lab in bare]  # the pre-split canonical rows
    import hashlib

    from calibration.inputs import canonical_json
    assert labels_sha256(bare) == hashlib.sha256(canonical_json(sorted(before)).encode()).hexdigest()


def test_a_judge_fitted_on_all_cases_has_only_the_calibrators_band_held_out():
    labels, verdicts = _set(dev_skill=0.9, test_skill=0.9)
    record = calibrate(labels, verdicts, name="j", n_boot=100, judge_fitted_on="all", judge_note="by hand")
    assert record.held_out.held_out == ["coverage", "review_precision"]
    assert "tpr" in record.held_out.in_sample and record.held_out.judge_note == "by hand"


def test_a_case_in_two_splits_or_without_one_is_bad_input_naming_the_line(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text('{"case": "s/1", "label": "upheld", "annotator": "a", "split": "dev"}\n'
                    '{"case": "s/1", "label": "upheld", "annotator": "b", "split": "test"}\n')
    verdicts = [VerdictRecord(case="s/1", verdict="upheld", judge=JUDGE)]
    with pytest.raises(CalibrationInputError) as error:
        calibrate(read_labels(path), verdicts, name="j")
    assert error.value.line == 2 and error.value.field == "split"
    path.write_text('{"case": "s/1", "label": "upheld", "annotator": "a", "split": "train"}\n')
    with pytest.raises(CalibrationInputError) as error:
        read_labels(path)
    assert error.value.field == "split" and error.value.line == 1


def test_cv_folds_by_scenario_as_group_kfold_does():
    labels, verdicts = _set(dev_skill=0.85, test_skill=0.9, n_scenarios=10)
    record = calibrate(labels, verdicts, name="j", n_boot=100, cv=5)
    cv = record.cv
    assert cv.k == 5 and cv.on == "dev" and len(cv.folds) == 5
    dev_cases = sorted(lab.case for lab in labels if lab.split == "dev")
    groups = [c.split("/")[0] for c in dev_cases]
    expected = [sorted(len(t) for t in (test for _, test in GroupKFold(n_splits=5).split(dev_cases, groups=groups)))]
    assert [sorted(f.n for f in cv.folds)] == expected
    assert all(f.groups == 1 for f in cv.folds) and cv.pooled.n == 200
    for test in fold_indices(groups, 5):  # no scenario in two folds
        others = {groups[i] for i in range(len(groups)) if i not in set(test)}
        assert not {groups[i] for i in test} & others
    assert 0 <= cv.pooled.coverage <= 1 and cv.pooled.brier is not None
    with pytest.raises(CalibrationInputError, match="at least 6 scenarios"):
        calibrate(labels, verdicts, name="j", n_boot=100, cv=6)


def test_the_record_counts_its_reads_of_the_test_half(tmp_path):
    labels, verdicts = _set(dev_skill=0.9, test_skill=0.9)
    lpath, vpath = tmp_path / "l.jsonl", tmp_path / "v.jsonl"
    lpath.write_text("".join(label.model_dump_json(exclude_none=True) + "\n" for label in labels))
    vpath.write_text("".join(v.model_dump_json() + "\n" for v in verdicts))
    first = calibrate_files(lpath, vpath, tmp_path / "out", "j", n_boot=100).record
    second = calibrate_files(lpath, vpath, tmp_path / "out", "j", n_boot=100).record
    assert first.held_out.test_reads == 1 and second.held_out.test_reads == 2
    assert second.held_out.test_first_read_at == first.held_out.test_first_read_at
    stored = CalibrationRecord.model_validate_json((tmp_path / "out" / "j.json").read_text())
    assert stored.held_out.test_reads == 2


def test_the_record_schema_names_the_held_out_section():
    schema = CalibrationRecord.model_json_schema()
    assert "held_out" in schema["properties"] and "HeldOut" in schema["$defs"]
    assert schema["$defs"]["HeldOut"]["additionalProperties"] is False


def test_calibrate_prints_dev_and_test_and_certifies_on_test(tmp_path):
    labels, verdicts = _set(dev_skill=1.0, test_skill=0.6)
    lpath, vpath = tmp_path / "l.jsonl", tmp_path / "v.jsonl"
    lpath.write_text("".join(label.model_dump_json(exclude_none=True) + "\n" for label in labels))
    vpath.write_text("".join(v.model_dump_json() + "\n" for v in verdicts))
    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(app, ["calibrate", "--labels", str(lpath), "--verdicts", str(vpath), "--name", "j",
                                      "--out", str(tmp_path / "out"), "--n-boot", "100", "--cv", "2"], terminal_width=200)
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines() if line.strip()}
    assert lines["dev"].split()[1] == "160" and "1.000" in lines["dev"]
    assert lines["test"].split()[1] == "160"
    assert "certified on test only" in result.output and "(test split)" in result.output and "Not certified" in result.output
    assert "2 folds by scenario (dev)" in result.output


def test_the_bundled_reference_labels_split_by_scenario_as_the_seeded_script_draws():
    sys.path.insert(0, str(REPO / "scripts"))
    import split_labels

    assert split_labels.main(["--check"]) == 0
    labels = read_labels(REPO / "labels")
    by_scenario: dict[str, set[str]] = {}
    for label in labels:
        by_scenario.setdefault(label.case.split("/")[0], set()).add(label.split)
    assert all(len(splits) == 1 for splits in by_scenario.values())  # no scenario in both halves
    assert {s for (s,) in by_scenario.values()} == {"dev", "test"}


def test_the_local_judges_record_says_which_figures_are_held_out():
    record = json.loads((REPO / "calibration" / "records" / "local.json").read_text())
    held = record["held_out"]
    assert held["figures"] == "test" and held["test_reads"] >= 1 and held["test_first_read_at"]
    # Its thresholds were fitted on dev (params local@2); its rules were written on all labels, and the
    # note says both: what was fitted, what dev could not fit, what is still hand-written.
    assert held["judge_fitted_on"] == "dev" and "fitted on the dev split only" in held["judge_note"]
    assert "written by hand while reading all 186 cases" in held["judge_note"] and "before the split" \
        in held["judge_note"] and "held out for the fitted thresholds (related) only" in held["judge_note"]
    assert record["fingerprint"]["params"]["id"] == "local" and record["fingerprint"]["params"]["version"] == 2
    assert "tpr" in held["held_out"] and "splits.test" in held["held_out"]
    assert set(record["splits"]) == {"dev", "test"}
    assert record["n"] == record["splits"]["test"]["n"]


def test_fitted_on_states_what_the_judge_was_fitted_on_for_recorded_verdicts(tmp_path):
    labels, verdicts = _set(dev_skill=0.9, test_skill=0.9)
    lpath, vpath = tmp_path / "l.jsonl", tmp_path / "v.jsonl"
    lpath.write_text("".join(label.model_dump_json(exclude_none=True) + "\n" for label in labels))
    vpath.write_text("".join(v.model_dump_json() + "\n" for v in verdicts))
    app = typer.Typer()
    register(app)
    base = ["calibrate", "--labels", str(lpath), "--verdicts", str(vpath), "--name", "j", "--n-boot", "50"]
    unstated = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "a")], terminal_width=300)
    assert unstated.exit_code == 0 and "Held out (if the judge's own parts" in unstated.output
    stated = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "b"), "--fitted-on", "all"], terminal_width=300)
    assert stated.exit_code == 0 and "Held out: coverage, review_precision." in stated.output
    record = json.loads((tmp_path / "b" / "j.json").read_text())
    assert record["held_out"]["judge_fitted_on"] == "all"
    bad = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "c"), "--fitted-on", "some"])
    assert bad.exit_code == 2 and "--fitted-on must be dev, all or none" in bad.output
