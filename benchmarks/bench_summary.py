"""Benchmark: summary audits per second with the offline `local` model (all-MiniLM-L6-v2, CPU).

1,000 summaries of about 200 words each, generated deterministically, are audited against one
30-entry ledger (3 goals, 8 constraints, 5 permissions, 7 facts of which 3 superseded, 4 completions
of which 2 completed, 3 uncertainties), all at the same turn. The entry embeddings are computed once
per (model, scenario, turn) and reused by every audit, so an audit costs the embedding of its own
sentences and clauses plus the lexical rules. Model loading is outside the timing; one warm-up
audit is. The phrase-only audit (no model) is timed too.

Usage: python benchmarks/bench_summary.py [--quick] [--summaries N] [--results]
`--quick`: 200 summaries instead of 1,000.
`--results` writes its section of benchmarks/RESULTS.md (other sections are kept).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
os.environ.update({"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TOKENIZERS_PARALLELISM": "false"})
sys.path.insert(0, str(ROOT))

from judge.ledger import build_ledger  # noqa: E402
from judge.model import Scenario  # noqa: E402
from judge.summaries.audit import SummaryAuditor  # noqa: E402
from judge.summaries.semantic import ENTRY_VECTORS  # noqa: E402

SECTION = "Summary audit: audits per second (bench_summary.py)"
TURN = 20
SERVICES = ["billing", "checkout", "search", "catalog", "payments", "auth", "inventory", "shipping"]


def scenario() -> Scenario:
    ledger, deltas, rules = [], [], []
    for i in range(3):
        ledger.append({"key": f"goal_{i}", "class": "goal", "source_turn": 1,
                       "value": f"Find why the {SERVICES[i]} service slows down at night and write it up"})
    for i in range(8):
        ledger.append({"key": f"no_change_{i}", "class": "constraint", "source_turn": 1,
                       "sensitivity": "safety-critical" if i < 3 else "normal",
                       "value": f"Do not change the configuration of the {SERVICES[i]} service"})
    for i in range(5):
        ledger.append({"key": f"may_read_{i}", "class": "permission", "source_turn": 1,
                       "value": f"May read the {SERVICES[i]} logs and metrics only"})
    for i in range(7):
        ledger.append({"key": f"host_{i}", "class": "fact", "source_turn": 1, "persistence": "until-replaced",
                       "value": f"web-{i:02d}", "description": f"the host running {SERVICES[i]}"})
        if i < 3:
            deltas.append({"turn": 5 + i, "op": "set", "key": f"host_{i}", "value": f"web-{i + 10:02d}"})
            rules.append({"check": "summary-phrases", "key": f"host_{i}", "require": [f"web-{i + 10:02d}"],
                          "forbid": [f"web-{i:02d}"]})
    for i in range(4):
        ledger.append({"key": f"report_{i}", "class": "completion", "source_turn": 1,
                       "value": f"The {SERVICES[i]} report is posted to INC-{5500 + i}"})
        if i < 2:
            deltas.append({"turn": 10 + i, "op": "complete", "key": f"report_{i}", "source": "tool"})
    for i in range(3):
        ledger.append({"key": f"unknown_{i}", "class": "uncertainty", "source_turn": 1,
                       "value": f"Unknown whether the {SERVICES[i]} nightly batch ran"})
    rules.append({"check": "summary-phrases", "key": "no_change_0", "require": ["do not change", "no change"]})
    assert len(ledger) == 30
    return Scenario.model_validate({"id": "bench-summary", "ledger": ledger, "deltas": deltas, "rules": rules})


FILLER = [
    "The p99 latency rose above {n} ms between 01:{m:02d} and 02:{m:02d} UTC.",
    "Cache hit ratio fell from 0.9{d} to 0.4{d} on the {s} nodes.",
    "GC pauses and CPU stayed normal on the {s} hosts during the window.",
    "The {s} database pool waited up to {n} ms per connection.",
    "We compared {n} log lines from the {s} service with the previous night.",
]


def summary_text(rng: random.Random) -> str:
    parts = []
    for i in rng.sample(range(3), 2):
        parts.append(f"Goal: find why {SERVICES[i]} slows down at night and write it up.")
    for i in rng.sample(range(8), 5):
        parts.append(rng.choice([f"Do not change the {SERVICES[i]} configuration.",
                                 f"The {SERVICES[i]} settings stay untouched.",
                                 f"Changing the {SERVICES[i]} config is fine now."]))
    for i in rng.sample(range(5), 3):
        parts.append(f"We may read the {SERVICES[i]} logs and metrics, nothing else.")
    for i in rng.sample(range(7), 5):
        host = f"web-{i + 10:02d}" if i < 3 else f"web-{i:02d}"
        parts.append(rng.choice([f"{SERVICES[i].title()} runs on {host}.",
                                 f"Host for {SERVICES[i]}: {host} (not web-{i:02d})." if i < 3 else f"Host: {host}."]))
    for i in rng.sample(range(4), 3):
        parts.append(f"The {SERVICES[i]} report is " + (f"posted to INC-{5500 + i}." if i < 2 else "not posted yet."))
    for i in rng.sample(range(3), 2):
        parts.append(f"Still unknown whether the {SERVICES[i]} nightly batch ran.")
    while len(" ".join(parts).split()) < 195:
        parts.append(rng.choice(FILLER).format(n=rng.randint(100, 999), m=rng.randint(0, 59), d=rng.randint(0, 9),
                                               s=rng.choice(SERVICES)))
    rng.shuffle(parts)
    return " ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 summaries (the full run: 1,000)")
    parser.add_argument("--summaries", type=int)
    parser.add_argument("--results", action="store_true", help="write this section of benchmarks/RESULTS.md")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from _results import quick_defaults
    quick_defaults(args, {"summaries": 200}, {"summaries": 1000})

    ledger = build_ledger(scenario())
    rng = random.Random(20240506)
    texts = [summary_text(rng) for _ in range(args.summaries)]
    words = sum(len(t.split()) for t in texts) / len(texts)

    t0 = time.perf_counter()
    from judge.text.minilm import load_embedding_model

    model = load_embedding_model("all-MiniLM-L6-v2")
    load_s = time.perf_counter() - t0

    before = ENTRY_VECTORS.computed
    auditor = SummaryAuditor(ledger, model=model)
    started = time.perf_counter()
    first = auditor.audit(texts[0], TURN)
    warm_s = time.perf_counter() - started
    started = time.perf_counter()
    audits = [auditor.audit(t, TURN) for t in texts]
    semantic_s = time.perf_counter() - started
    started = time.perf_counter()
    batched = auditor.audit_many([(t, TURN) for t in texts])
    batched_s = time.perf_counter() - started
    embedded = ENTRY_VECTORS.computed - before
    same = sum(a.model_dump() == b.model_dump() for a, b in zip(audits, batched, strict=False))

    phrase_only = SummaryAuditor(ledger)
    started = time.perf_counter()
    for t in texts:
        phrase_only.audit(t, TURN)
    phrase_s = time.perf_counter() - started

    failing = sum(not a.passed for a in audits)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load = os.getloadavg()[0]
    lines = [
        f"## {SECTION}", "",
        f"`.venv/bin/python benchmarks/bench_summary.py{' --quick' if args.quick else ''} --results`: "
        f"{'the `--quick` run' if args.quick else 'the full run'} ({args.summaries} summaries; "
        f"{'the full run: 1,000' if args.quick else '`--quick`: 200'}).",
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, load average {load:.1f} at the start of the timed runs.",
        f"{args.summaries} summaries of {words:.0f} words on average, one 30-entry ledger at turn {TURN}.", "",
        "| measure | value |", "|---|---:|",
        f"| audits per second, phrase + semantic layers (`local` model), one `audit()` at a time | "
        f"**{args.summaries / semantic_s:.1f}** |",
        f"| ms per audit, one at a time | {1000 * semantic_s / args.summaries:.1f} |",
        f"| audits per second, `audit_many()` (sentences of all summaries embedded in one batch) | "
        f"**{args.summaries / batched_s:.1f}** |",
        f"| audits with the same findings both ways | {same}/{args.summaries} |",
        f"| audits per second, phrase layer only (no model) | {args.summaries / phrase_s:.0f} |",
        f"| entry embeddings computed (once per scenario and turn) | {embedded} |",
        f"| first audit, entries embedded (warm model) | {1000 * warm_s:.0f} ms |",
        f"| model load (outside the timing) | {load_s:.1f} s |",
        f"| summaries failing the audit (generated to include lifted constraints) | {failing} |",
        f"| peak RSS | {rss_mb:.0f} MB |", "",
        "An audit embeds its summary's sentences and clauses (about 33 pieces for 200 words); the 30 "
        "entries' vectors are reused from the first audit. Since issue 16 a restated fact is also judged "
        "by the fact-consistency model, which embeds aligned spans: one summary at a time is a small "
        "batch, which is why `audit_many()` (every text of all summaries embedded once) is faster. The "
        "generated summaries repeat template sentences; nothing is cached per sentence, so the "
        "repetition does not flatter the figure.", "",
        "History: 2026-11-29, before issue 16 (the semantic layer by retrieval alone; load 1.9): 7.8 "
        "audits/s one at a time, 15.7 with `audit_many()`.",
    ]
    assert first.findings and embedded == 1, embedded
    text = "\n".join(lines) + "\n"
    print(text)
    if args.results:
        from _results import write_section
        write_section(SECTION, text.split("\n", 1)[1])


if __name__ == "__main__":
    main()
