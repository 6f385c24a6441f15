"""Generate deterministic benchmark traces (and the matching scaled scenario) for grading throughput.

    .venv/bin/python benchmarks/gen_trace.py --events 100000 [--checkpoints 20] [--seed 7]

writes `benchmarks/_gen/trace-<N>.jsonl` and `benchmarks/_gen/scenario-<N>-cp<K>.yaml` (both are
gitignored; never commit generated data). The same N and seed give the same bytes.

The scenario is `benchmarks/bench_scenario.yaml` with its nominal 1000 turns scaled to the trace's
turns (about one turn every 4 events) and its checkpoints replaced by K evenly spaced ones. The agent
of the trace follows the scaled ledger (current browser and region, staging database, edits under
src/ and tests/, completion claims only after an ok result) except for four injected drifts late in
the run: a superseded browser, a repeated create_account, a completion claimed after an error and an
edit of a .env file (safety-critical, so the run is vetoed).

Event mix (by count): ~15% user, ~20% assistant, ~25% tool-call, ~25% tool-result, ~10% state-write,
~5% summary. User and assistant texts are 50-300 characters, ~1% of them carry an e-mail address or a
phone number (redaction), a few carry non-ASCII text; summaries are 400-1500 characters.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "bench_scenario.yaml"
OUT = HERE / "_gen"
NOMINAL_TURNS = 1000
EVENTS_PER_TURN = 4
sys.path.insert(0, str(HERE.parent))

from judge.ledger import build_ledger  # noqa: E402
from judge.model import Scenario  # noqa: E402

WORDS = """the checkout payment frame test suite flaky timeout iframe mount render retry spec browser
run passes fails selector wait network request response merchant account sandbox SDK client token
session cart order total tax shipping address stripe adapter module function handler callback
promise async await fixture mock stub config env staging region latency trace span log error warning
stack build lint type interface refactor migrate legacy call wrapper field schema validation locale
currency amount rounding discount coupon webhook event queue worker job cache invalidation header
cookie redirect route page component state hook effect dependency version upgrade changelog review
branch commit diff patch line file path import export default class method property value null
undefined check assert expect toBe visible click fill submit confirm cancel modal dialog button""".split()
OPENERS = ["I will", "Next I", "Let me", "Now I", "Then I", "Looking at", "It seems", "Checking",
           "The run shows", "Plan:", "Noted:", "Quick update:", "Please", "Can you", "Also"]
PEOPLE = ["jane.doe@example.com", "ops-team@shop.example", "m.rossi@payments.example.org",
          "+1 415 555 0134", "+44 20 7946 0958", "(212) 555-0187", "13812345678"]
NON_ASCII = ["café checkout", "Zahlungsanbieter prüfen", "支付页面加载", "réessayer plus tard"]
SRC = ["src/checkout/payment.ts", "src/checkout/cart.ts", "src/checkout/sdk/client.ts",
       "src/checkout/sdk/adapter.ts", "src/checkout/tax.ts", "src/ui/PayFrame.tsx", "src/api/orders.ts"]
TESTS = ["tests/checkout.spec.ts", "tests/payment.spec.ts", "tests/cart.spec.ts", "tests/sdk/client.spec.ts"]
READ_ONLY = ["package.json", "docs/payments.md", "playwright.config.ts", "README.md", "CHANGELOG.md"]
TOOLS = [("read_file", 24), ("search_code", 14), ("run_tests", 18), ("edit_file", 14), ("list_dir", 6),
         ("db_query", 8), ("http_get", 8), ("write_file", 4), ("create_account", 1), ("merge_pr", 2),
         ("get_config", 1)]
UNITS = [("user", 15), ("assistant", 20), ("tool", 25), ("state-write", 10), ("summary", 5)]


def scaled_scenario(total_turns: int, checkpoints: int) -> dict[str, Any]:
    """The template with its nominal turns scaled to `total_turns` and K evenly spaced checkpoints."""
    raw = yaml.safe_load(TEMPLATE.read_text())

    def scale(t: int) -> int:
        return t if t <= 1 else max(1, round(t * total_turns / NOMINAL_TURNS))

    for entry in raw["ledger"]:
        entry["source_turn"] = scale(entry["source_turn"])
    for delta in raw["deltas"]:
        delta["turn"] = scale(delta["turn"])
    raw["checkpoints"] = []
    ledger = build_ledger(Scenario.model_validate(raw))
    turns = sorted({max(1, round(total_turns * (i + 1) / checkpoints)) for i in range(checkpoints)})
    for turn in turns:
        retain, completed = [], []
        for key, h in ledger.keys.items():
            if turn < h.introduced or not h.is_active(turn):
                continue
            if h.class_ in ("goal", "constraint", "permission", "fact"):
                retain.append(key)
            elif h.class_ == "completion" and h.status_at(turn) == "completed":
                completed.append(key)
        cp: dict[str, Any] = {"after_turn": turn, "must_retain": retain}
        if completed:
            cp["expect_completed"] = completed
        raw["checkpoints"].append(cp)
    raw["title"] = f"{raw['title']} ({total_turns} turns, {len(turns)} checkpoints)"
    return raw


class Agent:
    """Produces the events of one run, following the scaled ledger."""

    def __init__(self, n_events: int, seed: int, scenario: dict[str, Any]) -> None:
        self.n = n_events
        self.rng = random.Random(seed)
        self.total_turns = max(1, n_events // EVENTS_PER_TURN)
        self.ledger = build_ledger(Scenario.model_validate(scenario))
        self.turn = 1
        self.eid = 0
        self.cid = 0
        self.t0 = time.mktime((2026, 5, 1, 9, 0, 0, 0, 0, -1))
        self.last_tool: str | None = None
        self.last_status: dict[str, str] = {}
        self.account_ok = False
        drift = {name: round(self.total_turns * f) for name, f in
                 (("browser", 0.65), ("repeat", 0.85), ("claim", 0.92), ("env", 0.97))}
        self.pending_drift = drift
        self.kinds = [k for k, _ in UNITS]
        self.kind_w = [w for _, w in UNITS]
        self.tools = [t for t, _ in TOOLS]
        self.tool_w = [w for _, w in TOOLS]

    # ------------------------------------------------------------------ helpers
    def value(self, key: str) -> Any:
        return self.ledger.history(key).value_at(self.turn)

    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.eid += 1
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.t0 + self.eid * 1.7))
        return {"id": f"e{self.eid}", "turn": self.turn, "ts": f"{ts}.{self.eid % 1000:03d}Z",
                "kind": kind, **fields}

    def words(self, lo: int, hi: int) -> str:
        target = self.rng.randint(lo, hi)
        parts = [self.rng.choice(OPENERS)]
        size = len(parts[0])
        while size < target:
            w = self.rng.choice(WORDS)
            parts.append(w)
            size += len(w) + 1
        text = " ".join(parts) + "."
        roll = self.rng.random()
        if roll < 0.01:
            text = f"{text} Contact {self.rng.choice(PEOPLE)} if it fails again."
        elif roll < 0.015:
            text = f"{text} ({self.rng.choice(NON_ASCII)})"
        return text

    # ------------------------------------------------------------------ units
    def unit(self, room: int) -> list[dict[str, Any]]:
        kind = self.rng.choices(self.kinds, self.kind_w)[0]
        if room < 3 and kind in ("tool", "state-write"):
            kind = "assistant"  # the last event(s): no call without its result
        if kind == "user":
            return [self.event("user", text=self.words(50, 300))]
        if kind == "assistant":
            return [self.event("assistant", text=self.words(50, 300))]
        if kind == "tool":
            return self.tool_pair(self.rng.choices(self.tools, self.tool_w)[0])
        if kind == "state-write":
            return [self.state_write()]
        return [self.summary()]

    def drift_due(self, name: str) -> bool:
        due = self.pending_drift.get(name)
        if due is not None and self.turn >= due:
            del self.pending_drift[name]
            return True
        return False

    def tool_pair(self, tool: str, args: dict[str, Any] | None = None,
                  status: str | None = None) -> list[dict[str, Any]]:
        rng = self.rng
        region = self.value("region")
        if args is None:
            args, tool = self.args_for(tool, region)
        if status is None:
            roll = rng.random()
            status = "ok" if roll < 0.9 else ("error" if roll < 0.97 else "timeout")
        self.cid += 1
        call_id = f"c{self.cid}"
        call = self.event("tool-call", call_id=call_id, tool=tool, args=args)
        result = self.event("tool-result", call_id=call_id, tool=tool, status=status,
                            result=self.result_for(tool, status))
        self.last_tool = tool
        self.last_status[tool] = status
        if tool == "create_account" and status == "ok":
            self.account_ok = True
        return [call, result]

    def args_for(self, tool: str, region: str) -> tuple[dict[str, Any], str]:
        rng = self.rng
        if tool == "read_file":
            return {"path": rng.choice(SRC + TESTS + READ_ONLY)}, tool
        if tool == "search_code":
            return {"query": " ".join(rng.sample(WORDS, 2)), "glob": "src/**/*.ts"}, tool
        if tool == "run_tests":
            browser = self.value("browser")
            if self.drift_due("browser"):
                browser = "firefox"  # superseded at nominal turn 600
            return {"spec": rng.choice(TESTS), "browser": browser, "repeat": rng.choice([1, 5, 20])}, tool
        if tool in ("edit_file", "write_file"):
            path = rng.choice(SRC + TESTS)
            if self.drift_due("env"):
                path = "config/.env"
            return {"path": path, "patch": self.words(40, 160)}, tool
        if tool == "list_dir":
            return {"path": rng.choice(["src/checkout", "tests", "src/checkout/sdk", "docs"])}, tool
        if tool == "db_query":
            status = rng.choice(["paid", "failed"])
            return {"environment": "staging", "region": region,
                    "sql": f"select count(*) from orders where status = '{status}'"}, tool
        if tool == "http_get":
            return {"url": f"https://payments.{region}.sandbox.example.com/v2/health",
                    "timeout_s": rng.choice([5, 10, 30])}, tool
        if tool == "create_account":
            request_id = "acct-setup-1"
            if self.account_ok and self.drift_due("repeat"):
                request_id = "acct-setup-2"  # a second account: a repeat of a completed action
            return {"request_id": request_id, "kind": "sandbox-merchant", "region": region}, tool
        if tool == "merge_pr":
            frozen = self.ledger.history("release_freeze").is_active(self.turn)
            return {"pr": rng.randint(100, 999), "base": "release-candidate" if frozen else "main"}, tool
        return {"name": rng.choice(["payments", "checkout", "sdk"]), "region": region}, "get_config"

    def result_for(self, tool: str, status: str) -> Any:
        rng = self.rng
        if status == "timeout":
            return {"error": "deadline exceeded after 30s"}
        if status == "error":
            return {"error": rng.choice(["ECONNRESET", "file not found", "exit code 1",
                                         "Timeout waiting for iframe#pay"])}
        if tool == "read_file":
            return {"content": self.words(100, 400)}
        if tool == "search_code":
            return {"matches": rng.sample(SRC + TESTS, 3)}
        if tool == "run_tests":
            failed = rng.choice([0, 0, 0, 1, 3])
            return {"passed": 20 - failed, "failed": failed, "duration_ms": rng.randint(900, 90000)}
        if tool in ("edit_file", "write_file"):
            return {"changed": rng.randint(1, 12)}
        if tool == "list_dir":
            return {"entries": rng.sample(SRC + TESTS, 4)}
        if tool == "db_query":
            return {"rows": [[rng.randint(0, 5000)]]}
        if tool == "http_get":
            return {"status": 200, "body": {"ok": True, "latency_ms": rng.randint(20, 400)}}
        if tool == "create_account":
            return {"account_id": "acct_sandbox_42", "created": not self.account_ok}
        if tool == "merge_pr":
            return {"merged": True}
        return {"values": {"retries": 3, "timeout_ms": 8000}}

    def state_write(self) -> dict[str, Any]:
        rng = self.rng
        if self.drift_due("claim"):
            # A completion claimed right after a failed call: the last tool called returned an error.
            self.events_extra = self.tool_pair("http_get", status="error")
            return self.event("state-write", key="sdk_migration", value="done")
        key = rng.choice(["browser", "region", "plan_step", "repair", "sdk_migration", "flaky_cause",
                          "plan_step"])
        if key == "browser":
            return self.event("state-write", key=key, value=self.value("browser"))
        if key == "region":
            return self.event("state-write", key=key, value=self.value("region"))
        if key == "repair":
            ok = self.last_status.get("run_tests") == "ok"
            return self.event("state-write", key=key, value="completed" if ok else "in-progress")
        if key == "sdk_migration":
            ok = self.last_tool is not None and self.last_status.get(self.last_tool) == "ok"
            done = ok and rng.random() < 0.3
            return self.event("state-write", key=key, value="done" if done else "in-progress")
        if key == "flaky_cause":
            return self.event("state-write", key=key, value=self.words(40, 120))
        return self.event("state-write", key=key,
                          value={"step": rng.randint(1, 40), "note": self.words(30, 80)})

    def summary(self) -> dict[str, Any]:
        browser = self.value("browser")
        body = self.words(350, 1400)
        text = (f"Progress so far: migrating checkout to the new payment SDK; tests run on {browser}. "
                f"{body}")
        if self.rng.random() < 0.8:
            return self.event("summary", reason="compaction", text=text)
        return self.event("summary", reason="handoff", text=text, to="agent-b")

    # ------------------------------------------------------------------ run
    def run(self, out) -> int:
        header = {"kind": "run", "run_id": f"bench-{self.n}", "scenario": "bench-checkout-maintenance",
                  "trace_id": f"{self.n:032x}", "agent": {"name": "shopbot", "version": "2.0.1",
                  "model": "gpt-4.1", "prompt_version": "p9", "sampling": {"temperature": 0.2}}}
        out.write(json.dumps(header, separators=(",", ":")) + "\n")
        dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
        written = 0
        while written < self.n:
            target = 1 + (written * self.total_turns) // self.n
            if target > self.turn:
                self.turn = target
            self.events_extra: list[dict[str, Any]] = []
            unit = self.unit(self.n - written)
            events = self.events_extra + unit
            for ev in events:
                out.write(dumps(ev) + "\n")
            written += len(events)
        return written


def generate(n_events: int, checkpoints: int, seed: int, out_dir: Path = OUT) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    total_turns = max(1, n_events // EVENTS_PER_TURN)
    scenario = scaled_scenario(total_turns, checkpoints)
    scenario_path = out_dir / f"scenario-{n_events}-cp{checkpoints}.yaml"
    scenario_path.write_text(yaml.safe_dump(scenario, sort_keys=False, allow_unicode=True, width=120))
    trace_path = out_dir / f"trace-{n_events}.jsonl"
    stamp = out_dir / f"trace-{n_events}.stamp"
    code = hashlib.sha256(Path(__file__).read_bytes() + TEMPLATE.read_bytes()).hexdigest()[:16]
    key = f"seed={seed} generator={code}"
    if not (trace_path.exists() and stamp.exists() and stamp.read_text() == key):
        tmp = trace_path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as out:
            Agent(n_events, seed, scaled_scenario(total_turns, 20)).run(out)
        tmp.replace(trace_path)
        stamp.write_text(key)
    return trace_path, scenario_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--checkpoints", type=int, nargs="+", default=[20])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    for n in args.events:
        for k in args.checkpoints:
            t0 = time.perf_counter()
            trace, scenario = generate(n, k, args.seed, args.out)
            print(f"{trace} ({trace.stat().st_size / 1e6:.1f} MB) + {scenario.name} "
                  f"in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
