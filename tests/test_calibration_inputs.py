"""Label and verdict readers, bad input lines, majority references and ties."""

from __future__ import annotations

import json

import pytest

from calibration.errors import CalibrationInputError
from calibration.inputs import LabelRecord, labels_sha256, read_labels, read_verdicts
from calibration.reference import match, reference_labels


def write_jsonl(path, rows):
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return path


def label(case, value, annotator, **extra):
    return {"case": case, "label": value, "annotator": annotator, **extra}


def verdict(case, value, confidence=0.9, judge="j1", **extra):
    return {"case": case, "verdict": value, "confidence": confidence, "judge": judge, **extra}


def test_reads_design_labels_ignoring_other_fields_and_numbers_as_categories(tmp_path):
    path = write_jsonl(tmp_path / "l.jsonl", [
        {"case": "checkout-firefox/r-0007/7/no_app_code", "scenario": "checkout-firefox",
         "trace": "../examples/checkout/r-0007.jsonl", "after_turn": 7, "key": "no_app_code",
         "label": "violated", "evidence_event": "e14", "annotator": "reviewer-a"},
        "",
        label("pair/1", 2, "gold"),
    ])
    first, second = read_labels(path)
    assert (first.key, first.evidence_event, first.label) == ("no_app_code", "e14", "violated")
    assert second.label == "2"
    assert second.where() == {"file": str(path), "line": 3}


@pytest.mark.parametrize(("line", "field", "message"), [
    ("{not json", None, "not valid JSON"),
    ("[1, 2]", None, "expected a JSON object"),
    (json.dumps({"case": "c", "annotator": "a"}), "label", "Field required"),
    (json.dumps({"case": "", "label": "x", "annotator": "a"}), "case", "at least 1"),
])
def test_bad_label_lines_name_file_line_and_field(tmp_path, line, field, message):
    path = write_jsonl(tmp_path / "l.jsonl", [label("ok", "x", "a"), line])
    with pytest.raises(CalibrationInputError, match=message) as caught:
        read_labels(path)
    error = caught.value
    assert (error.file, error.line, error.field) == (str(path), 2, field)
    assert str(error).startswith(f"{path}:2: ")


@pytest.mark.parametrize(("row", "field"), [
    (verdict("c", "upheld", confidence=1.5), "confidence"),
    (verdict("c", "upheld", confidence="high"), "confidence"),
    ({"case": "c", "verdict": "upheld", "confidence": 0.5}, "judge"),
])
def test_bad_verdict_lines_name_the_field(tmp_path, row, field):
    path = write_jsonl(tmp_path / "v.jsonl", [row])
    with pytest.raises(CalibrationInputError) as caught:
        read_verdicts(path)
    assert (caught.value.line, caught.value.field) == (1, field)


def test_nan_confidence_is_rejected(tmp_path):
    path = write_jsonl(tmp_path / "v.jsonl",
                       ['{"case": "c", "verdict": "x", "confidence": NaN, "judge": "j"}'])
    with pytest.raises(CalibrationInputError) as caught:
        read_verdicts(path)
    assert caught.value.field == "confidence"


def test_a_second_verdict_for_a_case_is_an_error_naming_both_lines(tmp_path):
    path = write_jsonl(tmp_path / "v.jsonl", [verdict("a", "x"), verdict("b", "x"), verdict("a", "y")])
    expected = r"second verdict for case 'a' \(first at .*:1\)"
    with pytest.raises(CalibrationInputError, match=expected) as caught:
        read_verdicts(path)
    assert caught.value.line == 3


def test_missing_path_empty_file_and_empty_folder_are_errors(tmp_path):
    with pytest.raises(CalibrationInputError, match="no such file"):
        read_labels(tmp_path / "absent.jsonl")
    with pytest.raises(CalibrationInputError, match="no label records"):
        read_labels(write_jsonl(tmp_path / "empty.jsonl", [""]))
    (tmp_path / "folder").mkdir()
    with pytest.raises(CalibrationInputError, match=r"no \*.jsonl files"):
        read_labels(tmp_path / "folder")


def test_a_folder_reads_its_own_jsonl_files_in_order_not_its_subfolders(tmp_path):
    # labels/summaries/ holds another kind of label: a folder means its own files only.
    (tmp_path / "sub").mkdir()
    write_jsonl(tmp_path / "b.jsonl", [label("c2", "x", "a")])
    write_jsonl(tmp_path / "sub" / "a.jsonl", [label("c3", "x", "a")])
    write_jsonl(tmp_path / "a.jsonl", [label("c1", "x", "a")])
    assert [r.case for r in read_labels(tmp_path)] == ["c1", "c2"]


def records(*rows):
    return [LabelRecord(**row) for row in rows]


def test_reference_is_the_majority_and_ties_are_excluded_and_counted():
    labels = records(
        label("majority", "violated", "a", evidence_event="e1", key="k"),
        label("majority", "violated", "b", evidence_event="e2", key="k"),
        label("majority", "upheld", "c", evidence_event="e9", key="k"),
        label("tie", "violated", "a"), label("tie", "upheld", "b"),
        label("single", "upheld", "a"),
    )
    references = reference_labels(labels)
    assert references["majority"].label == "violated"
    assert references["majority"].votes == {"upheld": 1, "violated": 2}
    assert references["majority"].evidence_events == {"e1", "e2"}
    assert references["tie"].label is None
    assert references["single"].label == "upheld"

    from calibration.inputs import VerdictRecord
    verdicts = [VerdictRecord(**verdict(case, "upheld")) for case in ("majority", "tie", "extra")]
    matched = match(references, verdicts)
    assert matched.cases == ["majority"]
    assert matched.ties_excluded == 1
    assert matched.n_unmatched == 2  # "single" has no verdict; "extra" has no label


def test_an_annotators_later_label_replaces_the_earlier_one():
    labels = records(label("c", "violated", "a"), label("c", "upheld", "b"), label("c", "upheld", "a"))
    assert reference_labels(labels)["c"].label == "upheld"
    assert reference_labels(labels)["c"].votes == {"upheld": 2}


def test_labels_sha256_ignores_order_and_extra_fields_but_not_labels():
    labels = records(label("c1", "x", "a"), label("c2", "y", "b"))
    same = [LabelRecord(**label("c2", "y", "b", note="a note")), LabelRecord(**label("c1", "x", "a"))]
    changed = records(label("c1", "x", "a"), label("c2", "x", "b"))
    assert labels_sha256(labels) == labels_sha256(same)
    assert labels_sha256(labels) != labels_sha256(changed)


def test_the_calibration_package_never_imports_judge():
    import subprocess
    import sys
    code = ("import sys, calibration.api, calibration.store; "
            "assert not [m for m in sys.modules if m == 'judge' or m.startswith('judge.')]")
    subprocess.run([sys.executable, "-c", code], check=True)
