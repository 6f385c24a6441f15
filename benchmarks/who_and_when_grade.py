"""Who&When: does our first divergence land on the human-labelled mistake step and agent?

    .venv/bin/python benchmarks/who_and_when_grade.py [--data ../shared/data] [--judge none local]
                                                      [--limit N] [--json OUT]

The 184 failed multi-agent logs are imported at run time (`judge import who-and-when`'s library
call, code runs as tool calls) into a temporary folder, each gets a generic scenario, and each is
graded; the first divergence's turn is the predicted mistake step (the importer makes turn = step),
and the agent speaking at that step the predicted mistake agent. No divergence = no prediction,
counted as a miss (coverage says how often we predicted at all).

**The generic ledger** (all a reviewer can state without reading each log): `goal` = the question
(goal, turn 0); `answer` (completion): "a final answer to the question, supported by what the team
found and by code that ran", completed by the last step and expected at the final checkpoint;
checkpoints every 2 steps asking for `goal`. No deterministic rule can be stated honestly for these
tasks (no tools with arguments to scope, nothing forbidden, no values the user changed), so with
`--judge none` nothing can diverge; with the `local` judge a violation needs a completion claim after
a failed or timed-out code run, or a value it can match, which is rare. This is a weak ledger, by
design of the question we ask: what does the grader find when the reviewer knows only the goal?

**Metrics** (as the Who&When paper, arXiv 2505.00212, defines them): *agent-level accuracy* = share of logs
whose predicted mistake agent equals `mistake_agent`; *step-level accuracy* = share whose predicted
step equals `mistake_step` (0-based). We add step accuracy within 1 and within 3 steps. Baselines:
the first agent step, the last step, and a uniformly random step (mean over 1000 seeded draws), each
predicting the agent speaking at its step; and a uniformly random agent among the log's speakers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judge.api import grade_paths  # noqa: E402
from judge.trace import TraceReader  # noqa: E402
from judge.trace.who_and_when import agent_of, import_who_and_when  # noqa: E402

EVERY = 2
DRAWS = 1000


def scenario_for(header: Any, last_step: int) -> dict:
    question = header.metadata["question"]
    return {
        "id": header.scenario,
        "title": f"Who&When {header.run_id} (generic ledger)",
        "ledger": [
            {"key": "goal", "class": "goal", "value": question, "source_turn": 0},
            {"key": "answer", "class": "completion", "source_turn": 0, "sensitivity": "costly",
             "value": "A final answer to the question, supported by what the team found and by code that ran: "
                      + question},
        ],
        "deltas": [{"turn": last_step, "op": "complete", "key": "answer", "source": "agent"}],
        "checkpoints": [{"after_turn": t, "must_retain": ["goal"]} for t in range(EVERY - 1, last_step, EVERY)]
                       + [{"after_turn": last_step, "must_retain": ["goal"], "expect_completed": ["answer"]}],
    }


def speakers(source: Path) -> list[str]:
    """The agent speaking at each step (the human's step: `human`)."""
    history = json.loads(source.read_text(encoding="utf-8"))["history"]
    return [agent_of(m.get("name") or m.get("role") or "?") if m.get("role") != "human" else "human"
            for m in history]


def score(preds: list[tuple[int | None, str | None]], labels: list[tuple[int, str]]) -> dict:
    n = len(labels)
    hit = lambda k: sum(1 for (s, _), (t, _) in zip(preds, labels, strict=False) if s is not None and abs(s - t) <= k)  # noqa: E731
    return {"n": n, "coverage": round(sum(s is not None for s, _ in preds) / n, 3),
            "step_exact": round(hit(0) / n, 3), "step_within_1": round(hit(1) / n, 3),
            "step_within_3": round(hit(3) / n, 3),
            "agent": round(sum(1 for (_, a), (_, b) in zip(preds, labels, strict=False) if a == b) / n, 3)}


def baselines(logs: list[dict]) -> dict:
    labels = [(x["step"], x["agent"]) for x in logs]
    out = {}
    first = [next((i for i, s in enumerate(x["speakers"]) if s != "human"), 0) for x in logs]
    out["first agent step"] = score([(i, x["speakers"][i]) for i, x in zip(first, logs, strict=False)], labels)
    out["last step"] = score([(len(x["speakers"]) - 1, x["speakers"][-1]) for x in logs], labels)
    rng = random.Random(0)
    runs = []
    for _ in range(DRAWS):
        picks = [rng.randrange(len(x["speakers"])) for x in logs]
        runs.append(score([(i, x["speakers"][i]) for i, x in zip(picks, logs, strict=False)], labels))
    out["random step"] = {k: (round(sum(r[k] for r in runs) / DRAWS, 3) if k != "n" else len(logs)) for k in runs[0]}
    agent_hits = sum(sum(1 for _ in range(DRAWS) if rng.choice(x["agents"]) == x["agent"]) for x in logs)
    out["random agent"] = {"n": len(logs), "agent": round(agent_hits / (DRAWS * len(logs)), 3)}
    return out


def make_judge(name: str):
    if name == "none":
        return None
    from judge.config import load_judge_config
    from judge.judges.factory import make_judge as factory

    return factory(load_judge_config(name))


def run(data: Path, judges: list[str], limit: int | None, workdir: Path) -> dict:
    root = data / "who-and-when" / "Who&When"
    summary = import_who_and_when(root, workdir / "traces")
    logs = []
    for path in summary.files:
        reader = TraceReader(path)
        meta = reader.header.metadata
        folder = "Hand-Crafted" if meta["subset"] == "hand-crafted" else "Algorithm-Generated"
        who = speakers(root / folder / (path.stem + ".json"))
        scenario = workdir / "scenarios" / f"{reader.header.scenario}.json"
        scenario.parent.mkdir(parents=True, exist_ok=True)
        scenario.write_text(json.dumps(scenario_for(reader.header, len(who) - 1)), encoding="utf-8")
        logs.append({"trace": path, "scenario": scenario, "subset": meta["subset"], "step": meta["mistake_step"],
                     "agent": meta["mistake_agent"], "speakers": who, "agents": meta["agents"]})
    if limit:
        logs = [x for s in ("hand-crafted", "algorithm-generated")
                for x in [y for y in logs if y["subset"] == s][:limit]]
    out: dict[str, Any] = {"logs": len(logs), "subsets": {}}
    for subset in ("hand-crafted", "algorithm-generated"):
        part = [x for x in logs if x["subset"] == subset]
        if not part:
            continue
        labels = [(x["step"], x["agent"]) for x in part]
        result = {"baselines": baselines(part), "judges": {}}
        for name in judges:
            judge = make_judge(name)
            preds, examples, t0 = [], [], time.perf_counter()
            for x in part:
                report = grade_paths(x["scenario"], [x["trace"]], judge=judge).runs[0]
                d = report.first_divergence
                step = d.turn if d is not None else None
                preds.append((step, x["speakers"][step] if step is not None else None))
                if d is not None:
                    examples.append({"run": x["trace"].stem, "predicted_step": step, "label_step": x["step"],
                                     "predicted_agent": preds[-1][1], "label_agent": x["agent"], "key": d.key,
                                     "rule": d.rule})
            result["judges"][name] = {**score(preds, labels), "seconds": round(time.perf_counter() - t0, 1),
                                      "divergences": examples}
        out["subsets"][subset] = result
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--judge", nargs="+", default=["none", "local"])
    ap.add_argument("--limit", type=int, help="at most N logs per subset (a quick look)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ww-grade-") as tmp:
        result = run(args.data, args.judge, args.limit, Path(tmp))
    text = json.dumps(result, indent=1, default=str)
    if args.json:
        args.json.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
