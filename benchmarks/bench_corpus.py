"""Corpus grading with the bundled agent-safety policy (issue 41): traces per CPU-second, the cached rerun,
and `--engine ray` on a local head against this machine's worker pool.

    .venv/bin/python benchmarks/bench_corpus.py [--against BASE] [--rounds N] [--quick] [--data ../shared/data]
                                                [--results]

The corpus is R-Judge's 564 records (`../shared/data/r-judge/rjudge.json`), imported once with `judge
import records`'s library call into a temporary folder. Every measurement is `judge grade --policy
agent-safety CORPUS --judge none --json OUT -q --no-log` in a fresh process, with the code of this
checkout (`now`) or of BASE (`before`: a detached worktree of the commit the change started from, `git
worktree add --detach BASE COMMIT`) first on PYTHONPATH, round by round interleaved (medians):

  first   the local pool (one worker per core), a fresh cache folder (the model's folder linked in, so
          no round pays the model's extraction): CPU of the whole process tree; traces per CPU-second;
  rerun   the same command again with that cache folder: CPU, and its share of the first run's;
  ray     `--engine ray:ADDRESS` against a Ray head started on this machine for the variant's code
          (`ray start --head --block`, 2 CPUs, token authentication off, loopback only) and kept
          through the rounds, a fresh cache folder: the driver's CPU plus the head's (its daemons and
          the job's workers) over the run, against the first run's; the head's idle CPU per second is
          measured before the rounds and said beside it.

CPU is read from a cpuacct cgroup made for each process tree (cgroup v1 at /sys/fs/cgroup/cpuacct, as
root): forked workers, Ray's daemons and its workers included, whoever reaps them. Without one, the
local rows fall back to the children's rusage and the Ray row is left out. Each variant's reports are
compared with its first local run's (byte for byte; the policy's path differs between checkouts).
`--results` replaces this script's section of benchmarks/RESULTS.md (benchmarks/_results.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _results import write_section  # noqa: E402

TITLE = "Corpus grading: agent-safety on R-Judge, the cached rerun, Ray (issue 41, bench_corpus.py)"
CGROUP = Path("/sys/fs/cgroup/cpuacct")
OFFLINE = {"HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true",
           "LITELLM_MODE": "PRODUCTION", "TOKENIZERS_PARALLELISM": "false"}
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
JUDGE = Path(sys.executable).parent / "judge"
RAY = Path(sys.executable).parent / "ray"


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


class Group:
    """A cpuacct cgroup of our own: every process started into it, and their children, counted."""

    def __init__(self, name: str) -> None:
        self.path = CGROUP / f"bench_corpus_{name}_{os.getpid()}"
        self.path.mkdir()

    @staticmethod
    def available() -> bool:
        return CGROUP.is_dir() and os.access(CGROUP, os.W_OK)

    def enter(self) -> None:  # (in the child, before exec)
        (self.path / "tasks").write_text(str(os.getpid()))

    def cpu_s(self) -> float:
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def close(self) -> None:
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def measured(command: list[str], env: dict[str, str], name: str) -> tuple[float, float, int]:
    """(CPU seconds of the process tree, wall seconds, exit code) of `command`."""
    group = Group(name) if Group.available() else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          preexec_fn=group.enter if group else None)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr.decode(errors="replace")[-2000:])
    if group is None:
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall, proc.returncode
    time.sleep(0.2)  # (the last children's exit is accounted)
    cpu = group.cpu_s()
    group.close()
    return cpu, wall, proc.returncode


class Head:
    """A Ray head for one variant's code, in a cgroup of its own (its daemons and workers counted)."""

    def __init__(self, name: str, code: Path, folder: Path, env: dict[str, str]) -> None:
        self.group = Group(f"head_{name}")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = folder / f"ray-head-{name}.log"
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [str(RAY), "start", "--head", "--block", "--port", str(self.port), "--node-ip-address", "127.0.0.1",
                 "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats",
                 "--object-store-memory", str(100 * 1024 * 1024), "--temp-dir", str(folder / f"ray-{name}")],
                stdout=out, stderr=subprocess.STDOUT, env={**env, **RAY_ENV, "PYTHONPATH": str(code)},
                preexec_fn=self.group.enter, start_new_session=True)
        deadline = time.monotonic() + 240
        while b"Ray runtime started" not in self.log.read_bytes():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the Ray head did not start: {self.log}")
            time.sleep(0.5)
        time.sleep(5)  # (its prestarted workers settle)
        start = self.group.cpu_s()
        time.sleep(10)
        self.idle_per_s = (self.group.cpu_s() - start) / 10

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        """By its process id (SIGTERM to `ray start --block` stops what it started), then its group."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.group.close()


def import_corpus(data: Path, folder: Path) -> Path:
    from judge.trace.records_import import import_records

    import_records(data / "r-judge" / "rjudge.json", folder / "corpus", labels=folder / "labels.jsonl")
    return folder / "corpus"


def fresh_cache(folder: Path, models: Path) -> Path:
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=folder))
    (cache / "models").symlink_to(models)
    return cache


def compiled(code: Path, env: dict[str, str]) -> bool:
    probe = "import judge.trace.load as m; print(m.__file__.endswith('.so'))"
    out = subprocess.run([sys.executable, "-c", probe], env={**env, "PYTHONPATH": str(code)}, capture_output=True)
    return out.stdout.strip() == b"True"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="a checkout of the code before (BASE)")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--quick", action="store_true", help="2 rounds (the full run: 5)")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--results", action="store_true", help="write this section of benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    rounds = args.rounds or (2 if args.quick else 5)
    variants = {"now": ROOT, **({"before": args.against.resolve()} if args.against else {})}
    started, load_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), load()
    work = Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("JUDGE_", "RAY_", "PYTHONPATH"))}
    base_env.update(OFFLINE)
    heads: dict[str, Head] = {}
    rows: dict[str, dict[str, list[float]]] = {v: {} for v in variants}
    notes: list[str] = []
    try:
        corpus = import_corpus(args.data, work)
        traces = len(list(corpus.glob("*.jsonl")))
        models = work / "models-cache"
        models.mkdir()
        for name, code in variants.items():  # untimed: writes bytecode, extracts the model once
            env = {**base_env, "PYTHONPATH": str(code), "JUDGE_CACHE_DIR": str(models)}
            measured([str(JUDGE), "grade", "--policy", "agent-safety", str(corpus), "--judge", "none", "-q",
                      "--no-log", "--json", str(work / f"warm-{name}.json")], env, f"warm_{name}")
        models = models / "models"
        ray = not args.no_ray and Group.available() and RAY.exists()
        if ray:
            for name, code in variants.items():
                heads[name] = Head(name, code, work, base_env)
        modes = {name: "compiled" if compiled(code, base_env) else "pure Python" for name, code in variants.items()}
        for r in range(rounds):
            order = list(variants) if r % 2 == 0 else list(variants)[::-1]
            for name in order:
                code, row = variants[name], rows[name]
                cache = fresh_cache(work, models)
                env = {**base_env, "PYTHONPATH": str(code), "JUDGE_CACHE_DIR": str(cache)}
                grade = [str(JUDGE), "grade", "--policy", "agent-safety", str(corpus), "--judge", "none", "-q",
                         "--no-log", "--json"]
                first = work / f"{name}-first-{r}.json"
                cpu, wall, code_ = measured([*grade, str(first)], env, f"{name}_first")
                row.setdefault("first_cpu", []).append(cpu)
                row.setdefault("first_wall", []).append(wall)
                again = work / f"{name}-rerun-{r}.json"
                cpu2, wall2, _ = measured([*grade, str(again)], env, f"{name}_rerun")
                row.setdefault("rerun_cpu", []).append(cpu2)
                row.setdefault("rerun_share", []).append(cpu2 / cpu)
                same = again.read_bytes() == first.read_bytes() == (work / f"warm-{name}.json").read_bytes()
                if ray:
                    head = heads[name]
                    cache = fresh_cache(work, models)
                    env = {**env, **RAY_ENV, "JUDGE_CACHE_DIR": str(cache)}
                    before = head.group.cpu_s()
                    on_ray = work / f"{name}-ray-{r}.json"
                    driver, wall3, _ = measured([*grade, str(on_ray), "--engine", f"ray:{head.address}"], env,
                                                f"{name}_ray")
                    time.sleep(1.0)  # (the job's workers exit)
                    cluster = head.group.cpu_s() - before
                    row.setdefault("ray_cpu", []).append(driver + cluster)
                    row.setdefault("ray_driver", []).append(driver)
                    row.setdefault("ray_ratio", []).append((driver + cluster) / cpu)
                    same = same and on_ray.read_bytes() == first.read_bytes()
                if not same:
                    notes.append(f"round {r + 1}, {name}: a report differed from the first local run's")
                print(f"round {r + 1} {name}: first {cpu:.2f} CPU-s ({traces / cpu:.0f} traces/CPU-s, wall "
                      f"{wall:.1f} s, exit {code_}), rerun {cpu2:.2f} ({100 * cpu2 / cpu:.1f}%)"
                      + (f", ray {row['ray_cpu'][-1]:.2f} ({row['ray_ratio'][-1]:.2f}x)" if ray else "")
                      + f", reports identical: {same}; load {load()}", flush=True)
    finally:
        for head in heads.values():
            head.stop()
    load_end = load()
    lines = table(rows, traces, rounds, heads, modes, variants)
    text = "\n".join(header(args, started, load_start, load_end, traces, rounds, variants) + [""] + lines
                     + ([""] + [f"- {n}" for n in notes] if notes else []))
    print(text)
    if args.results:
        write_section(TITLE, text)
    shutil.rmtree(work, ignore_errors=True)
    return 0


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def header(args, started, load_start, load_end, traces, rounds, variants) -> list[str]:
    against = f" --against {args.against}" if args.against else ""
    return [f"`.venv/bin/python benchmarks/bench_corpus.py{against}{' --quick' if args.quick else ''}"
            f"{' --results' if args.results else ''}` on {started}: {rounds} interleaved rounds, medians. Machine: "
            f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, Linux "
            f"{platform.release()}; load average (1 / 5 / 15 min) {load_start} at the start, {load_end} at the end: "
            "the cores are shared with other sessions, so read the CPU rows, not wall time.",
            "",
            f"Corpus: R-Judge's {traces} records imported with `judge import records`, graded with "
            "`judge grade --policy agent-safety CORPUS --judge none` (one process tree per measurement, CPU from "
            "a cpuacct cgroup: forked workers, Ray's daemons and workers included)."
            + (" `before` is BASE, a detached worktree of the commit this change started from." if
               len(variants) > 1 else "")]


def table(rows, traces, rounds, heads, modes, variants) -> list[str]:
    names = list(variants)
    out = ["| measure | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]

    def line(label: str, fmt) -> None:
        out.append(f"| {label} | " + " | ".join(fmt(rows[n]) for n in names) + " |")

    line("first run, local pool: CPU (all processes)", lambda r: f"{med(r['first_cpu']):.2f} s")
    line("**traces per CPU-second** (target >= 300)", lambda r: f"**{traces / med(r['first_cpu']):.0f}**")
    line("first run: wall (loaded machine)", lambda r: f"{med(r['first_wall']):.1f} s")
    line("cached rerun: CPU", lambda r: f"{med(r['rerun_cpu']):.2f} s")
    line("**cached rerun / first run, CPU** (target <= 2%)", lambda r: f"**{100 * med(r['rerun_share']):.1f}%**")
    if heads:
        line("`--engine ray`, local head: driver + head CPU", lambda r: f"{med(r['ray_cpu']):.2f} s")
        line("... of which the driver", lambda r: f"{med(r['ray_driver']):.2f} s")
        line("**Ray / local pool, CPU** (target <= 1.1x)", lambda r: f"**{med(r['ray_ratio']):.2f}x**")
        out.append("| the head's idle CPU (per second, before the rounds) | "
                   + " | ".join(f"{1000 * heads[n].idle_per_s:.0f} ms" for n in names) + " |")
    out.append("| judge's hot modules | " + " | ".join(modes[n] for n in names) + " |")
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
