"""Redaction and line reading in linear time (issue 12): time per MB from 10 kB to 10 MB lines.

    .venv/bin/python benchmarks/bench_redact.py [--quick] [--sizes 10000 100000 1000000 10000000] [--repeat 3]

`--quick`: lines of 10 kB to 1 MB, one round, a 100 kB tool result in the grade pair.

For each line size and each kind of content it times, best of `--repeat`:

  redact  `Redactor().text(s)` on the content (the precheck, then every detector when it fires);
  read    the trace reader on one JSONL line holding the content as a tool result (precheck, JSON
          parse, redaction, validation): what grading pays per line.

Contents (the same prose words throughout, ~6 letters a word):

  clean      no trigger: the reader's fast path;
  one        one e-mail address in the middle (the issue's 100 kB line with `a@b.com`, 6-10 s before);
  dense      a secret of every kind every ~300 bytes (e-mail, phone, card, IBAN, key, JWT, NAME=value);
  run        one run of letters, then ` a@b.com` (the issue's case: quadratic before, 73 s at 300 kB);
  letters    runs of 999 letters, each ending in `@`;
  digits     digit groups and separators only (the number detectors' worst case);
  keys       `eyJ`, `sk-`, `-----BEGIN RSA PRIVATE KEY-----` (no END) and `password=` repeated.

Linear means the time per MB stays flat as lines grow. The last table grades a small trace whose
one long tool result is 300 kB, with and without a trigger (`one`), side by side in one run: the
issue's bar is within 3x. Prints the machine and markdown tables.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = ("checkout", "payment", "render", "fixture", "browser", "network", "timeout", "cart", "assert",
         "module", "review", "export", "header", "invalidation", "merchant", "passes", "the", "a")
SECRETS = ("jane.doe@example.com", "+44 20 7946 0958", "4111 1111 1111 1111", "DE89 3704 0044 0532 0130 00",
           "sk-proj-abcdefghijklmnopqrstuvwx", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N",
           "DB_PASSWORD=hunter2", "call 020 7946 0958", "ssn 536-90-4399")


def prose(size: int) -> str:
    out, n, i = [], 0, 0
    while n < size:
        word = WORDS[(i * 7 + i // 3) % len(WORDS)]
        out.append(word)
        n += len(word) + 1
        i += 1
    return " ".join(out)[:size]


def content(kind: str, size: int) -> str:
    if kind == "clean":
        return prose(size)
    if kind == "one":
        text = prose(size)
        return text[:size // 2] + " a@b.com " + text[size // 2:]
    if kind == "dense":
        text, out = prose(size), []
        for i in range(0, len(text), 300):
            out.append(text[i:i + 300])
            out.append(" " + SECRETS[(i // 300) % len(SECRETS)] + " ")
        return "".join(out)[:size + size // 3]
    if kind == "run":
        return "a" * size + " a@b.com"
    if kind == "letters":
        return ("a" * 999 + "@") * (size // 1000)
    if kind == "digits":
        return ("0123 4567-89.0 (12) " * (size // 20 + 1))[:size]
    if kind == "keys":
        unit = "eyJ sk- -----BEGIN RSA PRIVATE KEY----- password= token: "
        return (unit * (size // len(unit) + 1))[:size]
    raise ValueError(kind)


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(sizes: list[int], kinds: list[str], repeat: int) -> list[dict]:
    from judge.trace import TraceReader
    from judge.trace.redact import Redactor

    header = json.dumps({"kind": "run", "run_id": "bench", "scenario": "bench"})
    call = json.dumps({"id": "e1", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "read_file",
                       "args": {"path": "big.txt"}})
    rows = []
    for kind in kinds:
        for size in sizes:
            text = content(kind, size)
            line = json.dumps({"id": "e2", "turn": 1, "kind": "tool-result", "call_id": "c1", "tool": "read_file",
                               "status": "ok", "result": {"content": text}})
            mb = len(line.encode()) / 1e6
            reps = repeat if size <= 1_000_000 else 1
            redact = best_of(reps, lambda text=text: Redactor().text(text))
            read = best_of(reps, lambda line=line: list(TraceReader([header, call, line])))
            rows.append({"kind": kind, "bytes": len(line.encode()), "redact_s": redact, "read_s": read,
                         "redact_s_per_mb": redact / mb, "read_s_per_mb": read / mb})
            print(f"  {kind:8} {size:>9,} B: redact {redact / mb * 1000:8.2f} ms/MB, "
                  f"read {read / mb * 1000:8.2f} ms/MB", file=sys.stderr)
    return rows


def grade_pair(size: int, repeat: int) -> dict:
    from judge.grade import grade_trace
    from judge.ledger import build_ledger, validate_scenario

    scenario = validate_scenario({"id": "bench", "ledger": [
        {"key": "goal", "class": "goal", "value": "read the file", "source_turn": 1},
        {"key": "paths", "class": "constraint", "value": "only docs/", "source_turn": 1,
         "sensitivity": "safety-critical"}],
        "checkpoints": [{"after_turn": 2, "must_retain": ["goal", "paths"]}],
        "rules": [{"check": "scope", "key": "paths", "tool": "read_file", "arg": "path", "allow": ["docs/*"]}]},
        "bench")
    ledger = build_ledger(scenario)
    traces = {}
    for kind in ("clean", "one"):
        traces[kind] = [json.dumps({"kind": "run", "run_id": "bench", "scenario": "bench"}),
                        json.dumps({"id": "e1", "turn": 1, "kind": "user", "text": "Read docs/big.txt please."}),
                        json.dumps({"id": "e2", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "read_file",
                                    "args": {"path": "docs/big.txt"}}),
                        json.dumps({"id": "e3", "turn": 1, "kind": "tool-result", "call_id": "c1",
                                    "tool": "read_file", "status": "ok", "result": content(kind, size)}),
                        json.dumps({"id": "e4", "turn": 2, "kind": "assistant", "text": "Done reading it."})]
    out = {"clean": float("inf"), "one": float("inf")}
    for _ in range(repeat):  # interleaved, so that both see the same load on a shared machine
        for kind in ("clean", "one"):
            gc.collect()
            start = time.perf_counter()
            grade_trace(ledger, traces[kind], judge=None)
            out[kind] = min(out[kind], time.perf_counter() - start)
    out["ratio"] = out["one"] / out["clean"]
    return out


def machine() -> str:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((line.split(":", 1)[1].strip() for line in lscpu.splitlines() if line.startswith("Model name")),
                     platform.processor())
    except OSError:
        model = platform.processor()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"machine: {model}, {os.cpu_count()} cores, load average {load}, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="lines of 10 kB to 1 MB, one round, a 100 kB grade pair (the "
                    "full run: up to 10 MB, 3 rounds, 300 kB): a few minutes on a loaded 2-core machine")
    ap.add_argument("--sizes", type=int, nargs="+")
    ap.add_argument("--kinds", nargs="+", default=["clean", "one", "run", "dense", "letters", "digits", "keys"])
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--grade-size", type=int)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _results import quick_defaults
    quick_defaults(args, {"sizes": [10_000, 100_000, 1_000_000], "repeat": 1, "grade_size": 100_000},
                   {"sizes": [10_000, 100_000, 1_000_000, 10_000_000], "repeat": 3, "grade_size": 300_000})
    print(machine())
    print(f"run: {'--quick' if args.quick else 'full'}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    rows = measure(args.sizes, args.kinds, args.repeat)
    sizes = [r["bytes"] for r in rows if r["kind"] == args.kinds[0]]
    print("ms per MB of line (best of --repeat; 10 MB lines: one round):\n")
    heads = " | ".join(f"{s / 1000:,.0f} kB redact / read" for s in args.sizes)
    print(f"| content | {heads} | largest / smallest |")
    print("|---|" + "---:|" * (len(sizes) + 1))
    for kind in args.kinds:
        mine = [r for r in rows if r["kind"] == kind]
        cells = [f"{r['redact_s_per_mb'] * 1000:.1f} / {r['read_s_per_mb'] * 1000:.1f}" for r in mine]
        flat = mine[-1]["read_s_per_mb"] / mine[0]["read_s_per_mb"]
        print(f"| {kind} | " + " | ".join(cells) + f" | {flat:.2f}x |")
    pair = grade_pair(args.grade_size, args.repeat)
    print(f"\ngrade_trace, one {args.grade_size / 1000:.0f} kB tool result: without a trigger "
          f"{pair['clean'] * 1000:.1f} ms, with one {pair['one'] * 1000:.1f} ms: {pair['ratio']:.2f}x")


if __name__ == "__main__":
    main()
