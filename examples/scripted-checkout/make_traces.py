"""Record the traces of the two scripted examples with `judge run` and the reference agent (its offline
stand-in model), so they are what `judge run` really writes:

- scripted-checkout: clean.jsonl is the control; drift.jsonl the same agent under `compaction:4` (its
  own summary keeps the task and the browser but not the file boundary, and it then edits
  src/checkout/payFrame.ts);
- scripted-checkout-release: clean.jsonl is the control; drift.jsonl the same agent under
  `tool-contradiction:run_tests` (it deploys at turn 1 on a tool's word, before anyone authorised it).

Each stressed run is graded against the control's scenario: neither stressor changes the truth.
The event timestamps are dropped, so running it again writes the same bytes
(tests/test_examples.py checks it):

    python examples/scripted-checkout/make_traces.py [FOLDER]   # default: the example folders
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AGENT = "examples/agents/agent.py:act"
TRACES = {  # example folder -> {file: variant}
    "scripted-checkout": {"clean.jsonl": None, "drift.jsonl": "compaction:4"},
    "scripted-checkout-release": {"clean.jsonl": None, "drift.jsonl": "tool-contradiction:run_tests"},
}


def without_timestamps(trace: Path) -> str:
    lines = []
    for line in trace.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record.pop("ts", None)
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def make(folder: Path | None = None) -> list[Path]:
    """Write every trace (into `folder`/<example>/ when given); returns the files written."""
    from judge.suite.drive import DriveOptions, drive

    os.chdir(REPO)  # the run headers name the scenario and the agent relative to the repository
    os.environ.pop("OPENAI_BASE_URL", None)
    os.environ.pop("AGENT_STAND_IN", None)
    written = []
    for example, files in TRACES.items():
        scenario = f"examples/{example}/scenario.yaml"
        for name, stress in files.items():
            with tempfile.TemporaryDirectory() as scratch:
                result = drive(scenario, Path(scratch) / "run", DriveOptions(
                    agent=AGENT, judge="none", stresses=[stress] if stress else []))
                text = without_timestamps(Path(result.report.runs[0].trace))
            out = (folder or REPO / "examples") / example / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
            written.append(out)
    return written


if __name__ == "__main__":
    for path in make(Path(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(path)
