"""What one `judge grade` with an llm judge costs over `--judge none`, beside the code before (issue 41).

Run through `benchmarks/bench_llm_against.py --overhead [--against BASE [--against-python BASE_VENV/bin/python]]
[--quick] [--rounds N] [--results]`.

Each measurement is a fresh process running the CLI, `judge grade SCENARIO TRACE --judge J -q
--no-log --json OUT`, with its CPU (user + system) and peak RSS from wait4: J is an llm judge
(`openai/gpt-4o-mini`, mode tools, the direct client, priced from the price table) against the
scripted OpenAI-compatible server (tests/llm_server.py, its own process on 127.0.0.1, answering at
once) with a fresh verdict cache, so every request is sent; and `--judge none`. The overhead is the
difference, per checkout: what a CI call pays for asking the judge, imports included. Traces: the
contract's 17-event drift (3 requests; the grade the issue's "20 events" row uses) and, in the full
run, its 200-turn drift (15 requests, the issue's figure). Checkouts, judges and traces interleave
round by round; medians. The reports of `now` and `before` must be the same JSON, and one extra grade
per checkout says which LLM client libraries it imported.
"""

from __future__ import annotations

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
TITLE = "LLM judge call overhead against the code before (issue 41, bench_llm_against.py --overhead)"
CONTRACT = ROOT.parent / "shared" / "contract"
SCENARIO = CONTRACT / "checkout-firefox.yaml"
TRACES = {"17-event drift": CONTRACT / "checkout-firefox.drift.jsonl",
          "200-turn drift": CONTRACT / "checkout-firefox.drift.200.jsonl"}
MODEL = "openai/gpt-4o-mini"
JUDGES = ("gpt", "gpt-warm", "none")  # gpt-warm: see `grade`
LIBS = ("litellm", "instructor", "openai", "tiktoken", "httpx")
ENV = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
       "LITELLM_OFFLINE_MODE": "true", "LITELLM_MODE": "PRODUCTION", "BENCH_KEY": "sk-bench-not-a-secret"}
CLI = "import sys; from judge.cli import main; sys.argv[0] = 'judge'; main()"
# Where the overhead goes: each part alone in a fresh process of `now` (the first row is the interpreter's own cost)
PARTS = {"the interpreter alone": "pass",
         "tiktoken's o200k_base encoding, loaded (judge.judges.tokens)": "from judge.judges import tokens; tokens._encoding()",
         "the price table, read (judge.judges.prices)": "from judge.judges import prices; prices.table()",
         "the calibration record lookup's imports (calibration.lookup; calibration.store loads a matching record)":
             "import calibration.lookup",
         "the HTTP client (httpx, h2)": "import httpx, h2.connection",
         "the LLM judge's modules (judge.judges.llm: prompts, schema, client)": "import judge.judges.llm",
         "litellm (the code before imported it; the litellm and instructor paths still do)":
             "from judge.judges.libs import litellm_lib; litellm_lib()"}
IMPORTS = (f"import atexit, json, sys\natexit.register(lambda: print('IMPORTED', json.dumps("
           f"[m for m in {LIBS!r} if m in sys.modules])))\n{CLI}")


def env_for(code: Path, cache: Path) -> dict[str, str]:
    """The children's environment: the checkout first on the path, its own fresh verdict cache, and
    bytecode caches written (the untimed first grade writes them, as a user's first call does)."""
    env = dict(os.environ, **ENV, PYTHONPATH=str(code), JUDGE_CACHE_DIR=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


PYTHONS: dict[Path, str] = {}  # checkout -> the interpreter that runs it (--against-python), else this one
WARM: dict[Path, Path] = {}  # checkout -> its cache folder kept across grades (the `warm` judge)


def grade(code: Path, judge: str, trace: Path, config: Path, out: Path, *, script: str = CLI) -> dict:
    """One `judge grade` in a fresh process: CPU seconds, peak MB, exit code, what it printed. The judge
    `gpt-warm` is `gpt` with the checkout's cache folder of the earlier grades, its verdicts deleted: a
    machine where judge ran before (what it keeps beside the verdicts is read back), every request sent."""
    with tempfile.TemporaryDirectory() as fresh:
        cache = Path(fresh)
        if judge == "gpt-warm":
            judge, cache = "gpt", WARM[code]
            for old in cache.glob("verdicts.sqlite3*"):
                old.unlink()
        cmd = [PYTHONS.get(code, sys.executable), "-c", script, "grade", str(SCENARIO), str(trace), "--judge", judge,
               "--config", str(config), "-q", "--no-log", "--json", str(out)]
        proc = subprocess.Popen(cmd, cwd=code, env=env_for(code, cache), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        stdout, stderr = proc.stdout.read().decode(), proc.stderr.read().decode(errors="replace")  # type: ignore[union-attr]
        proc.stdout.close(), proc.stderr.close()  # type: ignore[union-attr]
    code_ = os.waitstatus_to_exitcode(status)
    if code_ not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {code_}: {stderr[-800:]}")
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024, "code": code_,
            "stdout": stdout}


def part(code: Path, script: str) -> dict:
    """One part imported alone in a fresh process: CPU seconds and peak MB."""
    with tempfile.TemporaryDirectory() as cache:
        proc = subprocess.Popen([sys.executable, "-c", script], cwd=code, env=env_for(code, Path(cache)))
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{script} failed")
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024}


def report_of(path: Path, code: Path) -> str:
    """The report as compared between checkouts: everything but where it was made (its provenance, and
    the checkout's folder, which messages about its calibration records name)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for run in data.get("runs", []):
        run.pop("provenance", None)
    return json.dumps(data, sort_keys=True).replace(str(code), "CHECKOUT")


def run_overhead(against: Path | None, *, rounds: int | None, quick: bool, results: bool,
                 against_python: Path | None = None) -> int:
    rounds = rounds or (3 if quick else 7)
    codes = {"now": ROOT, **({"before": against.resolve()} if against else {})}
    if against is not None and against_python is not None:
        PYTHONS[against.resolve()] = str(against_python)
    traces = dict(list(TRACES.items())[:1]) if quick else TRACES
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "llm_server.py"), "0"], stdout=subprocess.PIPE,
                            text=True, cwd=ROOT)
    port = int(proc.stdout.readline().strip())  # type: ignore[union-attr]
    load0, started = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    runs: dict[tuple[str, str, str], list[dict]] = {}
    same, imported = True, {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for label, code in codes.items():
                WARM[code] = Path(tmp) / f"cache-{label}"
            config = Path(tmp) / "judge.toml"
            config.write_text(f'[tool.judge]\ndefault = "gpt"\n[tool.judge.judges.gpt]\nbackend = "llm"\n'
                              f'model = "{MODEL}"\napi_base = "http://127.0.0.1:{port}/v1"\n'
                              'api_key_env = "BENCH_KEY"\ntimeout_s = 60\n', encoding="utf-8")
            for label, code in codes.items():  # bytecode caches; which client libraries a grade imports
                done = grade(code, "gpt", TRACES["17-event drift"], config, Path(tmp) / "w.json", script=IMPORTS)
                line = next(ln for ln in done["stdout"].splitlines() if ln.startswith("IMPORTED"))
                imported[label] = json.loads(line.split(" ", 1)[1])
                grade(code, "none", TRACES["17-event drift"], config, Path(tmp) / "w.json")
            for n in range(rounds):
                for name, trace in traces.items():
                    reports = {}
                    for label, code in codes.items():
                        for judge in JUDGES:
                            out = Path(tmp) / f"{label}-{judge}.json"
                            runs.setdefault((label, name, judge), []).append(grade(code, judge, trace, config, out))
                        reports[label] = report_of(Path(tmp) / f"{label}-gpt.json", code)
                    same &= len(set(reports.values())) == 1
                    print(f"round {n + 1} {name}: " + "; ".join(
                        f"{label} llm {runs[(label, name, 'gpt')][-1]['cpu_s']:.2f} s "
                        f"(warm {runs[(label, name, 'gpt-warm')][-1]['cpu_s']:.2f} s) "
                        f"{runs[(label, name, 'gpt')][-1]['peak_mb']:.0f} MB, none "
                        f"{runs[(label, name, 'none')][-1]['cpu_s']:.2f} s {runs[(label, name, 'none')][-1]['peak_mb']:.0f} MB"
                        for label in codes), flush=True)
                for label, script in PARTS.items():
                    runs.setdefault(("parts", label, ""), []).append(part(ROOT, script))
    finally:
        proc.terminate()
    load1 = os.getloadavg()
    body = _text(codes, traces, runs, rounds, quick, same, imported, started, load0, load1, against is not None)
    print("\n" + body)
    if results:
        from _results import write_section

        write_section(TITLE, body)
    return 0 if same else 1


def _med(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _text(codes: dict, traces: dict, runs: dict, rounds: int, quick: bool, same: bool, imported: dict, started: str,
          load0: tuple, load1: tuple, against: bool) -> str:
    pure = os.environ.get("JUDGE_PURE_PYTHON") == "1"
    lines = [
        ("**Run:** `--quick` (3 rounds, the 17-event trace); the full run measures 7 rounds and the 200-turn trace "
         "too." if quick else "**Run:** the full run (7 rounds, both traces); `--quick` measures 3 rounds of the "
         "17-event trace."), "",
        f"`.venv/bin/python benchmarks/bench_llm_against.py --overhead{' --against BASE' if against else ''}"
        f"{' --against-python BASE_VENV/bin/python' if PYTHONS else ''}"
        f"{' --quick' if quick else ''} --rounds {rounds} --results` on {started}; BASE: a detached worktree of the "
        f"code before. Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; load "
        f"average (1 / 5 / 15 min) {' / '.join(f'{x:.1f}' for x in load0)} at the start, "
        f"{' / '.join(f'{x:.1f}' for x in load1)} at the end"
        + ("" if load0[0] < 1 and load1[0] < 1 else ": the cores are shared with other sessions, which inflates CPU "
           "time too; the ratios are side by side") + f". judge's compiled modules: "
        f"{'off (JUDGE_PURE_PYTHON=1)' if pure else 'as installed'}. A fresh process per grade (CPU from wait4: user + "
        f"system; peak RSS), checkouts, judges and traces interleaved, {rounds} rounds, medians. The llm judge is "
        f"`{MODEL}` (mode tools, the direct client) against tests/llm_server.py on 127.0.0.1, a fresh verdict cache "
        "each grade (every request sent); `cache folder used before`: the same judge with the checkout's cache folder of "
        "its earlier grades, its verdicts deleted before each (what judge keeps beside them, such as the model-blind "
        "name list, is read back; every request sent).", "",
        "| trace | measure | " + " | ".join(codes) + " |", "|---|---|" + "---|" * len(codes)]
    for name in traces:
        for measure, key, unit in (("CPU", "cpu_s", "s"), ("peak RSS", "peak_mb", "MB")):
            fmt = (lambda v: f"{v:.2f} s") if unit == "s" else (lambda v: f"{v:.0f} MB")
            none = {c: _med(runs[(c, name, "none")], key) for c in codes}
            lines.append(f"| {name} | `--judge none`: {measure} | " + " | ".join(fmt(none[c]) for c in codes) + " |")
            for judge, said in (("gpt", "llm judge"), ("gpt-warm", "llm judge, cache folder used before")):
                llm = {c: _med(runs[(c, name, judge)], key) for c in codes}
                over = {c: statistics.median(a[key] - b[key] for a, b in zip(runs[(c, name, judge)],
                                                                              runs[(c, name, "none")], strict=True))
                        for c in codes}
                lines += [f"| {name} | {said}: {measure} | " + " | ".join(fmt(llm[c]) for c in codes) + " |",
                          f"| {name} | **{said}: overhead {measure}** | " + " | ".join(
                              f"**{fmt(over[c])}**" for c in codes) + " |"]
    lines += ["", "The overhead is the median over rounds of (llm grade - `--judge none` grade) in the same round. "
              "Target (issue 41): <= 0.5 CPU-s, <= 80 MB.", "",
              "Where the overhead of `now` goes: each part imported (or loaded) alone in a fresh process of `now`, "
              "once a round, medians; a part's own cost is its row less the interpreter's (parts share "
              "pydantic and the standard library, so they do not add up).", "",
              "| part, alone | CPU | peak RSS |", "|---|---|---|"]
    lines += [f"| {label} | {_med(runs[('parts', label, '')], 'cpu_s'):.2f} s | "
              f"{_med(runs[('parts', label, '')], 'peak_mb'):.0f} MB |" for label in PARTS]
    lines += ["",
              "LLM client libraries a grade with the llm judge imported: " + "; ".join(
                  f"{label}: {', '.join(found) or 'none'}" for label, found in imported.items()) + ".", "",
              f"Reports of `now` and `before` the same JSON (but provenance and the checkout's folder), every round: **{'yes' if same else 'NO'}**."]
    return "\n".join(lines)
