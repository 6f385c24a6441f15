"""SummEdits in the compaction-audit setting, through the real summary audit, beside the baselines.

Setting (../shared/data/summedits/SOURCE.md, check 1): per record, a scenario whose ledger holds the
seed summary's (`original_summary`) sentences as `fact` entries, and a trace whose one `summary`
event (compaction, turn 1) is the edited `summary`. Each scenario also carries one `summary-phrases`
rule per number or name of a seed sentence (`require: [that token]`), the phrase baseline written
as the audit's own rules. The files go to a temporary folder and are read back by the code
`judge audit-summary --trace` runs (judge.ledger.load_ledger, judge.summaries.summary_events_of,
judge.summaries.audit.SummaryAuditor with the command's default model), all records in one batch
(judge.summaries.audit.audit_batch: one model load, every text embedded once). A summary is
predicted inconsistent when its audit fails. Only the two summaries reach the audit: never `doc`,
`label`, `edit_types` or `id` (the leak warning).

Predictors, per layer of the audit and beside the baselines:
- `audit` (merged: what `judge audit-summary` exits with), `semantic` (retrieval, rules and the
  fact-consistency model, judge.summaries.facts), `phrase` (the rules above);
- `model (direct)`: judge.text.consistency called directly on (seed sentences, summary), as in
  phase A (benchmarks/SUMMEDITS.md), to check the audit path against it;
- `any-edit`: inconsistent whenever the summary differs from the seed;
- `phrases`: the phrase rule computed directly (case-folded substring); equals the phrase layer.

Reports balanced accuracy ((TPR + TNR) / 2, the paper's metric) per domain and split, false alarms
(flagged consistent summaries), recall per GPT-4-predicted edit type, beside the published table
(document-vs-summary, a harder task). Everything tunable was tuned on the `evaluation` split (the
model's threshold: sales_call and qmsumm; the audit's restatement gate: all three domains and the
project's labelled summaries); `test` is held out: read once per change, reported in
benchmarks/RESULTS.md. samsum is CC BY-NC-ND: evaluation only, nothing of it is printed but counts.

    python benchmarks/summedits.py [--data ../shared/data] [--split test] [--threads N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.update({"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TOKENIZERS_PARALLELISM": "false"})
sys.path.insert(0, str(ROOT))

from judge.text.align import is_name, number_value, tokens  # noqa: E402
from judge.text.consistency import ConsistencyModel, split_sentences  # noqa: E402

DOMAINS = ("samsum", "sales_call", "qmsumm")
SPLITS = ("evaluation", "test", "all")
EDIT_TYPES = ("entity_modification", "antonym_swap", "negation_insertion_removal", "hallucinated_fact_insertion")
LAYERS = ("audit", "semantic", "phrase")
FAILURES = ("missing", "distorted", "obsolete-as-current", "assumption-promoted")
PUBLISHED = {  # SOURCE.md, repo README table: balanced accuracy, document vs summary
    "DAE": (58.7, 50.4, 52.0), "SummaCConv": (53.1, 59.0, 53.5), "QAFactEval": (66.2, 68.4, 62.4),
    "GPT4": (83.1, 87.9, 79.6), "Human Perf.": (89.4, 91.8, 90.7)}


def load(data: Path, domain: str) -> list[dict]:
    rows = json.loads((data / "summedits" / f"summedits_{domain}.json").read_text(encoding="utf-8"))
    return [{"seed": r["original_summary"], "summary": r["summary"], "label": int(r["label"]),
             "edit_types": list(r["edit_types"]), "split": r["split"]} for r in rows]


def phrase_rules(seed: str) -> list[str]:
    return sorted({t.text for t in tokens(seed) if is_name(t) or number_value(t) is not None})


def predict_phrases(record: dict) -> bool:
    folded = record["summary"].casefold()
    return any(p.casefold() not in folded for p in phrase_rules(record["seed"]))


def predict_any_edit(record: dict) -> bool:
    return record["summary"].strip() != record["seed"].strip()


def predict_model(model: ConsistencyModel, records: list[dict], repeat: int = 1) -> tuple[list[bool], float]:
    """Flags from the model's direct audit of each (seed sentences, summary), and the best time of
    `repeat` runs."""
    items = [(split_sentences(r["seed"]), r["summary"]) for r in records]
    times = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        verdicts = model.audit_many(items)
        times.append(time.perf_counter() - start)
    return [any(v.status != "kept" for v in vs) for vs in verdicts], min(times)


# ---------------------------------------------------------------- the real audit path


def scenario_of(name: str, record: dict) -> dict:
    """The ledger a reviewer would write from the seed summary alone: one fact per sentence, one
    phrase rule per number or name of it. Nothing else of the record goes in."""
    facts = split_sentences(record["seed"])
    ledger = [{"key": f"s{i}", "class": "fact", "value": fact, "source_turn": 1} for i, fact in enumerate(facts, 1)]
    rules = [{"check": "summary-phrases", "key": f"s{i}", "require": [phrase]}
             for i, fact in enumerate(facts, 1) for phrase in phrase_rules(fact)]
    return {"id": name, "ledger": ledger, "checkpoints": [{"after_turn": 1}], "rules": rules}


def trace_of(name: str, record: dict) -> list[dict]:
    return [{"kind": "run", "run_id": f"{name}-run", "scenario": name},
            {"id": "e1", "turn": 1, "kind": "summary", "reason": "compaction", "text": record["summary"]}]


def write_inputs(folder: Path, records: list[dict]) -> list[tuple[Path, Path]]:
    paths = []
    for i, record in enumerate(records):
        name = f"se{i:04d}"
        scenario, trace = folder / f"{name}.json", folder / f"{name}.jsonl"
        scenario.write_text(json.dumps(scenario_of(name, record)), encoding="utf-8")
        trace.write_text("\n".join(json.dumps(e) for e in trace_of(name, record)) + "\n", encoding="utf-8")
        paths.append((scenario, trace))
    return paths


def layer_flags(audit) -> dict[str, bool]:
    out = {"audit": not audit.passed}
    for layer in ("semantic", "phrase"):
        out[layer] = any((f.layers.get(layer) and f.layers[layer].status in FAILURES) for f in audit.findings)
    return out


def audit_records(records: list[dict], model_name: str = "all-MiniLM-L6-v2") -> tuple[list[dict], dict]:
    """Write every record's scenario and trace, read them back and audit them as `judge
    audit-summary --trace` does, all in one batch; per record the flags of each layer."""
    from judge.ledger import load_ledger
    from judge.summaries.audit import SummaryAuditor, audit_batch
    from judge.summaries.inputs import summary_events_of
    from judge.text.minilm import load_embedding_model

    start = time.perf_counter()
    model = load_embedding_model(model_name)
    loaded = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="summedits-") as tmp:
        paths = write_inputs(Path(tmp), records)
        jobs = []
        for scenario, trace in paths:
            ledger = load_ledger(scenario)
            events = summary_events_of(trace, ledger)
            jobs.append((SummaryAuditor(ledger, model=model), [(e.text, e.turn, e) for e in events]))
        read = time.perf_counter()
        audits = audit_batch(jobs)
    done = time.perf_counter()
    timing = {"model_load_s": round(loaded - start, 2), "write_and_read_s": round(read - loaded, 2),
              "audit_s": round(done - read, 2), "summaries": len(records),
              "per_summary_ms": round(1000 * (done - read) / max(1, len(records)), 2)}
    return [layer_flags(audit) for [audit] in audits], timing


# ---------------------------------------------------------------- scoring and tables


def scores(flags: list[bool], records: list[dict]) -> dict:
    bad = [f for f, r in zip(flags, records, strict=False) if r["label"] == 0]
    good = [f for f, r in zip(flags, records, strict=False) if r["label"] == 1]
    tpr, fpr = sum(bad) / max(1, len(bad)), sum(good) / max(1, len(good))
    out = {"n": len(records), "balanced_accuracy": round(100 * (tpr + 1 - fpr) / 2, 1),
           "recall": round(100 * tpr, 1), "false_alarms": round(100 * fpr, 1)}
    for kind in EDIT_TYPES:
        hits = [f for f, r in zip(flags, records, strict=False) if r["label"] == 0 and kind in r["edit_types"]]
        out[kind] = round(100 * sum(hits) / max(1, len(hits)), 1)
    return out


def subsets(records: dict[str, list[dict]], splits: tuple[str, ...]):
    for split in splits:
        for domain in DOMAINS + ("overall",):
            rows = [i for d in (DOMAINS if domain == "overall" else (domain,)) for i in records[d]]
            yield split, domain, [i for i in rows if split == "all" or i["split"] == split]


def table(results: dict, metric: str, splits: tuple[str, ...]) -> str:
    lines = ["| predictor | split | " + " | ".join(DOMAINS) + " | overall |", "|---" * 6 + "|"]
    for name, by in results.items():
        for split in splits:
            lines.append(f"| {name} | {split} | " + " | ".join(str(by[split][d][metric]) for d in DOMAINS + ("overall",))
                         + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="SummEdits, compaction setting, through the summary audit")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--split", choices=SPLITS, default="evaluation",
                        help="which split to score (default: evaluation; `test` is for measuring once per change)")
    parser.add_argument("--threads", type=int, default=None,
                        help="the model's threads (ONNX Runtime's; default: judge's, 1 on <= 4 cores)")
    parser.add_argument("--no-direct", action="store_true", help="skip the direct model call")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        from judge.text import minilm

        minilm.set_torch_threads(args.threads)
    splits = SPLITS if args.split == "all" else (args.split,)
    records = {d: [r for r in load(args.data, d) if args.split == "all" or r["split"] == args.split] for d in DOMAINS}
    every = [r for d in DOMAINS for r in records[d]]
    flags, timing = audit_records(every)
    for r, f in zip(every, flags, strict=False):
        r.update(f)
    predictors = {name: (lambda r, name=name: r[name]) for name in LAYERS}
    if not args.no_direct:
        start = time.perf_counter()
        direct, _ = predict_model(ConsistencyModel.load(), every)
        timing["direct_model_s"] = round(time.perf_counter() - start, 2)
        for r, f in zip(every, direct, strict=False):
            r["direct"] = f
        predictors["model (direct)"] = lambda r: r["direct"]
    predictors.update({"any-edit": predict_any_edit, "phrases": predict_phrases})
    results: dict[str, dict] = {name: {} for name in predictors}
    for split, domain, rows in subsets(records, splits):
        for name, fn in predictors.items():
            results[name].setdefault(split, {})[domain] = scores([fn(r) for r in rows], rows)
    print("## Balanced accuracy (%)\n\n" + table(results, "balanced_accuracy", splits))
    print("\n## False alarms on consistent summaries (%)\n\n" + table(results, "false_alarms", splits))
    for kind in EDIT_TYPES:
        print(f"\n## Recall on {kind} (%)\n\n" + table(results, kind, splits))
    print("\n## Published (document vs summary; balanced accuracy %)\n")
    print("| model | " + " | ".join(DOMAINS) + " |\n|---|---|---|---|")
    for name, row in PUBLISHED.items():
        print(f"| {name} | " + " | ".join(map(str, row)) + " |")
    timing["load_average"] = round(os.getloadavg()[0], 2)
    print(f"\nspeed: {json.dumps(timing)}")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "speed": timing}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
