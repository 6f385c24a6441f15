"""Reproducibility: what a report must record to re-run a grade, and the minimal failing slice.

`provenance()` gathers the candidate's model, sampling settings, prompt version and tool schema hash
(from the run header, where the trace gives them), the judge fingerprint, the versions of the
packages that decide a grade (read with importlib.metadata, so nothing heavy is imported) and the
sha256 of every input file. `write_slice()` cuts a failing run down to a standalone scenario and
trace that re-grade to the same first divergence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge.errors import JudgeInputError
from judge.grade.provenance import sha256_file
from judge.grade.slice_inputs import find_run, locate_scenario, locate_trace
from judge.ledger import ExpectedLedger, KeyHistory, build_ledger
from judge.model import Divergence, RunHeader, Scenario
from judge.model.atomic import write_atomic

# ---------------------------------------------------------------- the minimal failing slice


@dataclass
class SliceResult:
    """What `write_slice` wrote and whether re-grading it reproduced the first divergence."""

    directory: Path
    scenario: Path
    trace: Path
    events: list[str]
    context: list[str]  # events added to the report's slice (tool-call partners, earlier ok calls, ...)
    keys: list[str]
    divergence: Divergence
    regraded: Divergence | None
    verified: bool | None  # None: the divergence came from the judge, re-grade with the same judge
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The result as JSON-ready values (the body of the `slice.json` that `write_slice` writes)."""
        return {"scenario": str(self.scenario), "trace": str(self.trace), "events": self.events,
                "context": self.context, "keys": self.keys,
                "divergence": self.divergence.model_dump(by_alias=True),
                "regraded": self.regraded.model_dump(by_alias=True) if self.regraded else None,
                "verified": self.verified, "note": self.note}


def _base_turn(ledger: ExpectedLedger, turn: int) -> int:
    """The last checkpoint before the divergence's window (-1 when it is in the first window)."""
    return max((cp.after_turn for cp in ledger.scenario.checkpoints if cp.after_turn < turn), default=-1)


def _entry(h: KeyHistory, base: int) -> dict[str, Any]:
    first = h.versions[0]
    out = {"key": h.key, "class": h.class_, "value": first.value, "source_turn": base,
           "persistence": h.persistence, "sensitivity": h.sensitivity, "source": first.source}
    if h.description:
        out["description"] = h.description
    return out


def _history_before(ledger: ExpectedLedger, h: KeyHistory, base: int) -> list[dict[str, Any]]:
    """The key's versions and completion marks up to `base`, restated as deltas at `base`."""
    note = "stated before the slice"
    out = [{"turn": base, "op": "set", "key": h.key, "value": v.value, "source": v.source,
            "note": f"{note} (turn {v.turn})"} for v in h.versions[1:] if v.turn <= base]
    marks = [(t, op) for t, op in h.marks if t <= base]
    sources = {(d.op, d.turn): d.source for d in ledger.scenario.deltas if d.key == h.key}
    if marks:
        done = max(t for t, op in marks if op == "complete")
        out.append({"turn": base, "op": "complete", "key": h.key, "source": sources.get(("complete", done), "tool"),
                    "note": f"{note} (turn {done})"})
        if marks[-1][1] == "reopen":
            out.append({"turn": base, "op": "reopen", "key": h.key,
                        "source": sources.get(("reopen", marks[-1][0]), "user"),
                        "note": f"{note} (turn {marks[-1][0]})"})
    return out


def sliced_scenario(ledger: ExpectedLedger, base: int, end: int, keys: set[str] | None,
                    title: str) -> dict[str, Any]:
    """A standalone scenario: the ledger at the last passing checkpoint `base` as entries stated at
    that turn, the deltas in (base, end], one checkpoint after `end`, the rules of the kept keys."""
    scenario = ledger.scenario
    entries: list[dict[str, Any]] = []
    deltas: list[dict[str, Any]] = []
    originals = {e.key: e for e in scenario.ledger}
    for key, h in ledger.keys.items():
        if keys is not None and key not in keys:
            continue
        if h.introduced <= base:
            if h.persistence == "turn" or (h.revoked_at is not None and h.revoked_at <= base):
                continue
            entries.append(_entry(h, base))
            deltas += _history_before(ledger, h, base)
        elif key in originals and h.introduced <= end:
            entries.append(originals[key].model_dump(mode="json", by_alias=True, exclude_none=True))
    kept = {e["key"] for e in entries}
    for d in scenario.deltas:
        if base < d.turn <= end and (keys is None or d.key in keys) and (d.op == "add" or d.key in kept):
            deltas.append(d.model_dump(mode="json", by_alias=True, exclude_none=True))
            kept.add(d.key)
    rules = [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in scenario.rules if r.key in kept]
    draft = {"id": scenario.id, "title": title, "ledger": entries, "deltas": deltas, "checkpoints": [], "rules": rules}
    reduced = build_ledger(Scenario.model_validate(draft))
    retain = [k for k, h in reduced.keys.items() if h.is_active(end) and h.status_at(end) != "completed"]
    completed = [k for k, h in reduced.keys.items() if h.introduced <= end and h.status_at(end) == "completed"]
    checkpoint: dict[str, Any] = {"after_turn": end, "must_retain": retain,
                                  "description": "the first divergence of the original run"}
    if completed:
        checkpoint["expect_completed"] = completed
    draft["checkpoints"] = [checkpoint]
    build_ledger(Scenario.model_validate(draft))  # a slice that does not lint is a bug, not bad input
    return draft


@dataclass
class _Scan:
    """One pass over the trace up to the divergence: positions of the slice and the tool events."""

    header: RunHeader
    index: dict[str, int]            # event id -> position, for the slice's events
    stop: int                        # position of the divergence event
    calls: dict[str, tuple[int, str]]  # call id -> (position, tool)
    results: list[tuple[int, str, str]]  # (position, call id, status)
    kinds: dict[int, Any]            # position -> event, for the slice's events


def _scan(trace: Path, ids: set[str], stop_id: str) -> _Scan:
    from judge.trace import TraceReader

    reader = TraceReader(trace)
    scan = _Scan(reader.header, {}, -1, {}, [], {})
    for i, event in enumerate(reader):
        if event.kind == "tool-call":
            scan.calls[event.call_id] = (i, event.tool)
        elif event.kind == "tool-result":
            scan.results.append((i, event.call_id, event.status))
        if event.id in ids:
            scan.index[event.id] = i
            scan.kinds[i] = event
        if event.id == stop_id:
            scan.stop = i
            break
    if scan.stop < 0:
        raise JudgeInputError(f"the trace has no event {stop_id!r}: it is not the trace that was graded",
                              file=str(trace))
    return scan


def _context(scan: _Scan, ledger: ExpectedLedger, level: int) -> set[int]:
    """Positions to write. 1: the slice plus the tool calls its results answer; 2: also the earlier
    ok calls of the tools stateful rules remember (each rule's tracker's `keeps_ok_calls_of`: not-repeated's
    tool) and the last call before the slice; 3: everything up to the divergence."""
    if level >= 3:
        return set(range(scan.stop + 1))
    chosen = set(scan.index.values())
    start = min(chosen)
    by_call = {call_id: pos for call_id, (pos, _) in scan.calls.items()}
    for pos, call_id, _ in scan.results:
        if pos in chosen and call_id in by_call:
            chosen.add(by_call[call_id])
    if level >= 2:
        from judge.checks import spec_for
        from judge.model.patterns import glob_match as fnmatchcase  # RE2: linear time

        kept = (spec_for(r.check).make_tracker(r).keeps_ok_calls_of() for r in ledger.scenario.rules)
        repeat = [tool for tool in kept if tool is not None]
        tools = {call_id: tool for call_id, (_, tool) in scan.calls.items()}
        for pos, call_id, status in scan.results:
            if pos < start and status == "ok" and any(fnmatchcase(tools.get(call_id, ""), p) for p in repeat):
                chosen.update((pos, by_call[call_id]))
        before = [(pos, cid) for cid, (pos, _) in scan.calls.items() if pos < start]
        if before:
            pos, cid = max(before)
            chosen.add(pos)
            chosen.update(p for p, c, _ in scan.results if c == cid and p < start)
    return chosen


def _events_at(trace: Path, positions: set[int], stop: int) -> list[Any]:
    from judge.trace import TraceReader

    out = []
    for i, event in enumerate(TraceReader(trace)):
        if i in positions:
            out.append(event)
        if i >= stop:
            break
    return out


def _involved(ledger: ExpectedLedger, draft: dict[str, Any], events: list[Any], slice_ids: set[str],
              divergence: Divergence) -> set[str]:
    """The divergence key, keys whose rules an event of the slice exercised, keys the slice writes,
    and keys whose deltas fall inside the slice."""
    from judge.checks import RuleSet

    rules = RuleSet(build_ledger(Scenario.model_validate(draft)))
    keys = {divergence.key}
    for i, event in enumerate(events):
        hits = rules.observe(event, i)
        if event.id in slice_ids:
            keys.update(h.key for h in hits)
            if event.kind == "state-write" and event.key in ledger.keys:
                keys.add(event.key)
    base = _base_turn(ledger, divergence.turn)
    keys.update(d.key for d in ledger.scenario.deltas if base < d.turn <= divergence.turn)
    return keys


def _write_files(out: Path, header: RunHeader, events: list[Any], draft: dict[str, Any],
                 meta: dict[str, Any]) -> tuple[Path, Path]:
    import yaml

    head = header.model_dump(mode="json", by_alias=True, exclude_unset=True)
    head["metadata"] = {**(head.get("metadata") or {}), "slice_of": meta}
    from judge.model.jsonl import dumps_line

    lines = [dumps_line(head)]
    lines += [dumps_line(e.model_dump(mode="json", by_alias=True, exclude_unset=True)) for e in events]
    trace_out, scenario_out = out / "trace.jsonl", out / "scenario.yaml"
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(trace_out, "\n".join(lines) + "\n")
        write_atomic(scenario_out, yaml.safe_dump(draft, sort_keys=False, allow_unicode=True, width=110))
    except OSError as exc:
        raise JudgeInputError(f"cannot write: {exc.strerror}", file=str(out)) from None
    return scenario_out, trace_out


def _regrade(scenario_out: Path, trace_out: Path) -> Divergence | None:
    from judge.grade.run import grade_trace
    from judge.ledger import load_ledger

    return grade_trace(load_ledger(scenario_out), trace_out).first_divergence


def _same(a: Divergence | None, b: Divergence) -> bool:
    return a is not None and (a.turn, a.key, a.event, a.rule) == (b.turn, b.key, b.event, b.rule)


def write_slice(report_path: str | Path, run_id: str, out_dir: str | Path, *,
                scenario: str | Path | None = None, trace: str | Path | None = None) -> SliceResult:
    """Cut run `run_id` of a grade or suite report down to a standalone scenario and trace in
    `out_dir` (scenario.yaml, trace.jsonl, slice.json) that re-grade to the same first divergence.

    Tries the smallest slice first (the report's slice and the tool calls its results answer, with
    only the keys involved) and widens it (earlier ok calls, every key, the whole prefix) until a
    deterministic re-grade gives the same turn, key, event and rule. Events are written redacted.
    `trace`, `scenario`: the files, where the report's paths do not lead to them (another folder).
    """
    from judge.ledger import load_ledger

    report_path, out = Path(report_path), Path(out_dir)
    run, scenario_id, named = find_run(report_path, run_id)
    if not run.get("first_divergence") or not run.get("slice"):
        raise JudgeInputError(f"run {run_id!r} has no first divergence: there is no failing slice to cut",
                              file=str(report_path))
    divergence = Divergence.model_validate(run["first_divergence"])
    trace = locate_trace(run, report_path, given=Path(trace) if trace else None)
    inputs = (run.get("provenance") or {}).get("inputs") or {}
    scenario_path = Path(scenario) if scenario else locate_scenario(scenario_id, run, trace, report_path, named)
    recorded = (inputs.get("scenario") or {}).get("sha256")
    if recorded and sha256_file(scenario_path) != recorded:
        raise JudgeInputError(f"{scenario_path} is not the scenario the run was graded with (sha256 differs)",
                              file=str(report_path))
    from judge.model.limits import same_file

    for target in (out / "scenario.yaml", out / "trace.jsonl", out / "slice.json"):
        if any(same_file(target, p) for p in (report_path, trace, scenario_path)):
            raise JudgeInputError("refusing to write the slice over an input file", file=str(target))
    ledger = load_ledger(scenario_path)
    base, end = _base_turn(ledger, divergence.turn), divergence.turn
    slice_ids = set(run["slice"])
    scan = _scan(trace, slice_ids, divergence.event)
    title = (f"Slice of {ledger.scenario.id} run {run_id}: turns {base + 1}-{end}, first divergence "
             f"{divergence.key} at {divergence.event}")
    full = sliced_scenario(ledger, base, end, None, title)
    keys = _involved(ledger, full, _events_at(trace, _context(scan, ledger, 1), scan.stop), slice_ids, divergence)
    attempts: list[tuple[set[str] | None, int]] = [(keys, 1), (keys, 2), (None, 1), (None, 2), (None, 3)]
    judged = divergence.rule is None
    meta = {"trace": str(trace), "sha256": sha256_file(trace), "report": str(report_path),
            "scenario": str(scenario_path), "scenario_sha256": sha256_file(scenario_path), "base_turn": base}
    first: SliceResult | None = None
    for kept, level in attempts:
        draft = sliced_scenario(ledger, base, end, kept, title)
        events = _events_at(trace, _context(scan, ledger, level), scan.stop)
        scenario_out, trace_out = _write_files(out, scan.header, events, draft, meta)
        regraded = None if judged else _regrade(scenario_out, trace_out)
        result = SliceResult(out, scenario_out, trace_out, [e.id for e in events],
                             [e.id for e in events if e.id not in slice_ids],
                             [e["key"] for e in draft["ledger"]]
                             + [d["key"] for d in draft["deltas"] if d["op"] == "add"],
                             divergence, regraded, None if judged else _same(regraded, divergence))
        first = first or result
        if judged or result.verified:
            break
    else:  # nothing reproduced it: keep the smallest cut, and say so
        assert first is not None  # `attempts` is not empty
        result = first
        draft = sliced_scenario(ledger, base, end, attempts[0][0], title)
        _write_files(out, scan.header, _events_at(trace, _context(scan, ledger, 1), scan.stop), draft, meta)
    result.note = ("the divergence came from the judge: re-grade with the same judge to reproduce it" if judged
                   else "re-grading reproduces the first divergence" if result.verified
                   else "re-grading did NOT reproduce the first divergence (the rules depend on more history)")
    write_atomic(out / "slice.json", json.dumps({**result.as_dict(), "source": meta}, indent=2,
                                                ensure_ascii=False) + "\n")
    return result
