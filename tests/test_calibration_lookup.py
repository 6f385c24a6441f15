"""calibration.lookup: a judge's record found, or its staleness said, from the records' heads, without
importing numpy or the record models unless a record matches (issue 41: the LLM judge's overhead)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from calibration.errors import CalibrationInputError
from calibration.lookup import find_record_path, read_head, stale_reasons

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "calibration" / "records" / "local.json"


def shipped() -> dict:
    return json.loads(SHIPPED.read_text())


def test_the_shipped_record_is_found_by_its_head_and_another_fingerprint_finds_none(tmp_path):
    record = shipped()
    shutil.copy(SHIPPED, tmp_path / "local.json")
    assert find_record_path(tmp_path, record["fingerprint"]) == tmp_path / "local.json"
    assert find_record_path(tmp_path, record["fingerprint"], record["labels_sha256"]) == tmp_path / "local.json"
    assert find_record_path(tmp_path, record["fingerprint"], "0" * 64) is None
    assert find_record_path(tmp_path, {**record["fingerprint"], "model": "other"}) is None
    assert find_record_path(tmp_path / "absent", record["fingerprint"]) is None


def test_the_newest_matching_record_wins(tmp_path):
    record = shipped()
    (tmp_path / "a.json").write_text(json.dumps({**record, "name": "a", "created_at": "2026-01-02T00:00:00Z"}))
    (tmp_path / "b.json").write_text(json.dumps({**record, "name": "b", "created_at": "2026-01-01T00:00:00Z"}))
    assert find_record_path(tmp_path, record["fingerprint"]) == tmp_path / "a.json"


@pytest.mark.parametrize("text, field", [('{"name": "x"}', "fingerprint"),
                                         ('{"name": "x", "fingerprint": "f", "labels_sha256": "s", '
                                          '"created_at": "not a time"}', "created_at")])
def test_a_file_whose_head_is_not_a_records_is_an_error_naming_it_and_the_field(tmp_path, text, field):
    (tmp_path / "bad.json").write_text(text)
    with pytest.raises(CalibrationInputError, match="not a calibration record") as caught:
        find_record_path(tmp_path, "f")
    assert caught.value.file.endswith("bad.json") and caught.value.field == field


def test_a_file_that_is_not_json_is_an_error_naming_its_line(tmp_path):
    (tmp_path / "bad.json").write_text('{\n"name": ')
    with pytest.raises(CalibrationInputError, match="not valid JSON") as caught:
        read_head(tmp_path / "bad.json")
    assert caught.value.line == 2


def test_stale_reasons_read_from_the_head_name_what_changed():
    head = read_head(SHIPPED)
    fingerprint = head.fingerprint
    assert isinstance(fingerprint, dict)
    assert stale_reasons(head, fingerprint, head.labels_sha256) == []
    changed = {**fingerprint, "model": "m2"}
    assert stale_reasons(head, changed)[0].startswith("model changed")
    assert stale_reasons(head, fingerprint, "f" * 64)[0].startswith("labels changed")


def run_state(fingerprint: dict, name: str = "gpt") -> list:
    """calibration_state of `fingerprint` in a fresh process against the shipped records: the modules
    it imported of numpy and calibration.record, then its stale reasons."""
    code = ("import json, sys; from pathlib import Path; from judge.grade.calibration import calibration_state; "
            f"state = calibration_state(json.loads({json.dumps(json.dumps(fingerprint))}), "
            f"Path({str(SHIPPED.parent)!r}), {name!r}); "
            "print(json.dumps([sorted(m for m in ('numpy', 'calibration.record') if m in sys.modules), "
            "state.stale_reasons, state.record is not None]))")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


def test_a_judge_without_a_record_never_imports_numpy_and_one_with_a_record_loads_it():
    other = {**shipped()["fingerprint"], "model": "openai/gpt-4o-mini"}
    imported, reasons, found = run_state(other)
    assert imported == [] and not found
    assert reasons == ["no calibration record for judge 'gpt' in " + str(SHIPPED.parent)]
    imported, reasons, found = run_state(other, "local")  # its own name's record, of another fingerprint
    assert imported == [] and not found and reasons[0].startswith("model changed")
    imported, reasons, found = run_state(shipped()["fingerprint"], "local")
    assert found and reasons == [] and "calibration.record" in imported
