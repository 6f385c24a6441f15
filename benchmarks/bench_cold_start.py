"""What a CI call pays to start: the CLI itself, a rules-only grade and the default judge's (issues 26, 41).

    .venv/bin/python benchmarks/bench_cold_start.py [--against BASE [--against-python BASE_VENV/bin/python]] [--quick]
        [--rounds N] [--results] [--runtimes]

Each measurement is a fresh process, with its CPU (user + system, from wait4) and peak RSS
(ru_maxrss), for this checkout and, with `--against BASE`, for the code in BASE (a detached worktree
of the code before: `git worktree add --detach BASE COMMIT`), all interleaved round by round so that
the machine's load falls on every variant alike; medians are reported:

- `judge --version` and `judge --help` (the CLI's own start);
- `judge grade examples/checkout-firefox/scenario.yaml examples/checkout-firefox/clean.jsonl -q --no-log`
  (a clean run of 21 events: the issue's "20-event grade") with `--judge none` and with the
  default judge (`local`, the offline MiniLM judge), and the ratio of the two (issue 41: <= 0.35
  CPU-s and <= 40 MB with `--judge none`, the default judge <= 2x that);
- the modules a grade imports when every key is decided by a rule (`--judge local`): target none
  of torch, sentence-transformers, transformers, onnxruntime, sklearn; and the modules a rules-only
  grade (`--judge none -q`) imports that it does not use (prompt models, LLM clients, numpy, a web
  framework, rich, the other commands).

With `--runtimes`, also the embedding runtimes the offline judge's choice was made between (issue
26), each in a fresh process, on 100 unit texts: sentence-transformers, transformers' BertModel
directly and ONNX Runtime (judge.text.onnx_encoder): CPU to import, to load, to encode, peak RSS.

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
EXAMPLE = Path("examples") / "checkout-firefox"
SCENARIO, TRACE = EXAMPLE / "scenario.yaml", EXAMPLE / "clean.jsonl"
ENV = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TOKENIZERS_PARALLELISM": "false",
       "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true", "LITELLM_MODE": "PRODUCTION"}
HEAVY = ("torch", "sentence_transformers", "transformers", "onnxruntime", "sklearn")
UNUSED = ("judge.prompts", "judge.suite", "judge.summaries.audit", "judge.service", "judge.draft", "rich", "click",
          "litellm", "instructor", "openai", "httpx", "numpy", "onnxruntime", "fastapi", "jinja2", "asyncio")
CLI = "import sys; from judge.cli import main; sys.argv[0] = 'judge'; main()"
GRADE = ["grade", str(SCENARIO), str(TRACE), "-q", "--no-log"]
VARIANTS = {  # label -> the CLI's arguments
    "version": ["--version"],
    "help": ["--help"],
    "none": [*GRADE, "--judge", "none"],
    "local": [*GRADE, "--judge", "local"],
}
MODULES = """
import json, sys
from judge.cli import main
names = json.loads(sys.argv[1])
sys.argv = ["judge", *sys.argv[2:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps([n for n in names if any(m == n or m.startswith(n + ".") for m in sys.modules)]))
"""
COMPILED = "import judge, judge.compiled as c; f = c.install(); f and f._check(); print(f.reason if f else 'not installed')"
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


def env_for(code: Path) -> dict[str, str]:
    """The children's environment. Without PYTHONDONTWRITEBYTECODE (a shell may set it): the untimed
    first call writes the checkout's bytecode caches, so the timed ones read them, as a user's do after
    their first call; with it, every process compiled judge's ~70 modules again (~0.3 CPU-s)."""
    env = dict(os.environ, **ENV, PYTHONPATH=str(code))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


PYTHONS: dict[Path, str] = {}  # checkout -> the interpreter that runs it (--against-python), else this one


def python_for(code: Path) -> str:
    return PYTHONS.get(code, sys.executable)


def measure(args: list[str], code: Path) -> dict:
    """CPU seconds and peak RSS of one fresh `judge ARGS` process (wait4's rusage of that child alone)."""
    started = time.perf_counter()
    proc = subprocess.Popen([python_for(code), "-c", CLI, *args], cwd=code, env=env_for(code),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"judge {' '.join(args)} exited {proc.returncode}: {stderr[-500:]}")
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
            "wall_s": time.perf_counter() - started, "code": proc.returncode}


def modules_imported(code: Path, names: tuple[str, ...], args: list[str]) -> list[str]:
    done = subprocess.run([python_for(code), "-c", MODULES, json.dumps(names), *args], cwd=code, env=env_for(code),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def ruled_grade_imports(code: Path, tmp: Path) -> list[str]:
    import yaml

    scenario, trace = tmp / "ruled.yaml", tmp / "ruled.jsonl"
    scenario.write_text(yaml.safe_dump(RULED_SCENARIO, sort_keys=False), encoding="utf-8")
    trace.write_text("".join(json.dumps(e) + "\n" for e in RULED_TRACE), encoding="utf-8")
    return modules_imported(code, HEAVY, ["grade", str(scenario), str(trace), "--judge", "local", "-q", "--no-log"])


def compiled_state(code: Path) -> str:
    done = subprocess.run([python_for(code), "-c", COMPILED], cwd=code, env=env_for(code), capture_output=True,
                          text=True, check=True)
    return done.stdout.strip()


def unit_texts(n: int = 100) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from pydantic import TypeAdapter

    from judge.judges.local.slice_view import slice_units
    from judge.model import Event

    source = ROOT.parent / "shared" / "contract" / "checkout-firefox.drift.200.jsonl"
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


def commit_of(code: Path) -> str:
    done = subprocess.run(["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(code), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return (done.stdout.strip() or "?") + (" with uncommitted changes" if dirty else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", type=Path, help="a checkout of the code before (a detached worktree)")
    ap.add_argument("--against-python", type=Path,
                    help="the interpreter of a virtual environment whose compiled modules are BASE's (its own "
                         "`scripts/build_compiled.py` run); default: this one, where BASE runs as pure Python "
                         "wherever its compiled modules' sources differ from this checkout's")
    ap.add_argument("--quick", action="store_true", help="3 rounds instead of 7 (a few minutes on a loaded machine)")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--runtimes", action="store_true", help="also compare the embedding runtimes (issue 26)")
    ap.add_argument("--results", action="store_true", help=f"write the section {SECTION!r} of RESULTS.md")
    args = ap.parse_args()
    rounds = args.rounds or (3 if args.quick else 7)
    codes = {"now": ROOT, **({"before": args.against.resolve()} if args.against else {})}
    if args.against and args.against_python:
        PYTHONS[args.against.resolve()] = str(args.against_python)
    load_start, started = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    runs: dict[tuple[str, str], list[dict]] = {(c, v): [] for c in codes for v in VARIANTS}
    for code in codes.values():  # warm the model cache and the bytecode of each checkout
        for variant in VARIANTS.values():
            measure(variant, code)
    for _ in range(rounds):
        for label, code in codes.items():
            for variant, cli_args in VARIANTS.items():
                runs[(label, variant)].append(measure(cli_args, code))
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("cpu_s", "peak_mb", "wall_s")} for k, v in runs.items()}
    with tempfile.TemporaryDirectory() as tmp:
        heavy = {label: ruled_grade_imports(code, Path(tmp)) for label, code in codes.items()}
    unused = {label: modules_imported(code, UNUSED, VARIANTS["none"]) for label, code in codes.items()}
    compiled = {label: compiled_state(code) for label, code in codes.items()}
    commits = {label: commit_of(code) for label, code in codes.items()}
    engines = runtimes(max(1, rounds // 2)) if args.runtimes else None
    load_end = os.getloadavg()
    lines = table(med, codes, heavy, unused, compiled, commits, engines, rounds, args.quick, load_start, load_end,
                  started)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.results:
        sys.path.insert(0, str(HERE))
        from _results import write_section
        write_section(SECTION, text)
    sys.exit(0 if targets_met(med) and not heavy["now"] else 1)


def targets_met(med: dict) -> bool:
    none, local = med[("now", "none")], med[("now", "local")]
    return none["cpu_s"] <= 0.35 and none["peak_mb"] <= 40 and local["cpu_s"] <= 2 * none["cpu_s"]


def table(med, codes, heavy, unused, compiled, commits, engines, rounds, quick, load_start, load_end,
          started) -> list[str]:
    def cell(label: str, variant: str, what: str) -> str:
        value = med[(label, variant)][what]
        return f"{value:.2f} s" if what.endswith("_s") else f"{value:.0f} MB"

    def ratio(label: str) -> float:
        return med[(label, "local")]["cpu_s"] / med[(label, "none")]["cpu_s"]

    def row(name: str, variant: str, what: str, target: str = "", bold: bool = False) -> str:
        cells = [cell(c, variant, what) for c in codes]
        cells = [f"**{c}**" for c in cells] if bold else cells
        return f"| {name} | " + " | ".join(cells) + f" | {target} |"

    head = "| measure | " + " | ".join(codes) + " | target |"
    rule = "|---|" + "---|" * len(codes) + "---|"
    lines = [
        f"`.venv/bin/python benchmarks/bench_cold_start.py{' --against BASE' if 'before' in codes else ''}"
        f"{' --against-python BASE_VENV/bin/python' if PYTHONS else ''}"
        f"{' --quick' if quick else ''} --results` on {started}: {'the `--quick` run' if quick else 'the full run'} "
        f"({rounds} interleaved rounds; {'the full run has 7' if quick else '`--quick` has 3'}); now is "
        f"{commits['now']}" + (f", before (BASE) {commits['before']}" if "before" in codes else "") + ". "
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load average "
        f"{load_start[0]:.1f} (1 min) / {load_start[1]:.1f} (5 min) at the start, {load_end[0]:.1f} / "
        f"{load_end[1]:.1f} at the end: the machine is shared with other sessions, so read CPU time and memory, "
        "not wall time. Bytecode caches are in place for every timed process (an untimed first call per "
        "checkout and command writes them, PYTHONDONTWRITEBYTECODE dropped), as after a user's first call; "
        "compiled modules (judge.compiled): " + "; ".join(f"{c} {compiled[c]}" for c in codes) + ".",
        "",
        f"**Issue 41 target rows** (`judge grade {SCENARIO} {TRACE} -q --no-log`, a clean run of 21 events, and "
        "the CLI alone; a fresh process each; medians of CPU seconds and peak RSS):",
        "", head, rule,
        row("`judge --version`: CPU", "version", "cpu_s"),
        row("`judge --version`: peak RSS", "version", "peak_mb"),
        row("`judge --help`: CPU", "help", "cpu_s"),
        row("`judge --help`: peak RSS", "help", "peak_mb"),
        row("grade `--judge none`: CPU", "none", "cpu_s", "<= 0.35 s", bold=True),
        row("grade `--judge none`: peak RSS", "none", "peak_mb", "<= 40 MB", bold=True),
        row("grade, the default judge (`local`): CPU", "local", "cpu_s"),
        row("grade, the default judge (`local`): peak RSS", "local", "peak_mb"),
        "| **CPU, default judge / `--judge none`** | " + " | ".join(f"**{ratio(c):.1f}x**" for c in codes)
        + " | <= 2x |",
        row("wall, `--judge none` (noisy)", "none", "wall_s"),
        row("wall, default judge (noisy)", "local", "wall_s"),
        "| rules-only grade (`--judge none -q`): modules it does not use, imported | "
        + " | ".join(", ".join(unused[c]) or "none" for c in codes) + " | none |",
        "| grade whose every key a rule decides (`--judge local`): model runtimes imported | "
        + " | ".join(", ".join(heavy[c]) or "none" for c in codes) + " | none |",
        "",
        f"Targets: **{'met' if targets_met(med) else 'MISSED'}** (`--judge none` "
        f"{med[('now', 'none')]['cpu_s']:.2f} CPU-s, {med[('now', 'none')]['peak_mb']:.0f} MB; the default judge "
        f"{ratio('now'):.1f}x).",
    ]
    if engines:
        lines += [
            "",
            "**The runtimes the choice was made between** (all-MiniLM-L6-v2, 100 unit texts of the 200-turn "
            "contract trace, batch 64, one thread, a fresh process each; CPU seconds, medians):",
            "", "| runtime | import | load | encode 100 texts | peak RSS |", "|---|---|---|---|---|",
            *[f"| {name} | {r['import_s']:.2f} s | {r['load_s']:.2f} s | {r['encode_s']:.2f} s | {r['peak_mb']:.0f} MB |"
              for name, r in engines.items()],
        ]
    return lines


if __name__ == "__main__":
    main()
