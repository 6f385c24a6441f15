"""Suites: manifests of scenarios run many times, graded in parallel, turned into a release decision."""

from judge.suite.manifest import Manifest, load_manifest
from judge.suite.result import SuiteReport
from judge.suite.run import SuiteRun, exit_code, grade_suite

__all__ = ["Manifest", "SuiteReport", "SuiteRun", "exit_code", "grade_suite", "load_manifest"]
