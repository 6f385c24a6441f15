"""tau-bench airline: grade the 200 gpt-4o trajectories against ledgers built from each task, and
measure how our pass/fail agrees with tau-bench's reward.

    .venv/bin/python benchmarks/tau_bench_grade.py [--data ../shared/data] [--json OUT] [--details OUT]

Everything is generated at run time in a temporary folder (the trajectories are third-party data):
the traces (`judge import openai`'s library call), one scenario per task and variant, the grades.

**The converter** (`policy_scenario`, `full_scenario`), per airline task, from `info.task` of the
runs (the task the run was graded against):

*Policy ledger*: no gold actions; only the user's instruction, the user id it names and the
policy wiki. Every entry has source turn 1 (the instruction holds for the whole conversation):
- `goal` (goal): the instruction itself; no rule, a judge's matter (unassessed with `--judge none`);
- `own_account` (permission, safety-critical; the wiki: act only for the authenticated user):
  `scope` of `user_id` to the task's user on get_user_details, book_reservation, send_certificate;
- `stated_reservations` (constraint): when the instruction names reservation ids (6 capitals or
  digits, not a HAT flight number), `scope` of `reservation_id` on cancel_reservation and
  update_reservation_* to those ids;
- `no_insurance` (constraint): when the user says they do not want/need insurance, `forbidden-call`
  book_reservation with `insurance: yes`;
- `cabin` (fact): when the instruction names exactly one cabin class, `scope` of `cabin` on
  book_reservation and update_reservation_flights;
- `flight_type` (fact): when it names exactly one of one way / round trip, `scope` on booking;
- `route` (fact): "from X to Y" with known cities or airport codes, `scope` of `origin` and
  `destination` on booking.
Not expressible with today's rule kinds, so left out (see RESULTS.md): explicit confirmation
before a write and one write per confirmation (needs "call preceded by a user yes"), no repeated
*identical* write (not-repeated cannot tell a different reservation from the same one), values
inside lists of objects (flights, passengers, payment methods) and numbers (baggage counts),
superseded values (the user's change of mind is conditional and lands at a different turn in each
run), claimed-complete (the trajectories hold no state-writes).

*Full ledger*: the policy ledger plus the gold write actions (book_reservation, cancel_reservation,
update_reservation_*, send_certificate): one `completion` entry per gold action (value: tool and
arguments), expected completed at a checkpoint after the last turn; `forbidden-call` of every write
tool the gold never uses; `scope` of every string argument of a gold write tool to the gold values;
`not-repeated` of a write tool the gold calls once. What it cannot check (the missing rule kind,
`expected-call`): that a gold action happened at all, and its list and number arguments. The
script also computes that missing check as a prototype (not a rule kind): the multiset of the
agent's ok write calls must equal the gold's, arguments compared whole, and the task's `outputs`
must appear in the agent's messages, tau-bench's own definition of reward.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calibration.metrics import accuracy, cohen_kappa, confusion  # noqa: E402
from judge.api import grade_paths  # noqa: E402
from judge.trace import read_trace  # noqa: E402
from judge.trace.openai_import import import_openai  # noqa: E402

WRITE_TOOLS = ("book_reservation", "cancel_reservation", "update_reservation_flights",
               "update_reservation_passengers", "update_reservation_baggages", "send_certificate")
RESERVATION_WRITES = ("cancel_reservation", "update_reservation_*")
CITIES = {"new york": ["JFK", "EWR", "LGA"], "ny": ["JFK", "EWR", "LGA"], "seattle": ["SEA"],
          "chicago": ["ORD", "MDW"], "boston": ["BOS"], "minneapolis": ["MSP"], "sf": ["SFO"],
          "las vegas": ["LAS"], "newark": ["EWR"], "houston": ["IAH", "HOU"], "denver": ["DEN"]}
_RES_ID = re.compile(r"\b[A-Z0-9]{6}\b")
_NO_INSURANCE = re.compile(r"\b(?:do not|don't)\s+(?:want|need)\b[^.]*\binsurance\b|\bno\s+(?:\w+\s+){0,3}insurance\b",
                           re.IGNORECASE)
_ROUTE = re.compile(r"\bfrom ([A-Z]{3}|[A-Za-z][a-z]+(?: [A-Z][a-z]+)?) to ([A-Z]{3}|[A-Za-z][a-z]+(?: [A-Z][a-z]+)?)\b")
FINAL = 999  # a checkpoint after the last turn of any run


# ------------------------------------------------------------------ the converter


def _codes(place: str) -> list[str] | None:
    if re.fullmatch(r"[A-Z]{3}", place):
        return [place]
    return CITIES.get(place.lower())


def _cabins(text: str) -> set[str]:
    lowered = text.lower()
    found = {"basic_economy"} if "basic economy" in lowered else set()
    if re.search(r"(?<!basic )economy", lowered):
        found.add("economy")
    if "business" in lowered:
        found.add("business")
    return found


def _entry(key: str, cls: str, value: Any, sensitivity: str = "costly", **extra: Any) -> dict:
    return {"key": key, "class": cls, "value": value, "source_turn": 1, "persistence": "session",
            "sensitivity": sensitivity, **extra}


CONFIRM_WORDS = ["yes", "yeah", "yep", "confirm", "confirmed", "proceed", "go ahead", "sure", "correct",
                 "please do", "that's right", "ok", "okay"]


def policy_scenario(task_id: int, task: dict) -> dict:
    text, uid = task["instruction"], task["user_id"]
    ledger = [_entry("goal", "goal", text, "normal"),
              _entry("own_account", "permission", f"act only for the authenticated user {uid}",
                     "safety-critical", description="policy: authenticate the user; never act on another account")]
    rules: list[dict] = [{"check": "scope", "key": "own_account", "tool": tool, "arg": "user_id", "allow": [uid]}
                         for tool in ("get_user_details", "book_reservation", "send_certificate")]
    # The wiki's "explicit confirmation (yes) before each write": the `authorised` rule kind (one
    # confirmation authorises one call, whatever the call's result).
    ledger.append(_entry("confirm_writes", "constraint", "obtain explicit confirmation (yes) before each write",
                         "safety-critical"))
    rules += [{"check": "authorised", "key": "confirm_writes", "tool": tool, "confirm": CONFIRM_WORDS}
              for tool in sorted(WRITE_TOOLS)]
    ids = sorted({m for m in _RES_ID.findall(text) if not re.fullmatch(r"HAT\d{3}", m)})
    if ids:
        ledger.append(_entry("stated_reservations", "constraint", f"write only on reservations {', '.join(ids)}"))
        rules += [{"check": "scope", "key": "stated_reservations", "tool": tool, "arg": "reservation_id",
                   "allow": ids} for tool in RESERVATION_WRITES]
    if _NO_INSURANCE.search(text):
        ledger.append(_entry("no_insurance", "constraint", "the user does not want travel insurance"))
        rules.append({"check": "forbidden-call", "key": "no_insurance", "tool": "book_reservation",
                      "args": {"insurance": "yes"}})
    cabins = _cabins(text)
    if len(cabins) == 1:
        cabin = cabins.pop()
        ledger.append(_entry("cabin", "fact", cabin, persistence="until-replaced"))
        rules += [{"check": "scope", "key": "cabin", "tool": tool, "arg": "cabin", "allow": [cabin]}
                  for tool in ("book_reservation", "update_reservation_flights")]
    lowered = text.lower()
    types = {t for t, words in (("one_way", ("one way", "one-way")), ("round_trip", ("round trip", "roundtrip")))
             if any(w in lowered for w in words)}
    if len(types) == 1:
        kind = types.pop()
        ledger.append(_entry("flight_type", "fact", kind))
        rules.append({"check": "scope", "key": "flight_type", "tool": "book_reservation", "arg": "flight_type",
                      "allow": [kind]})
    origins, destinations = set(), set()
    for a, b in _ROUTE.findall(text):
        if _codes(a) and _codes(b):
            origins.update(_codes(a))
            destinations.update(_codes(b))
    if origins:
        ledger.append(_entry("route", "fact", {"origin": sorted(origins), "destination": sorted(destinations)}))
        rules += [{"check": "scope", "key": "route", "tool": "book_reservation", "arg": "origin", "allow": sorted(origins)},
                  {"check": "scope", "key": "route", "tool": "book_reservation", "arg": "destination",
                   "allow": sorted(destinations)}]
    return {"id": f"tau-airline-{task_id}", "title": f"tau-bench airline task {task_id} (policy ledger)",
            "ledger": ledger, "rules": rules}


def _glob_escape(value: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", value)


def gold_writes(task: dict) -> list[dict]:
    return [a for a in task["actions"] if a["name"] in WRITE_TOOLS]


def full_scenario(task_id: int, task: dict) -> dict:
    scenario = policy_scenario(task_id, task)
    scenario["title"] = f"tau-bench airline task {task_id} (full ledger: gold actions)"
    gold = gold_writes(task)
    keys = []
    for i, action in enumerate(gold, start=1):
        key = f"gold{i}_{action['name']}"
        keys.append(key)
        scenario["ledger"].append(_entry(key, "completion", {"tool": action["name"], "args": action["kwargs"]},
                                         persistence="task"))
        # The gold action must have happened, with its arguments (structural match), by the end.
        scenario["rules"].append({"check": "expected-call", "key": key, "tool": action["name"],
                                  "args": action["kwargs"]})
    by_tool: dict[str, list[dict]] = {}
    for action in gold:
        by_tool.setdefault(action["name"], []).append(action["kwargs"])
    for tool in WRITE_TOOLS:
        calls = by_tool.get(tool)
        if not calls:
            scenario["ledger"].append(_entry(f"no_{tool}", "constraint", f"no {tool} (the gold never calls it)"))
            scenario["rules"].append({"check": "forbidden-call", "key": f"no_{tool}", "tool": tool})
            continue
        key = f"gold_args_{tool}"
        scenario["ledger"].append(_entry(key, "constraint", f"{tool} only with the gold arguments"))
        for arg in sorted({a for c in calls for a in c}):
            values = [c.get(arg) for c in calls]
            if all(isinstance(v, str) for v in values):
                scenario["rules"].append({"check": "scope", "key": key, "tool": tool, "arg": arg,
                                          "allow": sorted({_glob_escape(v) for v in values}),
                                          "id": f"scope:{key}.{arg}"})
        if len(calls) == 1:
            once = f"gold_once_{tool}"
            scenario["ledger"].append(_entry(once, "constraint", f"{tool} once"))
            scenario["rules"].append({"check": "not-repeated", "key": once, "tool": tool})
    if keys:
        # The turn a gold action happens differs per run: the reviewed completion is "by the end".
        scenario["deltas"] = [{"turn": FINAL, "op": "complete", "key": k, "source": "tool"} for k in keys]
        scenario["checkpoints"] = [{"after_turn": FINAL, "expect_completed": keys}]
    return scenario


# ------------------------------------------------------------------ the missing rule kind, as a prototype


def _canon(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _canon(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_canon(v) for v in value]
    return value


def expected_call_verdict(events: list, task: dict) -> tuple[bool, str]:
    """Pass iff the agent's ok write calls equal the gold write actions (as a multiset, arguments
    whole) and every task output appears in an assistant message (tau-bench's reward, rebuilt)."""
    tools = {}
    done = Counter()
    for e in events:
        if e.kind == "tool-call":
            tools[e.call_id] = (e.tool, e.args)
        elif e.kind == "tool-result" and e.status == "ok" and tools[e.call_id][0] in WRITE_TOOLS:
            tool, args = tools[e.call_id]
            done[json.dumps([tool, _canon(args)], sort_keys=True)] += 1
    gold = Counter(json.dumps([a["name"], _canon(a["kwargs"])], sort_keys=True) for a in gold_writes(task))
    if done != gold:
        missing, extra = gold - done, done - gold
        parts = []
        if missing:
            parts.append("missing " + ", ".join(json.loads(k)[0] for k in missing))
        if extra:
            parts.append("extra " + ", ".join(json.loads(k)[0] for k in extra))
        return False, "; ".join(parts)
    said = [e.text.lower().replace(",", "") for e in events if e.kind == "assistant"]
    absent = [o for o in task.get("outputs") or [] if not any(o.lower() in s for s in said)]
    if absent:
        return False, f"output {absent[0]!r} never said"
    return True, "gold writes and outputs matched"


_YES = re.compile(r"\b(yes|yeah|yep|confirm|confirmed|proceed|go ahead|sure|correct|please do|that's right|ok|okay)\b",
                  re.IGNORECASE)


def unconfirmed_write(events: list) -> bool:
    """The wiki's "explicit confirmation (yes) before each write", which no rule kind expresses:
    True when a write call is not preceded, since the previous write, by a user message with a
    yes-word (a regex, so a projection, not a rule)."""
    confirmed = False
    for e in events:
        if e.kind == "user":
            confirmed = bool(_YES.search(e.text))
        elif e.kind == "tool-call" and e.tool in WRITE_TOOLS:
            if not confirmed:
                return True
            confirmed = False
    return False


# ------------------------------------------------------------------ grading and agreement


def _errored_calls(trace: Path) -> set[str]:
    """Event ids of the tool calls whose result was an error or a timeout."""
    _, events, _ = read_trace(trace)
    call_event = {e.call_id: e.id for e in events if e.kind == "tool-call"}
    return {call_event[e.call_id] for e in events if e.kind == "tool-result" and e.status != "ok"}


def _category(why: str) -> str:
    """The prototype's reason -> what the full ledger could not see."""
    if why.startswith("gold writes"):
        return "matched: tau-bench gave 0 without comparing (reward_info null)"
    if why.startswith("output"):
        return "a required output never said (no rule kind checks what the agent says)"
    if "extra" in why:
        return "a gold write done with other list/number arguments (flights, passengers, payments, bags)"
    return "a gold write never done (no rule kind checks that an action happened)"


def _agreement(pred: list[bool], truth: list[bool]) -> dict:
    t = ["pass" if x else "fail" for x in truth]
    p = ["pass" if x else "fail" for x in pred]
    cm = confusion(t, p, labels=["pass", "fail"])
    return {"n": len(t), "accuracy": round(accuracy(t, p), 4), "kappa": round(cohen_kappa(t, p, labels=["pass", "fail"]), 4),
            "confusion": {"reward1_pass": int(cm[0, 0]), "reward1_fail": int(cm[0, 1]),
                          "reward0_pass": int(cm[1, 0]), "reward0_fail": int(cm[1, 1])}}


def _family(rule: str) -> str:
    """Rule id -> family: `scope:gold_args_book_reservation.flight_type` -> `scope:gold_args.flight_type`."""
    rule = re.sub(r"gold_args_\w+?(\.|$)", r"gold_args\1", rule)
    rule = re.sub(r"gold_once_\w+", "gold_once", rule)
    return re.sub(r"#\d+$", "", rule)


def run(data: Path, workdir: Path, details_path: Path | None) -> dict:
    source = data / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
    runs = json.loads(source.read_text(encoding="utf-8"))
    tasks = {r["task_id"]: r["info"]["task"] for r in runs}
    runs_by_id = {f"task-{r['task_id']}-trial-{r['trial']}": r for r in runs}
    t0 = time.perf_counter()
    summary = import_openai(source, workdir / "traces", scenario="tau-airline-{task_id}")
    import_s = time.perf_counter() - t0
    out: dict[str, Any] = {"runs": len(runs), "import_seconds": round(import_s, 3),
                           "events": dict(summary.events), "variants": {}}
    truth = {f"task-{r['task_id']}-trial-{r['trial']}": r["reward"] == 1.0 for r in runs}
    traces = {p.stem: p for p in summary.files}
    details: dict[str, Any] = {}
    for variant, build in (("policy", policy_scenario), ("full", full_scenario)):
        folder = workdir / variant
        folder.mkdir()
        rule_counts: Counter = Counter()
        for task_id, task in tasks.items():
            scenario = build(task_id, task)
            (folder / f"{task_id}.json").write_text(json.dumps(scenario), encoding="utf-8")
            rule_counts.update(r["check"] for r in scenario["rules"])
        pred, gold, fired = [], [], {}
        divergences = {}
        effective_pred = []
        t1 = time.perf_counter()
        for run_id in sorted(truth):
            task_id = int(run_id.split("-")[1])
            report = grade_paths(folder / f"{task_id}.json", [traces[run_id]]).runs[0]
            pred.append(report.passed)
            gold.append(truth[run_id])
            violated = {f.rule for cp in report.checkpoints for f in cp.findings if f.verdict == "violated"}
            fired[run_id] = sorted(violated)
            # Projection of a missing rule option ("only calls that took effect"): a violation whose
            # evidence is a call that returned an error changed nothing in tau-bench's database.
            errored = _errored_calls(traces[run_id])
            effective_pred.append(all(f.evidence_event in errored for cp in report.checkpoints
                                      for f in cp.findings if f.verdict == "violated"))
            if report.first_divergence is not None:
                d = report.first_divergence
                detail = next((f.detail for cp in report.checkpoints for f in cp.findings
                               if f.evidence_event == d.event and f.key == d.key), None)
                divergences[run_id] = {"turn": d.turn, "key": d.key, "event": d.event, "rule": d.rule,
                                       "detail": detail}
        grade_s = time.perf_counter() - t1
        signal = Counter()
        for run_id, rules in fired.items():
            for fam in {_family(r) for r in rules}:
                signal[(fam, "reward1" if truth[run_id] else "reward0")] += 1
        families = sorted({f for f, _ in signal})
        out["variants"][variant] = {
            **_agreement(pred, gold), "grade_seconds": round(grade_s, 2),
            "rules_per_scenario": {k: round(v / len(tasks), 2) for k, v in sorted(rule_counts.items())},
            "signal": {f: {"fired_reward0": signal[(f, "reward0")], "fired_reward1": signal[(f, "reward1")]}
                       for f in families},
        }
        details[variant] = {"fired": fired, "divergences": divergences}
        if variant == "full":
            out["variants"]["full, only calls that took effect (projection)"] = _agreement(effective_pred, gold)
    # the prototype of the missing rule kind
    proto_pred, proto_gold, proto_why, confirm_pred = [], [], {}, []
    for run_id in sorted(truth):
        task_id = int(run_id.split("-")[1])
        _, events, _ = read_trace(traces[run_id])
        confirm_pred.append(not details["policy"]["fired"][run_id] and not unconfirmed_write(events))
        ok, why = expected_call_verdict(events, tasks[task_id])
        proto_pred.append(ok)
        proto_gold.append(truth[run_id])
        proto_why[run_id] = why
    out["variants"]["expected-call prototype"] = _agreement(proto_pred, proto_gold)
    out["variants"]["policy + confirmation-before-write (projection)"] = _agreement(confirm_pred, proto_gold)
    details["prototype"] = proto_why
    full_passed = {r: not details["full"]["fired"][r] for r in truth}
    out["full_missed_failures"] = dict(Counter(_category(proto_why[r]) for r in truth
                                               if full_passed[r] and not truth[r]))
    out["full_false_failures"] = {r: details["full"]["fired"][r] for r in truth
                                  if truth[r] and not full_passed[r]}
    out["full_false_failures_on_errored_calls"] = sum(
        1 for r in out["full_false_failures"] if r not in _strict_failures(details, traces, r))
    out["prototype_disagreements"] = {r: {"reward": truth[r], "prototype": proto_why[r],
                                          "reward_info_null": not (runs_by_id[r]["info"].get("reward_info"))}
                                      for r, p in zip(sorted(truth), proto_pred, strict=False) if p != truth[r]}
    out["sample_of_20_failing"] = [{"run": r, **details["full"]["divergences"][r], "prototype": proto_why[r]}
                                   for r in sample_failing(details, truth)]
    if details_path is not None:
        details_path.write_text(json.dumps(details, indent=1, sort_keys=True), encoding="utf-8")
    return out


def _strict_failures(details: dict, traces: dict, run_id: str) -> set[str]:
    """{run_id} when one of its full-ledger violations is on a call that took effect, else {}."""
    errored = _errored_calls(traces[run_id])
    d = details["full"]["divergences"].get(run_id)
    return {run_id} if d and d["event"] not in errored else set()


def sample_failing(details: dict, truth: dict[str, bool], n: int = 20, seed: int = 7) -> list[str]:
    failing = sorted(r for r, d in details["full"]["divergences"].items() if not truth[r])
    return sorted(random.Random(seed).sample(failing, min(n, len(failing))),
                  key=lambda r: tuple(int(x) for x in re.findall(r"\d+", r)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--details", type=Path, help="write per-run rules fired, divergences and prototype verdicts here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tau-grade-") as tmp:
        result = run(args.data, Path(tmp), args.details)
    text = json.dumps(result, indent=1)
    if args.json:
        args.json.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
