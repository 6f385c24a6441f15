"""Import speed and memory (issue 6).

    .venv/bin/python benchmarks/bench_import.py [--quick] [--data ../shared/data] [--repeat 5] [--json OUT]

`--quick`: 2 rounds of the tau-bench import and OTLP files of 50 and 500 traces (and the one-trace
file as large as the 500-trace one), instead of 5 rounds and 50 / 500 / 2000 traces.

1. **tau-bench**: `import_openai` of the 200 airline trajectories (4.1 MB, one JSON list) into a
   temporary folder, best and median of `--repeat` runs, in this process. Target: under 5 s.
2. **OTLP memory**: synthetic collector-style OTLP/JSONL exports (one batch per line, written as spans
   end, so a trace's root span comes last) of 50, 500 and 2000 traces of the same shape (an
   `invoke_agent` root, 12 chat spans each resending the growing history, 12 tool spans), imported
   with `import_otel` in a fresh subprocess each, which reports its peak RSS (VmHWM) and its RSS
   after the imports alone. One more file holds a single trace as large as the whole 500-trace file,
   for comparison. Target: peak memory bounded by one trace, not by the file: flat across 50-2000
   traces while the file grows 40x.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STEPS = 12
T0 = 1_700_000_000_000_000_000


def _kv(attrs: dict) -> list[dict]:
    out = []
    for k, v in attrs.items():
        if isinstance(v, int):
            out.append({"key": k, "value": {"intValue": str(v)}})
        else:
            out.append({"key": k, "value": {"stringValue": v if isinstance(v, str) else json.dumps(v)}})
    return out


def _span(trace: str, sid: str, parent: str | None, name: str, start: int, end: int, attrs: dict) -> dict:
    span = {"traceId": trace, "spanId": sid, "name": name, "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end), "attributes": _kv(attrs), "status": {}}
    if parent:
        span["parentSpanId"] = parent
    return span


def trace_batches(n: int, steps: int = STEPS, pad: int = 400) -> list[dict]:
    """One agent conversation as collector batches: each step's chat and tool span, then the root."""
    trace = f"{n + 1:032x}"
    root = f"{(n << 8) + 1:016x}"
    t = T0 + n * 10**12
    history = [{"role": "user", "parts": [{"type": "text", "content": f"Task {n}: " + "x" * pad}]}]
    batches = []
    for i in range(steps):
        call = f"call_{n}_{i}"
        out = {"role": "assistant", "parts": [{"type": "tool_call", "id": call, "name": "search",
                                               "arguments": {"q": f"step {i} " + "y" * 40}}]}
        chat = _span(trace, f"{(n << 8) + 2 + 2 * i:016x}", root, "chat gpt-4o", t + i * 10**9, t + i * 10**9 + 4 * 10**8,
                     {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                      "gen_ai.input.messages": history, "gen_ai.output.messages": [out],
                      "gen_ai.usage.input_tokens": 100 + i, "gen_ai.usage.output_tokens": 20})
        result = "z" * pad
        tool = _span(trace, f"{(n << 8) + 3 + 2 * i:016x}", root, "execute_tool search",
                     t + i * 10**9 + 5 * 10**8, t + i * 10**9 + 9 * 10**8,
                     {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
                      "gen_ai.tool.call.id": call, "gen_ai.tool.call.result": result})
        history = history + [out, {"role": "tool", "parts": [{"type": "tool_call_response", "id": call,
                                                              "response": result}]}]
        batches.append({"resourceSpans": [{"resource": {"attributes": _kv({"service.name": "bench"})},
                                           "scopeSpans": [{"spans": [chat, tool]}]}]})
    root_span = _span(trace, root, None, "invoke_agent bench", t, t + steps * 10**9,
                      {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bench"})
    batches.append({"resourceSpans": [{"resource": {"attributes": _kv({"service.name": "bench"})},
                                       "scopeSpans": [{"spans": [root_span]}]}]})
    return batches


def write_otlp(path: Path, traces: int, steps: int = STEPS) -> int:
    with path.open("w", encoding="utf-8") as handle:
        for n in range(traces):
            for batch in trace_batches(n, steps):
                handle.write(json.dumps(batch) + "\n")
    return path.stat().st_size


_CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from judge.trace.otel import import_otel
def rss(field):
    for line in open('/proc/self/status'):
        if line.startswith(field):
            return int(line.split()[1]) / 1024
before = rss('VmHWM')
t = time.perf_counter()
summary = import_otel({src!r}, {out!r}, scenario='bench')
print(json.dumps({{"seconds": time.perf_counter() - t, "runs": summary.runs,
                   "events": sum(summary.events.values()), "peak_mb": rss('VmHWM'), "start_mb": before}}))
"""


def otlp_memory(workdir: Path, counts: tuple[int, ...] = (50, 500, 2000)) -> list[dict]:
    rows = []
    cases = [(f"{n} traces", n, STEPS) for n in counts]
    for label, traces, steps in cases:
        src = workdir / f"otlp-{traces}.jsonl"
        size = write_otlp(src, traces, steps)
        rows.append(_measure(label, src, size, workdir))
        src.unlink()
    # one trace as large as the 500-trace file: a conversation of many more steps
    big = workdir / "otlp-one-big.jsonl"
    target = rows[1]["file_mb"] * 1024 * 1024
    steps = STEPS
    while True:
        size = write_otlp(big, 1, steps)
        if size >= target or steps > 4000:
            break
        steps = int(steps * max(1.2, (target / size) ** 0.5))
    rows.append(_measure(f"1 trace, {steps} steps", big, size, workdir))
    return rows


def _measure(label: str, src: Path, size: int, workdir: Path) -> dict:
    out = workdir / f"out-{src.stem}"
    code = _CHILD.format(root=str(ROOT), src=str(src), out=str(out))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"case": label, "file_mb": round(size / 2**20, 1), "runs": row["runs"], "events": row["events"],
            "seconds": round(row["seconds"], 2), "peak_rss_mb": round(row["peak_mb"], 1),
            "rss_before_import_mb": round(row["start_mb"], 1)}


def tau_import(data: Path, repeat: int, workdir: Path) -> dict:
    from judge.trace.openai_import import import_openai

    source = data / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
    times = []
    for i in range(repeat):
        t = time.perf_counter()
        summary = import_openai(source, workdir / f"tau-{i}", scenario="tau-airline-{task_id}")
        times.append(time.perf_counter() - t)
    return {"runs": summary.runs, "events": dict(summary.events), "best_s": round(min(times), 3),
            "median_s": round(statistics.median(times), 3), "target_s": 5.0, "met": max(times) < 5.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--quick", action="store_true", help="2 tau-bench rounds and 50 / 500 OTLP traces (the full "
                    "run: 5 rounds and 50 / 500 / 2000), a few minutes on a loaded 2-core machine")
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _results import quick_defaults
    quick_defaults(args, {"repeat": 2}, {"repeat": 5})
    result = {"run": "--quick" if args.quick else "full",
              "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load_avg": os.getloadavg()}}
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        result["tau_bench"] = tau_import(args.data, args.repeat, Path(tmp))
        result["otlp_memory"] = otlp_memory(Path(tmp), (50, 500) if args.quick else (50, 500, 2000))
    text = json.dumps(result, indent=1)
    if args.json:
        args.json.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
