"""Each rule kind is one registered spec, and every table about kinds is derived from the specs.

- the built-in kinds are the modules of judge/checks/kinds/ (its `BUILT_IN` lists them), their specs are
  complete, and the scenario format's union is exactly the registered models;
- a kind registered later shows in every derived table (reads, families, docs rows, draft
  kinds, the format, the schema) and grades;
- no module outside judge/checks/kinds/ compares a rule's `check` with a kind's name;
- a third-party kind from the `judge.rules` entry-point group (examples/plugins/judge-max-calls, a
  package with its dist-info) grades in a fresh interpreter; a broken or clashing one is one line.
"""

from __future__ import annotations

import ast
import json
import os
import pkgutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import ValidationError

from judge.checks import CheckpointVerdict, RuleSet, RuleSpec, Tracker, registry
from judge.errors import ConfigError
from judge.ledger import build_ledger
from judge.model import REGISTRY, RuleBase, Scenario, json_schema, rule_kinds, rule_models

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "examples" / "plugins" / "judge-max-calls"


def test_the_builtin_kinds_are_the_modules_of_the_kinds_package():
    import judge.checks.kinds as kinds

    modules = {m.name for m in pkgutil.iter_modules(kinds.__path__) if not m.name.startswith("_")}
    builtin = {c for c in rule_kinds() if REGISTRY.origin(c) == "built-in"}
    assert {m.replace("_", "-") for m in modules} == builtin
    assert len(builtin) >= 10


@pytest.mark.parametrize("check", [c for c in rule_kinds()])
def test_every_spec_is_complete(check):
    spec = registry.spec_for(check)
    assert spec.check == check
    assert spec.reads, "a kind reads at least one event kind"
    assert spec.reads <= {"user", "assistant", "tool-call", "tool-result", "state-write", "summary", "snapshot"}
    assert spec.fields_doc and spec.violated_when
    assert spec.model.__doc__, "the model's docstring says what the rule guards"
    tracker = spec.tracker
    assert tracker is not None, "a built-in kind is written as a tracker"
    if isinstance(tracker, type) and tracker.remember is not Tracker.remember:
        assert tracker.remembers, "a tracker that remembers names the event kinds it remembers"
    if spec.draft is not None:
        assert callable(spec.draft.fields)


def test_the_scenario_union_is_the_registered_models():
    schema = json_schema("scenario")
    refs = {item["$ref"].rsplit("/", 1)[-1] for item in schema["properties"]["rules"]["items"]["oneOf"]}
    assert refs == {m.__name__ for m in rule_models().values()}
    with pytest.raises(ValidationError) as err:
        Scenario.model_validate({"id": "s", "rules": [{"check": "no-such-kind", "key": "k"}]})
    assert "no-such-kind" in str(err.value)


class EveryCall(RuleBase):
    """Test kind: every call of `tool` is a violation (with a per-run counter)."""

    check: Literal["test-every-call"]
    tool: str


@dataclass
class Seen:
    calls: int = 0


def _every_call(rule: EveryCall, event: Any, ctx: Any, seen: Seen):
    seen.calls += 1
    return True, f"call {seen.calls} of {event.tool}"


TEST_SPEC = RuleSpec(model=EveryCall, check_event=_every_call, reads=frozenset({"tool-call"}),
                     new_state=lambda rule: Seen(), fields_doc="`tool`", violated_when="the tool is called",
                     family="scope")


@pytest.fixture
def test_kind():
    REGISTRY.register(TEST_SPEC, origin="tests")
    try:
        yield TEST_SPEC
    finally:
        REGISTRY.unregister("test-every-call")


def test_a_registered_kind_is_in_every_derived_table_and_grades(test_kind):
    from judge.render.kinds import kind_rows, markdown_table

    assert "test-every-call" in rule_kinds()
    assert "test-every-call" in registry.kinds_reading("tool-call")
    assert "test-every-call" not in registry.kinds_reading("user")
    assert registry.family_of("test-every-call") == "scope"
    rows = kind_rows(registry.specs(), registry.origin)
    assert any("`test-every-call`" in line for line in markdown_table(rows))
    assert "EveryCall" in json.dumps(json_schema("scenario"))
    scenario = Scenario.model_validate({
        "id": "s", "ledger": [{"key": "k", "class": "constraint", "value": "never call x", "source_turn": 1}],
        "checkpoints": [{"after_turn": 2, "must_retain": ["k"]}],
        "rules": [{"check": "test-every-call", "key": "k", "tool": "x"}]})
    rules = RuleSet(build_ledger(scenario))

    class Call:
        kind, tool, args, call_id = "tool-call", "x", {}, "c1"

        def __init__(self, eid: str, turn: int) -> None:
            self.id, self.turn = eid, turn

    hits = rules.observe(Call("e1", 1), 0) + rules.observe(Call("e2", 2), 1)
    assert [(h.violated, h.detail) for h in hits] == [(True, "call 1 of x"), (True, "call 2 of x")]
    assert rules.state_of("test-every-call:k").calls == 2


class EveryCallTracker(Tracker[EveryCall]):
    """The same kind written as a tracker: it counts calls, remembers results, notes and rules at a
    checkpoint, each answer one method; what it does not need keeps the base class's default."""

    remembers = frozenset({"tool-result"})

    def __init__(self, rule: EveryCall) -> None:
        super().__init__(rule)
        self.calls, self.results = 0, 0

    def observe(self, event: Any, ctx: Any):
        self.calls += 1
        return True, f"call {self.calls} of {event.tool}"

    def remember(self, event: Any, ctx: Any) -> None:
        self.results += 1

    def notes(self):
        return [f"{self.results} result(s) seen"]

    def at_checkpoint(self, checkpoint: Any):
        return CheckpointVerdict("violated", checkpoint.after_turn, f"{self.calls} call(s) by then")


def _every_call_run(spec: RuleSpec) -> tuple[RuleSet, list[Any]]:
    REGISTRY.register(spec, origin="tests")
    try:
        scenario = Scenario.model_validate({
            "id": "s", "ledger": [{"key": "k", "class": "constraint", "value": "never call x", "source_turn": 1}],
            "checkpoints": [{"after_turn": 2, "must_retain": ["k"]}],
            "rules": [{"check": "test-every-call", "key": "k", "tool": "x"}]})
        rules = RuleSet(build_ledger(scenario))
    finally:
        REGISTRY.unregister("test-every-call")

    class Event:
        tool, args, call_id, status = "x", {}, "c1", "ok"

        def __init__(self, kind: str, eid: str, turn: int) -> None:
            self.kind, self.id, self.turn = kind, eid, turn

    hits = [h for i, e in enumerate([Event("tool-call", "e1", 1), Event("tool-result", "e2", 1),
                                     Event("tool-call", "e3", 2)]) for h in rules.observe(e, i)]
    return rules, hits


def test_a_kind_written_as_a_tracker_grades_and_answers_each_question():
    spec = RuleSpec(model=EveryCall, tracker=EveryCallTracker, reads=frozenset({"tool-call"}), fields_doc="`tool`",
                    violated_when="the tool is called")
    rules, hits = _every_call_run(spec)
    assert [(h.event, h.detail) for h in hits] == [("e1", "call 1 of x"), ("e3", "call 2 of x")]
    tracker = rules.tracker_of("test-every-call:k")
    assert isinstance(tracker, EveryCallTracker) and rules.state_of("test-every-call:k") is tracker
    assert rules.rule_notes() == ["rule test-every-call:k: 1 result(s) seen"]
    checkpoint = rules.ledger.scenario.checkpoints[0]
    assert tracker.at_checkpoint(checkpoint).detail == "2 call(s) by then"
    assert rules.raw_hook() is None  # no tracker overrides raw_scan: the reader gets no hook


def test_the_older_form_of_a_kind_is_a_check_tracker():
    """check_event and new_state (the form judge_max_calls had, documented for plug-ins) still grade."""
    rules, hits = _every_call_run(TEST_SPEC)
    assert [h.detail for h in hits] == ["call 1 of x", "call 2 of x"]
    assert rules.state_of("test-every-call:k").calls == 2 and rules.rule_notes() == []


def test_a_spec_has_a_tracker_or_a_check():
    with pytest.raises(TypeError, match="neither"):
        RuleSpec(model=EveryCall, reads=frozenset({"tool-call"}), fields_doc="`tool`", violated_when="called")
    with pytest.raises(TypeError):  # by keyword only: the order of the fields changed with the tracker
        RuleSpec(EveryCall, EveryCallTracker, frozenset({"tool-call"}), "`tool`", "called")
    with pytest.raises(TypeError, match="both"):
        RuleSpec(model=EveryCall, tracker=EveryCallTracker, check_event=_every_call, reads=frozenset({"tool-call"}),
                 fields_doc="`tool`", violated_when="called")


def test_a_clashing_kind_names_both_origins(test_kind):
    with pytest.raises(ConfigError, match="already registered by tests"):
        REGISTRY.register(TEST_SPEC, origin="another plug-in")


@pytest.mark.slow
def test_no_module_outside_the_kinds_compares_a_check_with_a_kind_name():
    """A kind's knowledge lives in its spec: `rule.check == "scope"`, `check in ("a", "b")` elsewhere
    would be a hand-kept table that a new kind could miss."""
    names = set(rule_kinds())
    found = []
    for path in (REPO / "judge").rglob("*.py"):
        if "kinds" in path.relative_to(REPO / "judge").parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            about_check = any(isinstance(s, ast.Attribute) and s.attr == "check" or isinstance(s, ast.Name)
                              and s.id == "check" for s in sides)
            literals = [e.value for s in sides for e in ([s] if isinstance(s, ast.Constant) else getattr(s, "elts", []))
                        if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if about_check and names & set(literals):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not found, f"rule kinds compared by name outside judge/checks/kinds: {found}"


def _judge(*args: str, env_extra: dict[str, str] | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-c", "from judge.cli import main; main()", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_a_plugin_kind_from_an_entry_point_grades(tmp_path):
    env = {"PYTHONPATH": os.pathsep.join([str(PLUGIN), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "report.json"
    graded = _judge("grade", str(PLUGIN / "scenario.yaml"), str(PLUGIN / "drift.jsonl"), "--judge", "none",
                    "--json", str(out), "-q", env_extra=env)
    assert graded.returncode == 1, graded.stderr
    run = json.loads(out.read_text())["runs"][0]
    findings = [f for cp in run["checkpoints"] for f in cp["findings"] if f["key"] == "one_search"]
    assert findings[0]["verdict"] == "violated" and findings[0]["evidence_event"] == "e8"
    assert findings[0]["rule"] == "max-calls-per-turn:one_search"
    listed = _judge("rules", "--json", env_extra=env)
    origins = {row["check"]: row["origin"] for row in json.loads(listed.stdout)}
    assert "judge.rules" in origins["max-calls-per-turn"] and origins["scope"] == "built-in"
    # without the plug-in the scenario is refused with one line naming the file, not a traceback
    plain = _judge("grade", str(PLUGIN / "scenario.yaml"), str(PLUGIN / "drift.jsonl"), "--judge", "none")
    assert plain.returncode == 2 and "max-calls-per-turn" in plain.stderr and "Traceback" not in plain.stderr


def test_a_broken_plugin_is_one_line_and_exit_2(tmp_path):
    dist = tmp_path / "broken_kind.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-kind\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[judge.rules]\nbroken = broken_kind:SPEC\n")
    (tmp_path / "broken_kind.py").write_text("raise RuntimeError('this plug-in does not import')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    result = _judge("lint", "docs/tour/scenario.yaml", env_extra=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "broken" in result.stderr and "this plug-in does not import" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def _plugin(tmp_path: Path, name: str, group: str, entry: str, source: str) -> dict[str, str]:
    """A package installed in place: its module and a dist-info naming one entry point."""
    dist = tmp_path / f"{name}.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{group}]\n{entry}\n")
    (tmp_path / f"{name}.py").write_text(source)
    return {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}


BACKEND_PLUGIN = '''
from judge.judges.base import JudgeResult
from judge.judges.spec import BackendSpec
from judge.model import JudgeVerdict, JudgeFinding


class EveryKeyViolated:
    """Says `violated` on every asked key, at the window's last event."""

    def __init__(self, config):
        self.config = config

    def fingerprint(self):
        return {"backend": "always-violated", "model": None, "identity": {"says": "violated"}}

    async def judge_checkpoint(self, request):
        last = request.events[-1].id
        return JudgeResult(JudgeVerdict(findings=[JudgeFinding(key=k, verdict="violated", evidence_event=last,
                                                               confidence=0.9, rationale="plug-in")
                                                  for k in request.keys]))


SPEC = BackendSpec(name="always-violated", make=EveryKeyViolated, description="a test plug-in")
'''


@pytest.mark.slow
def test_a_plugin_backend_from_an_entry_point_judges(tmp_path):
    env = _plugin(tmp_path, "always_violated", "judge.backends", "always-violated = always_violated:SPEC",
                  BACKEND_PLUGIN)
    config = tmp_path / "judge.toml"
    config.write_text('[tool.judge.judges.plug]\nbackend = "always-violated"\nauthority = "binding"\n')
    out = tmp_path / "report.json"
    graded = _judge("grade", "docs/tour/scenario.yaml", "docs/tour/clean.jsonl", "--judge", "plug", "--config",
                    str(config), "--json", str(out), "-q", env_extra=env)
    assert graded.returncode == 1, graded.stderr
    run = json.loads(out.read_text())["runs"][0]
    goal = [f for cp in run["checkpoints"] for f in cp["findings"] if f["key"] == "goal"]
    assert goal and all(f["verdict"] == "violated" and f["source"] == "judge" for f in goal)
    listed = _judge("config", "backends", "--json", env_extra=env)
    assert "judge.backends" in {r["backend"]: r["origin"] for r in json.loads(listed.stdout)}["always-violated"]
    unknown = _judge("grade", "docs/tour/scenario.yaml", "docs/tour/clean.jsonl", "--judge", "plug", "--config",
                     str(config))
    assert unknown.returncode == 2 and "unknown judge backend 'always-violated'" in unknown.stderr


IMPORTER_PLUGIN = '''
import json
from pathlib import Path

from judge.trace.build import ImportSummary
from judge.trace.import_spec import ImporterSpec, ImportOption


def run(source, out, *, scenario="csv"):
    """Each line `user text` or `assistant text` -> one event of one turn each."""
    lines = [l.split(" ", 1) for l in Path(source).read_text().splitlines() if l.strip()]
    events = [{"kind": "run", "run_id": Path(source).stem, "scenario": scenario}]
    events += [{"id": f"e{i}", "turn": i, "kind": role, "text": text} for i, (role, text) in enumerate(lines, 1)]
    Path(out).write_text("".join(json.dumps(e) + "\\n" for e in events))
    summary = ImportSummary(runs=1, files=[Path(out)])
    for e in events[1:]:
        summary.events[e["kind"]] += 1
    return summary


SPEC = ImporterSpec(name="lines", short="role-prefixed lines", help="Import role-prefixed lines as a trace.",
                    source_help="A text file.", out_help="The trace file.", run=run,
                    examples=("judge import lines chat.txt -o run.jsonl",),
                    options=(ImportOption("scenario", ("--scenario",), "Scenario id.", default="csv"),))
'''


def test_a_plugin_importer_from_an_entry_point_imports(tmp_path):
    env = _plugin(tmp_path, "lines_importer", "judge.importers", "lines = lines_importer:SPEC", IMPORTER_PLUGIN)
    source = tmp_path / "chat.txt"
    source.write_text("user hello\nassistant hi there\n")
    out = tmp_path / "run.jsonl"
    done = _judge("import", "lines", str(source), "-o", str(out), "--scenario", "greet", "--json", env_extra=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["events"] == {"assistant": 1, "user": 1}
    header = json.loads(out.read_text().splitlines()[0])
    assert header["scenario"] == "greet"
    helped = _judge("import", "-h", env_extra=env)
    assert "lines" in helped.stdout and "role-prefixed lines" in helped.stdout
    example = _judge("import", "lines", "-h", env_extra=env)
    assert "judge import lines chat.txt -o run.jsonl" in example.stdout


OLD_HOOK_PLUGIN = '''
from typing import Literal

from judge.checks import RuleSpec
from judge.model.rules import RuleBase


class CountedRule(RuleBase):
    check: Literal["counted"]


SPEC = RuleSpec(model=CountedRule, reads=frozenset({"tool-call"}), fields_doc="", violated_when="never",
                check_event=lambda rule, event, ctx, state: None, remember=lambda rule, event, ctx, state: None,
                remembers=frozenset({"tool-call"}))
'''


def test_a_plugin_passing_a_removed_hook_is_one_line_naming_the_tracker(tmp_path):
    # A kind written before the trackers (RuleSpec's `remember`, `remembers`): exit 2, one line that
    # says what answers those hooks now, not dataclass's "unexpected keyword".
    env = _plugin(tmp_path, "counted_kind", "judge.rules", "counted = counted_kind:SPEC", OLD_HOOK_PLUGIN)
    result = _judge("lint", "docs/tour/scenario.yaml", env_extra=env)
    assert result.returncode == 2, result.stdout + result.stderr
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert "RuleSpec no longer takes remember, remembers" in line
    assert "Tracker.remember" in line and "A rule kind of your own" in line
