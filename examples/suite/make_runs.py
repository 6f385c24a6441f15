"""Write the repeated runs of the example suite (deterministic; rerun to get byte-identical files).

    python examples/suite/make_runs.py

Each scenario gets 10 runs under runs/<scenario>/, built from the example's clean and drifting
traces (../checkout-firefox, ../account-twice) with their own run ids and trace ids:

- checkout-firefox: 7 clean runs; 2 that use the superseded browser at turn 5 (the bundled drift
  run); 1 that edits application code at turn 7 (the clean run with its edit moved to src/).
- account-twice: 7 clean runs; 2 whose compaction summary loses the created account at turn 8 (the
  bundled drift run); 1 whose summary keeps it but that creates a second account at turn 10 anyway
  (the clean run with the drift run's turn 10-12).

So each scenario shows two distinct failure signatures, and checkout-firefox a safety-critical one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, run_id: str, lines: list[dict]) -> None:
    header = dict(lines[0], run_id=run_id, trace_id=hashlib.sha256(run_id.encode()).hexdigest()[:32])
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in [header, *lines[1:]])
    path.write_text(text, encoding="utf-8")


def checkout_variants() -> dict[str, list[dict]]:
    folder = EXAMPLES / "checkout-firefox"
    clean, drift = _read(folder / "clean.jsonl"), _read(folder / "drift.jsonl")
    app_edit = [dict(e) for e in clean]
    for event in app_edit:
        if event.get("kind") == "tool-call" and event.get("tool") == "edit_file":
            event["args"] = dict(event["args"], path="src/checkout/payFrame.ts")
        if event.get("kind") == "tool-result" and event.get("tool") == "edit_file":
            event["result"] = dict(event["result"], path="src/checkout/payFrame.ts")
    return {"clean": clean, "browser": drift, "app-edit": app_edit}


def account_variants() -> dict[str, list[dict]]:
    folder = EXAMPLES / "account-twice"
    clean, drift = _read(folder / "clean.jsonl"), _read(folder / "drift.jsonl")
    late = {e["id"] for e in drift[1:] if e["turn"] >= 10}
    repeat = [e for e in clean if e.get("kind") == "run" or e["id"] not in late] + \
        [e for e in drift[1:] if e["id"] in late]
    repeat = [repeat[0], *sorted(repeat[1:], key=lambda e: int(e["id"][1:]))]
    return {"clean": clean, "summary-loss": drift, "repeat": repeat}


# run number -> variant; the drifting repetitions are spread, as a flaky agent would spread them
PLAN = {
    "checkout-firefox": (checkout_variants, {3: "browser", 6: "app-edit", 9: "browser"}),
    "account-twice": (account_variants, {2: "summary-loss", 5: "repeat", 8: "summary-loss"}),
}


def main() -> None:
    for scenario, (variants, drifting) in PLAN.items():
        traces = variants()
        for n in range(1, 11):
            _write(HERE / "runs" / scenario / f"r-{n:02d}.jsonl", f"{scenario}-r{n:02d}",
                   traces[drifting.get(n, "clean")])


if __name__ == "__main__":
    main()
