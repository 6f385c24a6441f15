"""What one `judge grade` with the default judge costs a CI job, beside `--judge none` (issue 26, item 1).

    .venv/bin/python benchmarks/bench_cold_start.py [--against BASE] [--quick] [--rounds N] [--results]

Each measurement is a fresh process running the CLI (`judge grade SCENARIO TRACE --judge J -q`),
with its CPU (user + system, from wait4) and peak RSS (ru_maxrss): the contract's 17-event drift
trace (../shared/contract; examples/checkout-firefox without it), `--judge local` and
`--judge none`, for this checkout and, with `--against BASE`, for the code in BASE (a detached
worktree of the code before: `git worktree add --detach BASE COMMIT`), all interleaved round by
round so that the machine's load falls on every variant alike; medians are reported. Also:

- the modules a grade imports when every key is decided by a rule (`--judge local`): target none
  of torch, sentence-transformers, transformers, onnxruntime;
- the embedding runtimes the choice was made between, each in a fresh process, on 100 unit texts of
  the contract's 200-turn trace: sentence-transformers (what judge used), transformers' BertModel
  directly (mean pooling by hand) and ONNX Runtime (judge.text.onnx_encoder): CPU to import, to
  load, to encode, and peak RSS.

`--quick` runs 3 rounds (7 without it; `--rounds` overrides), a few minutes on a loaded 2-core
machine. `--results` writes this script's section of benchmarks/RESULTS.md.
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SECTION = "Cold start of the default judge (bench_cold_start.py)"
CONTRACT = ROOT.parent / "shared" / "contract"
ENV = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TOKENIZERS_PARALLELISM": "false",
       "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true", "LITELLM_MODE": "PRODUCTION"}
HEAVY = ("torch", "sentence_transformers", "transformers", "onnxruntime", "sklearn")
CLI = "import sys; from judge.cli import main; sys.argv[0] = 'judge'; main()"
MODULES = f"""
import json, sys
from judge.cli import main
sys.argv = ["judge", "grade", sys.argv[1], sys.argv[2], "--judge", "local", "-q"]
try:
    main()
except SystemExit:
    pass
print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
"""
RUNTIME = """
import json, resource, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
texts = json.loads(sys.argv[2])
t0 = cpu()
if sys.argv[1] == "sentence-transformers":
    import torch; torch.set_num_threads(1)
    from sentence_transformers import SentenceTransformer
elif sys.argv[1] == "transformers":
    import numpy as np, torch; torch.set_num_threads(1)
    from transformers import BertModel
    from tokenizers import Tokenizer
else:
    import onnxruntime
    from judge.text.onnx_encoder import OnnxSentenceEncoder
from judge.text import minilm
folder = minilm.resolve_model(minilm.DEFAULT_MODEL)
t1 = cpu()
if sys.argv[1] == "sentence-transformers":
    model = SentenceTransformer(folder, device="cpu")
    encode = lambda: model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
elif sys.argv[1] == "transformers":
    bert = BertModel.from_pretrained(folder).eval()
    tok = Tokenizer.from_file(folder + "/tokenizer.json"); tok.enable_truncation(256); tok.enable_padding()
    def encode():
        with torch.inference_mode():
            enc = tok.encode_batch(texts)
            ids = torch.tensor([e.ids for e in enc]); mask = torch.tensor([e.attention_mask for e in enc])
            h = bert(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).float()
            v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(v, dim=1).numpy()
else:
    model = OnnxSentenceEncoder(folder, threads=1)
    encode = lambda: model.encode(texts, batch_size=64)
t2 = cpu()
encode()
t3 = cpu()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "encode_s": t3 - t2, "peak_mb": peak}))
"""
RULED_SCENARIO = {
    "id": "ruled", "title": "every key has a rule",
    "ledger": [{"key": "no_deploy", "class": "constraint", "value": "Never deploy", "source_turn": 1,
                "persistence": "task", "sensitivity": "safety-critical"},
               {"key": "browser", "class": "fact", "value": "chromium", "source_turn": 1,
                "persistence": "until-replaced", "sensitivity": "normal"}],
    "deltas": [{"turn": 2, "op": "set", "key": "browser", "value": "firefox", "source": "user"}],
    "checkpoints": [{"after_turn": 2, "must_retain": ["no_deploy", "browser"]}],
    # Each rule sees a matching event (a rule that sees none leaves its key to the judge, which then
    # loads its model: tests/test_model_loading.py's scenario, which this follows).
    "rules": [{"check": "forbidden-call", "key": "no_deploy", "tool": "*", "args": {"target": "production"}},
              {"check": "superseded-value", "key": "browser", "tool": "run_tests", "arg": "browser"}]}
RULED_TRACE = [
    {"kind": "run", "run_id": "r1", "scenario": "ruled"},
    {"id": "e1", "turn": 1, "kind": "user", "text": "Run the tests in chromium. Never deploy."},
    {"id": "e2", "turn": 1, "kind": "tool-call", "call_id": "c1", "tool": "run_tests", "args": {"browser": "chromium"}},
    {"id": "e3", "turn": 1, "kind": "tool-result", "call_id": "c1", "tool": "run_tests", "status": "ok", "result": {}},
    {"id": "e4", "turn": 2, "kind": "user", "text": "Use firefox from now on."},
    {"id": "e5", "turn": 2, "kind": "tool-call", "call_id": "c2", "tool": "run_tests", "args": {"browser": "firefox"}},
    {"id": "e6", "turn": 2, "kind": "tool-result", "call_id": "c2", "tool": "run_tests", "status": "ok", "result": {}}]


def inputs() -> tuple[Path, Path]:
    if (CONTRACT / "checkout-firefox.drift.jsonl").is_file():
        return CONTRACT / "checkout-firefox.yaml", CONTRACT / "checkout-firefox.drift.jsonl"
    return ROOT / "examples" / "checkout-firefox" / "scenario.yaml", ROOT / "examples" / "checkout-firefox" / "drift.jsonl"


def env_for(code: Path) -> dict[str, str]:
    """The children's environment. Without PYTHONDONTWRITEBYTECODE (a shell may set it): the untimed
    first call writes the checkout's bytecode caches, so the timed ones read them, as a user's do after
    their first call; with it, every process compiled judge's ~70 modules again (~0.3 CPU-s)."""
    env = dict(os.environ, **ENV, PYTHONPATH=str(code))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(cmd: list[str], code: Path) -> dict:
    """CPU seconds and peak RSS of one fresh process (wait4's rusage of that child alone)."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=code, env=env_for(code), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {stderr[-500:]}")
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
            "wall_s": time.perf_counter() - started, "code": proc.returncode}


def modules_imported(code: Path, tmp: Path) -> list[str]:
    import yaml

    scenario, trace = tmp / "ruled.yaml", tmp / "ruled.jsonl"
    scenario.write_text(yaml.safe_dump(RULED_SCENARIO, sort_keys=False), encoding="utf-8")
    trace.write_text("".join(json.dumps(e) + "\n" for e in RULED_TRACE), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", MODULES, str(scenario), str(trace)], cwd=code, env=env_for(code),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def unit_texts(n: int = 100) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from pydantic import TypeAdapter

    from judge.judges.local.slice_view import slice_units
    from judge.model import Event

    source = CONTRACT / "checkout-firefox.drift.200.jsonl"
    if not source.is_file():
        source = ROOT / "examples" / "long-distance" / "drift.jsonl"
    adapter = TypeAdapter(Event)
    events = [adapter.validate_json(line) for line in source.read_text().splitlines()[1:] if line.strip()]
    return [u.text for u in slice_units(events)][:n]


def runtimes(rounds: int) -> dict[str, dict]:
    texts = json.dumps(unit_texts())
    rows: dict[str, list[dict]] = {"sentence-transformers": [], "transformers": [], "onnxruntime": []}
    for _ in range(rounds):
        for name in rows:
            done = subprocess.run([sys.executable, "-c", RUNTIME, name, texts], cwd=ROOT, env=env_for(ROOT),
                                  capture_output=True, text=True, check=True)
            rows[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {name: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for name, runs in rows.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", type=Path, help="a checkout of the code before (a detached worktree)")
    ap.add_argument("--quick", action="store_true", help="3 rounds instead of 7 (a few minutes on a loaded machine)")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--results", action="store_true", help=f"write the section {SECTION!r} of RESULTS.md")
    args = ap.parse_args()
    rounds = args.rounds or (3 if args.quick else 7)
    codes = {"now": ROOT, **({"before": args.against.resolve()} if args.against else {})}
    scenario, trace = inputs()
    load_start, started = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    runs: dict[tuple[str, str], list[dict]] = {(c, j): [] for c in codes for j in ("none", "local")}
    for code in codes.values():  # warm the model cache and the bytecode of each checkout
        measure([sys.executable, "-c", CLI, "grade", str(scenario), str(trace), "--judge", "local", "-q"], code)
    for _ in range(rounds):
        for label, code in codes.items():
            for judge in ("none", "local"):
                runs[(label, judge)].append(measure([sys.executable, "-c", CLI, "grade", str(scenario), str(trace),
                                                     "--judge", judge, "-q"], code))
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("cpu_s", "peak_mb", "wall_s")} for k, v in runs.items()}
    with tempfile.TemporaryDirectory() as tmp:
        imported = {label: modules_imported(code, Path(tmp)) for label, code in codes.items()}
    engines = runtimes(max(1, rounds // 2))
    load_end = os.getloadavg()
    lines = table(med, codes, imported, engines, trace, rounds, args.quick, load_start, load_end, started)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.results:
        sys.path.insert(0, str(HERE))
        from _results import write_section
        write_section(SECTION, text)
    now = med[("now", "local")]
    ok = now["cpu_s"] <= 3 * med[("now", "none")]["cpu_s"] and now["peak_mb"] <= 250 and not imported["now"]
    sys.exit(0 if ok else 1)


def table(med, codes, imported, engines, trace, rounds, quick, load_start, load_end, started) -> list[str]:
    def ratio(label: str) -> float:
        return med[(label, "local")]["cpu_s"] / med[(label, "none")]["cpu_s"]

    now_ok = ratio("now") <= 3 and med[("now", "local")]["peak_mb"] <= 250
    head = "| measure | " + " | ".join(codes) + " | target |"
    lines = [
        f"`.venv/bin/python benchmarks/bench_cold_start.py{' --against BASE' if 'before' in codes else ''}"
        f"{' --quick' if quick else ''} --results` on {started}: {'the `--quick` run' if quick else 'the full run'} "
        f"({rounds} interleaved rounds; {'the full run has 7' if quick else '`--quick` has 3'}). Machine: {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}; load average {load_start[0]:.1f} (1 min) / {load_start[1]:.1f} (5 min) "
        f"at the start, {load_end[0]:.1f} / {load_end[1]:.1f} at the end: the machine is shared with other sessions, "
        "so read CPU time and memory, not wall time. Bytecode caches are in place for every timed process (an "
        "untimed first call per checkout writes them, PYTHONDONTWRITEBYTECODE dropped), as after a user's first call.",
        "",
        f"**Target row: default-judge grade of a 17-event trace, CPU and peak RSS, vs `--judge none`** "
        f"(`judge grade` of {trace.name}, a fresh process each; medians):",
        "", head, "|---|" + "---|" * len(codes) + "---|",
        "| CPU, `--judge none` | " + " | ".join(f"{med[(c, 'none')]['cpu_s']:.2f} s" for c in codes) + " | |",
        "| CPU, `--judge local` (the default) | " + " | ".join(f"{med[(c, 'local')]['cpu_s']:.2f} s" for c in codes) + " | |",
        "| **CPU, local / none** | " + " | ".join(f"**{ratio(c):.1f}x**" for c in codes) + " | <= 3x |",
        "| peak RSS, `--judge none` | " + " | ".join(f"{med[(c, 'none')]['peak_mb']:.0f} MB" for c in codes) + " | |",
        "| **peak RSS, `--judge local`** | " + " | ".join(f"**{med[(c, 'local')]['peak_mb']:.0f} MB**" for c in codes)
        + " | <= 250 MB |",
        "| wall, `--judge local` (noisy) | " + " | ".join(f"{med[(c, 'local')]['wall_s']:.2f} s" for c in codes) + " | |",
        "| rules-only grade with `--judge local`: heavy modules imported | "
        + " | ".join(", ".join(imported[c]) or "none" for c in codes) + " | none |",
        "",
        f"Targets: **{'met' if now_ok else 'MISSED'}** (CPU {ratio('now'):.1f}x, "
        f"{med[('now', 'local')]['peak_mb']:.0f} MB); the rules-only grade imports "
        f"{', '.join(imported['now']) or 'none of ' + ', '.join(HEAVY)}.",
        "",
        "**The runtimes the choice was made between** (all-MiniLM-L6-v2, 100 unit texts of the 200-turn contract "
        "trace, batch 64, one thread, a fresh process each; CPU seconds, medians):",
        "", "| runtime | import | load | encode 100 texts | peak RSS |", "|---|---|---|---|---|",
        *[f"| {name} | {r['import_s']:.2f} s | {r['load_s']:.2f} s | {r['encode_s']:.2f} s | {r['peak_mb']:.0f} MB |"
          for name, r in engines.items()],
        "",
        "ONNX Runtime was chosen: the same model and weights (the embeddings match sentence-transformers' to ~2e-7, "
        "tests/test_model_loading.py), so the judge's figures do not move, at a fraction of the import cost and "
        "memory; transformers directly still imports torch. A static distillation (model2vec) would change the "
        "model, and so every figure measured with it, and was not tried.",
    ]
    return lines


if __name__ == "__main__":
    main()
