"""Benchmark 10d: the offline `local` judge (all-MiniLM-L6-v2 on the CPU, on ONNX Runtime).

Measures
- embedding throughput, sentences/s at batch 64, on the unit texts of the contract's 200-turn trace,
  at 1 and 2 threads (ONNX Runtime's, for the bundled model) side by side in one run (rounds alternate the thread
  counts, so the
  machine's load falls on both alike); the judge's default on this machine is named;
- cold start: a fresh Python process, from spawn to its first embedding (model cache warm), with
  the split import / load / first encode as seen inside the process;
- time per checkpoint judgement on checkout-firefox.drift.200.jsonl: the scenario's checkpoints
  (after turns 3, 5, 7), one implicit final checkpoint over turns 8-200, and a checkpoint every
  10 turns (all ledger keys asked each time);
- peak RSS of this process.

Wall-clock rates are next to CPU-time ones: on a loaded machine the process gets a fraction of a
core, and only the CPU figures compare across loads.

The figures depend on the machine's load: the 1-minute load average is recorded with them, and
best-of-N figures are reported next to medians (other processes can only slow a run down).

Usage: python benchmarks/bench_local_judge.py [--quick] [--json OUT] [--repeats N] [--threads 1,2]

`--quick`: 1 repeat, 2 thread rounds, 256 sentences (a few minutes on a loaded 2-core machine); the
full run: 3 repeats, 5 thread rounds, 1,024 sentences.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
ENV = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TOKENIZERS_PARALLELISM": "false"}
os.environ.update(ENV)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import yaml  # noqa: E402
from test_embedding_judge import CONTRACT_DIRS, SCENARIO, contract_requests, ledger_at, read_events  # noqa: E402

from judge.judges.base import JudgeRequest  # noqa: E402
from judge.judges.local.judge import EmbeddingJudge  # noqa: E402
from judge.judges.local.slice_view import slice_units  # noqa: E402
from judge.text import minilm  # noqa: E402

TRACE = "checkout-firefox.drift.200.jsonl"
COLD_START = """
import time
t0 = time.perf_counter()
from judge.text.minilm import load_embedding_model
t1 = time.perf_counter()
model = load_embedding_model()
t2 = time.perf_counter()
model.encode(["The checkout test passes."], normalize_embeddings=True)
t3 = time.perf_counter()
print(f"{t1 - t0} {t2 - t1} {t3 - t2}")
"""


def contract_path(name: str) -> Path:
    for folder in CONTRACT_DIRS:
        if (folder / name).is_file():
            return folder / name
    raise SystemExit(f"{name} not found in {', '.join(map(str, CONTRACT_DIRS))}")


def throughput(judge: EmbeddingJudge, texts: list[str], repeats: int) -> dict:
    judge._encode(texts[:64])  # warm up
    rates, cpu_rates = [], []
    for _ in range(repeats):
        started, cpu = time.perf_counter(), time.process_time()
        judge._encode(texts)
        rates.append(len(texts) / (time.perf_counter() - started))
        cpu_rates.append(len(texts) / (time.process_time() - cpu))
    return {"sentences": len(texts), "batch": 64, "sentences_per_s_best": round(max(rates)),
            "sentences_per_s_median": round(statistics.median(rates)),
            "sentences_per_cpu_s_median": round(statistics.median(cpu_rates)),
            "runs": [round(rate) for rate in rates]}


def throughput_by_threads(texts: list[str], threads: list[int], repeats: int) -> dict:
    """Sentences/s at each thread count (the model's runtime threads, judge.text.minilm), the counts
    alternating round by round."""
    models = {}
    for n in threads:
        minilm.set_torch_threads(n)
        models[n] = minilm.load_embedding_model()
    minilm.set_torch_threads(None)
    rates: dict[int, list[float]] = {n: [] for n in threads}
    for _ in range(repeats):
        for n in threads:
            models[n].encode(texts[:64], batch_size=64)  # warm up
            started = time.perf_counter()
            models[n].encode(texts, batch_size=64)
            rates[n].append(len(texts) / (time.perf_counter() - started))
    out = {str(n): {"sentences_per_s_best": round(max(r)), "sentences_per_s_median": round(statistics.median(r)),
                    "runs": [round(x) for x in r]} for n, r in rates.items()}
    base = statistics.median(rates[threads[0]])
    for n in threads[1:]:
        out[str(n)]["median_vs_first"] = round(statistics.median(rates[n]) / base, 2)
    return out


def cold_start(repeats: int) -> dict:
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", COLD_START], capture_output=True, text=True,
                              env={**os.environ, **ENV}, cwd=ROOT, check=True)
        total = time.perf_counter() - started
        imported, loaded, first = map(float, done.stdout.split())
        runs.append({"total_s": total, "import_loader_s": imported,
                     "verify_and_load_s": loaded, "first_encode_s": first})
    best = min(runs, key=lambda run: run["total_s"])
    return {"best": {key: round(value, 2) for key, value in best.items()},
            "median_total_s": round(statistics.median(run["total_s"] for run in runs), 2)}


def checkpoint_requests(trace: Path) -> dict[str, list[JudgeRequest]]:
    scenario = yaml.safe_load(contract_path(SCENARIO).read_text())
    events = read_events(trace)
    keys = tuple(entry["key"] for entry in scenario["ledger"])
    last = max(event.turn for event in events)

    def request(after: int, since: int) -> JudgeRequest:
        return JudgeRequest(scenario_id=scenario["id"], run_id=trace.stem, after_turn=after,
                            from_turn=since + 1, keys=keys, ledger=ledger_at(scenario, after),
                            events=tuple(e for e in events if since < e.turn <= after))

    return {
        "scenario checkpoints (3, 5, 7)": contract_requests(trace),
        "final implicit checkpoint (turns 8-200)": [request(last, 7)],
        "every 10 turns (20 checkpoints)": [request(after, after - 10)
                                            for after in range(10, last + 1, 10)],
    }


def time_checkpoints(judge: EmbeddingJudge, requests: list[JudgeRequest], repeats: int) -> dict:
    per_request, per_request_cpu = [], []
    for request in requests:
        times, cpus = [], []
        for _ in range(repeats):
            started, cpu = time.perf_counter(), time.process_time()
            judge.judge_sync(request)
            times.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
        per_request.append(min(times))  # best of N: other processes only ever slow it down
        per_request_cpu.append(min(cpus))
    units = [len(slice_units(request.events)) for request in requests]
    return {"checkpoints": len(requests), "keys_per_checkpoint": len(requests[0].keys),
            "events_per_checkpoint": round(statistics.mean(len(r.events) for r in requests), 1),
            "units_per_checkpoint": round(statistics.mean(units), 1),
            "ms_per_checkpoint_median": round(1000 * statistics.median(per_request), 1),
            "ms_per_checkpoint_max": round(1000 * max(per_request), 1),
            "ms_total": round(1000 * sum(per_request), 1),
            "cpu_ms_per_checkpoint_median": round(1000 * statistics.median(per_request_cpu), 1),
            "cpu_ms_total": round(1000 * sum(per_request_cpu), 1)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--quick", action="store_true", help="1 repeat, 2 thread rounds and 256 sentences (the full "
                        "run: 3 repeats, 5 rounds, 1,024 sentences): a few minutes on a loaded 2-core machine")
    parser.add_argument("--repeats", type=int)
    parser.add_argument("--threads", default="1,2", help="thread counts to compare")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _results import quick_defaults
    quick_defaults(args, {"repeats": 1}, {"repeats": 3})
    sentences, rounds = (256, 2) if args.quick else (1024, max(args.repeats, 5))
    load_before = os.getloadavg()[0]
    trace = contract_path(TRACE)
    judge = EmbeddingJudge(SimpleNamespace(model="all-MiniLM-L6-v2"))
    started = time.perf_counter()
    judge.load()
    figures: dict = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                 "load_1min_before": round(load_before, 2)},
                     "judge": judge.fingerprint(),
                     "load_in_process_s": round(time.perf_counter() - started, 2)}
    texts = [unit.text for unit in slice_units(read_events(trace))]
    figures["machine"]["default_torch_threads"] = minilm.torch_threads()
    figures["run"] = "--quick" if args.quick else "full"
    figures["throughput_by_threads"] = throughput_by_threads(
        (texts * 3)[:sentences], [int(n) for n in args.threads.split(",")], rounds)
    figures["throughput"] = throughput(judge, (texts * 3)[:sentences], args.repeats)
    figures["cold_start"] = cold_start(args.repeats)
    figures["checkpoints"] = {name: time_checkpoints(judge, requests, args.repeats)
                              for name, requests in checkpoint_requests(trace).items()}
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    figures["machine"]["load_1min_after"] = round(os.getloadavg()[0], 2)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    main()
