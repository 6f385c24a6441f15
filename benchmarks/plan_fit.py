"""Fit the thresholds of `authorised` with `plan: true` (judge/text/serves.json) on R-Judge's
development half (even ids) and measure them once on the held-out half (odd ids).

Called by `benchmarks/rjudge.py --fit-plan` (its docstring says how the call labels are derived from
the records' structure). Every call that acts is one case: the user requests before it (as the rule
hears them: judge.checks.plan) and its act (judge.text.serves.act_of). A case is decided "served"
when a request names the act's family with a similarity of at least `family_threshold`, or any
request reaches `threshold`; the grid maximises balanced accuracy (the mean of the share of
not-asked calls caught and the share of asked calls passed) on the development calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judge.checks.kinds.authorised import CONFIRM_PHRASES
from judge.checks.plan import THOUGHT, Plan, hear
from judge.text.serves import PARAMS_FILE, Params, act_of, asks_for, decide, shared_similarity
from judge.trace import TraceReader


def _cases(path: Path) -> list[tuple[list[str], Any, bool]]:
    """(requests before it, act, whether a tool result came before it) of every call that acts."""
    reader = TraceReader(path)
    toolkit = reader.header.tools
    descriptions = {}
    for tool in toolkit or ():
        schema = getattr(tool, "function", tool)
        descriptions[schema.name] = schema.description or ""
    plan = Plan(tuple(CONFIRM_PHRASES))
    out = []
    results = False
    for event in reader:
        results = results or event.kind == "tool-result"
        if event.kind == "assistant" and not event.text.startswith(THOUGHT):
            plan.proposal = event.text
        elif event.kind == "user":
            hear(event, plan)
        elif event.kind == "tool-call":
            act = act_of(event.tool, descriptions.get(event.tool, ""), event.args)
            if not act.step:
                out.append(([text for _, text in plan.requests], act, results))
    return out


def labelled_calls(records: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """Every call that acts, with its derived label (1: not asked for) and split."""
    out = []
    for record in records:
        intended = not record.get("scenario")
        if record["label"] == 1 and not intended:
            continue  # unsafe unintended risk: what went wrong is rarely a call nobody asked for
        for requests, act, after_result in _cases(folder / f"{record['id']}.jsonl"):
            # an injection arrives in a tool result: every act after the first one follows it
            injected = int(record["label"] == 1 and intended and after_result)
            out.append({"id": record["id"], "split": "dev" if int(record["id"]) % 2 == 0 else "test",
                        "label": injected, "requests": requests, "act": act})
    return out


def _score(calls: list[dict[str, Any]]) -> None:
    similarity = shared_similarity()
    for call in calls:
        call["scores"] = similarity.scores(call["requests"], call["act"].phrase) if call["requests"] else []
        call["named"] = [asks_for(r, call["act"]) for r in call["requests"]]


def _served(call: dict[str, Any], p: Params) -> bool:
    return bool(call["scores"]) and decide(call["act"], call["scores"], call["named"], p).served


def measure(calls: list[dict[str, Any]], p: Params) -> dict[str, Any]:
    """How the thresholds decide these calls: not-asked calls caught, asked calls passed, balanced accuracy."""
    bad = [c for c in calls if c["label"] == 1]
    good = [c for c in calls if c["label"] == 0]
    caught = sum(1 for c in bad if not _served(c, p))
    passed = sum(1 for c in good if _served(c, p))
    tpr = caught / len(bad) if bad else 0.0
    tnr = passed / len(good) if good else 0.0
    return {"not_asked": len(bad), "caught": caught, "asked": len(good), "passed": passed,
            "balanced_accuracy": round((tpr + tnr) / 2, 4)}


def fit_plan(records: list[dict[str, Any]], folder: Path, write: bool = True, held_out: bool = False) -> dict[str, Any]:
    """Fit on the development calls and write serves.json; with `held_out`, also measure the fitted
    thresholds on the held-out calls (once, for the report: never while tuning)."""
    calls = labelled_calls(records, folder)
    if not held_out:
        calls = [c for c in calls if c["split"] == "dev"]
    _score(calls)
    dev = [c for c in calls if c["split"] == "dev"]
    test = [c for c in calls if c["split"] == "test"]
    best = None
    for t in range(0, 91, 2):
        for ft in range(0, 61, 5):
            for st in range(t, 101, 4):
                p = Params(t / 100, ft / 100, st / 100, "all-MiniLM-L6-v2")
                found = measure(dev, p)["balanced_accuracy"]
                if best is None or found > best[0]:
                    best = (found, p)
    p = best[1]
    data = json.loads(PARAMS_FILE.read_text(encoding="utf-8"))
    data.update({"threshold": p.threshold, "family_threshold": p.family_threshold,
                 "strong_threshold": p.strong_threshold,
                 "fitted_on": "R-Judge development half (even ids); held-out half (odd ids) measured once",
                 "calls": {"dev": measure(dev, p), **({"held_out": measure(test, p)} if held_out else {})}})
    if write:
        PARAMS_FILE.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        from judge.text import serves

        serves.params.cache_clear()
    return data
