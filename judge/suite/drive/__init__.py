"""Driving an agent (`judge run`): a scripted scenario's turns said to the agent, its tool calls answered
from fixtures (in order, errors kept), each run recorded as a trace and graded as `judge grade` does;
stressors generated from the control; paired scenarios run as a pair; record and replay.

The modules, one idea each: script turns -> messages and calls (driver), the fake tools (fixtures),
the agents (agents, endpoint) and what they answer (actions), the stressors (stress, stressors,
shifts, texts), record and replay (record), the tools given (toolkit), the report (report,
suite_report), the pair (pair), the whole run (session) and its files (files).

(A sub-package named `drive`, not `run`: judge/suite/run.py is the suite runner.)
"""

from judge.suite.drive.actions import AgentFailure, DriveAction, Reply, parse_reply
from judge.suite.drive.driver import Limits
from judge.suite.drive.pair import drive_pair
from judge.suite.drive.report import DriveReport, KeyBreak, PairVerdict, StressOutcome
from judge.suite.drive.session import DriveOptions, DriveResult, drive
from judge.suite.drive.stress import ALL, CONTROL, default_stressors, parse_stress
from judge.suite.drive.stressors import STRESSORS

# The formats judge run writes, for `judge schema`.
SCHEMAS = {"run-report": DriveReport}

__all__ = ["ALL", "CONTROL", "SCHEMAS", "STRESSORS", "AgentFailure", "DriveAction", "DriveOptions", "DriveReport",
           "DriveResult", "KeyBreak", "Limits", "PairVerdict", "Reply", "StressOutcome", "default_stressors", "drive",
           "drive_pair", "parse_stress", "parse_reply"]
