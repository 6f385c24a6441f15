"""Grading: checks and the judge per checkpoint window, the merge with override, the veto, the first
divergence and its slice, the calibration policy, and the one orchestration every face uses
(GradeSession)."""

from judge.grade.calibration import (
    check_calibration,
    labels_dir,
    output_records_dir,
    records_dir,
    refuse_package_output,
)
from judge.grade.labelled import judge_verdicts_for_labels
from judge.grade.outcome import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_INPUT, EXIT_INTERNAL, EXIT_PASS, combine
from judge.grade.provenance import input_file, provenance, sha256_file, sha256_text
from judge.grade.run import grade_trace
from judge.grade.session import GradeSession, exit_code
from judge.grade.slice import SliceResult, write_slice

__all__ = ["EXIT_FAIL", "EXIT_INCONCLUSIVE", "EXIT_INPUT", "EXIT_INTERNAL", "EXIT_PASS", "GradeSession",
           "SliceResult", "check_calibration", "combine", "exit_code", "grade_trace", "input_file",
           "judge_verdicts_for_labels", "labels_dir", "output_records_dir", "provenance", "records_dir",
           "refuse_package_output", "sha256_file", "sha256_text",
           "write_slice"]
