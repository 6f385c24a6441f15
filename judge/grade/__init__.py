"""Grading: checks and the judge per checkpoint window, the merge with override, the veto, the first
divergence and its slice, the calibration policy, and the one orchestration every face uses
(GradeSession).

The run log (judge.grade.history), the bias battery and judge alignment load on first use (the
CLI's `runs`, `bias` and `align` reach them here), so a grade does not import them."""

from typing import TYPE_CHECKING

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
from judge.plugins import lazy_exports

if TYPE_CHECKING:
    from judge.grade.align import align_judge, align_local_judge
    from judge.grade.bias import run_battery
    from judge.grade.history import diff_reports, list_runs, load_report, resolve_run, write_run

_EXPORTS = {
    "align_judge": "judge.grade.align", "align_local_judge": "judge.grade.align", "run_battery": "judge.grade.bias",
    "diff_reports": "judge.grade.history", "list_runs": "judge.grade.history", "load_report": "judge.grade.history",
    "resolve_run": "judge.grade.history", "write_run": "judge.grade.history",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "EXIT_FAIL", "EXIT_INCONCLUSIVE", "EXIT_INPUT", "EXIT_INTERNAL", "EXIT_PASS", "GradeSession", "SliceResult",
    "align_judge", "align_local_judge", "check_calibration", "combine", "diff_reports", "exit_code", "grade_trace",
    "input_file", "judge_verdicts_for_labels", "labels_dir", "list_runs", "load_report", "output_records_dir",
    "provenance", "records_dir", "refuse_package_output", "resolve_run", "run_battery", "sha256_file",
    "sha256_text", "write_run", "write_slice"
]
