"""Suites: manifests of scenarios run many times, graded in parallel, turned into a release decision.

`judge run` (judge.suite.drive: drive an agent through a scripted scenario) loads on first use."""

from typing import TYPE_CHECKING

from judge.plugins import lazy_exports
from judge.suite.manifest import Manifest, load_manifest
from judge.suite.part import SuitePart, merge_parts, parse_shard
from judge.suite.result import SuiteReport
from judge.suite.result import compare as compare_reports
from judge.suite.run import SuiteRun, exit_code, grade_part, grade_suite, merge_suite, report_of

if TYPE_CHECKING:
    from judge.suite.drive import DriveOptions, drive_pair
    from judge.suite.drive import Limits as DriveLimits
    from judge.suite.drive import drive as drive_scenario

# The suite's file formats, for `judge schema` (judge.model.schemas has the others).
SCHEMAS = {"suite-report": SuiteReport, "suite-part": SuitePart}

_EXPORTS = {"DriveLimits": "judge.suite.drive:Limits", "DriveOptions": "judge.suite.drive",
            "drive_pair": "judge.suite.drive", "drive_scenario": "judge.suite.drive:drive"}
__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["SCHEMAS", "DriveLimits", "DriveOptions", "Manifest", "SuitePart", "SuiteReport", "SuiteRun",
           "compare_reports", "drive_pair", "drive_scenario", "exit_code", "grade_part", "grade_suite",
           "load_manifest", "merge_parts", "merge_suite", "parse_shard", "report_of"]
