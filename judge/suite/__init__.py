"""Suites: manifests of scenarios run many times, graded in parallel, turned into a release decision."""

from judge.suite.manifest import Manifest, load_manifest
from judge.suite.part import SuitePart, merge_parts, parse_shard
from judge.suite.result import SuiteReport
from judge.suite.run import SuiteRun, exit_code, grade_part, grade_suite, merge_suite, report_of

# The suite's file formats, for `judge schema` (judge.model.schemas has the others).
SCHEMAS = {"suite-report": SuiteReport, "suite-part": SuitePart}

__all__ = ["SCHEMAS", "Manifest", "SuitePart", "SuiteReport", "SuiteRun", "exit_code", "grade_part", "grade_suite",
           "load_manifest", "merge_parts", "merge_suite", "parse_shard", "report_of"]
