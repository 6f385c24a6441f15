"""The reviewed ledger: scenario files in, the expected ledger at every turn out, and the fixture lint."""

from judge.ledger.fixture import (
    ScenarioFormatError,
    dotted,
    format_problems,
    line_of,
    load_scenario,
    read_structured,
    validate_scenario,
)
from judge.ledger.lint import LintIssue, build_ledger, lint
from judge.ledger.load import (
    DRAFT_MESSAGE,
    hidden_values,
    lint_file,
    lint_path,
    load_ledger,
    pair_issues,
    pair_path,
    policy_from_data,
    policy_ledger,
    refuse_draft,
)
from judge.ledger.policy import bundled_policies, expand_extends, load_policy, resolve_policy
from judge.ledger.reducer import (
                                  USER_INSTRUCTION_CLASSES,
                                  EntrySnapshot,
                                  ExpectedLedger,
                                  KeyHistory,
                                  Version,
                                  session_at,
)

__all__ = [
    "DRAFT_MESSAGE", "EntrySnapshot", "ExpectedLedger", "KeyHistory", "LintIssue", "ScenarioFormatError",
    "USER_INSTRUCTION_CLASSES", "Version", "build_ledger", "bundled_policies", "dotted", "expand_extends",
    "format_problems", "hidden_values", "line_of", "lint", "lint_file", "lint_path", "load_ledger", "load_policy",
    "load_scenario", "pair_issues", "pair_path", "policy_from_data", "policy_ledger", "read_structured",
    "refuse_draft", "resolve_policy", "session_at", "validate_scenario"
]
