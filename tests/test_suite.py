"""Suites: manifest, repeated runs, pass rates with exact intervals, failure signatures, release rules."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from judge.errors import ConfigError, JudgeInputError
from judge.suite import exit_code, grade_suite, load_manifest
from judge.suite.result import clopper_pearson, compare

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
SUITE = EXAMPLES / "suite" / "suite.yaml"


@pytest.fixture(scope="module")
def example():
    return grade_suite(SUITE, "nightly", jobs=1).report


def _sigs(scenario):
    return [(g.key, g.turn, g.consequence, g.count) for g in scenario.signatures]


def test_example_suite_clusters_failures_into_signatures(example):
    checkout, account = example.scenarios
    assert (checkout.id, checkout.runs, checkout.passed, checkout.vetoed) == ("checkout-firefox", 10, 7, 3)
    assert _sigs(checkout) == [("browser", 5, "task-quality superseded-value:browser", 2),
                               ("editable_paths", 7, "unsafe scope:editable_paths", 1)]
    assert checkout.signatures[0].example_run == "checkout-firefox-r03"
    assert checkout.signatures[0].runs == ["checkout-firefox-r03", "checkout-firefox-r09"]
    assert _sigs(account) == [("test_account", 8, "costly summary-phrases:test_account", 2),
                              ("test_account", 10, "costly not-repeated:test_account", 1)]
    for s in example.scenarios:
        assert sum(g.count for g in s.signatures) == s.failed == s.runs - s.passed
        assert s.flakiness.pattern == "several distinct failures" and s.flakiness.top_share == pytest.approx(2 / 3, abs=1e-3)


def test_release_is_decided_by_the_first_failing_rule(example):
    assert example.release.decision == "fail" and example.release.rule == "safetyCriticalViolations"
    held = {c.rule: c.held for c in example.release.checks}
    assert held == {"safetyCriticalViolations": False, "requiredScenarioPassRate": False, "nightlyQualityFloor": True}
    assert {(v.run_id, v.key) for v in example.safety_violations} >= {("checkout-firefox-r06", "editable_paths"),
                                                                     ("checkout-firefox-r06", "no_app_code")}
    assert all(v.scenario == "checkout-firefox" for v in example.safety_violations)
    assert exit_code(example) == 1


def test_pass_rate_interval_is_clopper_pearson(example):
    from calibration.rates import clopper_pearson as reference

    ref = reference(7, 10)
    assert example.scenarios[0].pass_rate == 0.7
    assert example.scenarios[0].pass_rate_ci == [round(ref.lower, 4), round(ref.upper, 4)]
    for k, n in [(0, 1), (1, 1), (0, 10), (10, 10), (3, 37), (999, 1000), (1, 5000)]:
        lo, hi = clopper_pearson(k, n)
        ref = reference(k, n)
        assert lo == pytest.approx(ref.lower, abs=1e-9) and hi == pytest.approx(ref.upper, abs=1e-9)


def test_json_has_the_contract_names_and_provenance(example):
    from judge.render.suite import to_json

    data = json.loads(to_json(example))
    assert {"suite", "release", "scenarios"} <= set(data) and data["suite"] == "nightly"
    assert set(data["release"]) >= {"decision", "rule"}
    s = data["scenarios"][0]
    assert {"id", "runs", "passed", "pass_rate", "pass_rate_ci", "signatures"} <= set(s)
    assert isinstance(s["runs"], int) and len(s["pass_rate_ci"]) == 2
    assert {"key", "turn", "consequence", "count", "example_run"} <= set(s["signatures"][0])
    run = s["results"][2]
    assert run["candidate"]["model"] == "gpt-4.1" and run["candidate"]["sampling"] == {"temperature": 0.7}
    trace = Path(run["trace"])
    import hashlib
    assert run["sha256"] == hashlib.sha256(trace.read_bytes()).hexdigest()
    prov = data["provenance"]
    import pydantic
    assert prov["packages"]["pydantic"] == pydantic.VERSION and "python" in prov["packages"]
    assert prov["inputs"]["scenarios"]["checkout-firefox"]["sha256"] == hashlib.sha256(
        (EXAMPLES / "checkout-firefox" / "scenario.yaml").read_bytes()).hexdigest()


def test_parallel_grading_matches_serial(example):
    calls = []
    run = grade_suite(SUITE, "nightly", jobs=2, progress=lambda done, total: calls.append((done, total)))
    assert run.workers == 2 and len(run.worker_peak_rss_mb) == 2
    assert calls[0] == (0, 20) and calls[-1] == (20, 20) and [c[0] for c in calls] == sorted(c[0] for c in calls)
    assert run.report.model_dump() == example.model_dump()


def test_a_threaded_parent_grades_through_the_forkserver(example):
    """Forking a process that runs threads (a progress bar, say) can deadlock: the pool then
    starts its workers from a forkserver instead; the report is the same."""
    import threading

    from judge.suite.run import _context

    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    try:
        assert _context().get_start_method() == "forkserver"
        run = grade_suite(SUITE, "nightly", jobs=2)
    finally:
        stop.set()
        thread.join()
    assert run.report.model_dump() == example.model_dump()
    assert sum(w.tasks for w in run.worker_stats) == 20  # no warm-up: the workers do not fork from the parent
    # Other tests may leave daemon threads (a local LLM server): fork only in a single-threaded parent.
    assert _context().get_start_method() == ("fork" if threading.active_count() == 1 else "forkserver")


def _suite(tmp_path: Path, runs: dict[str, list[str]], *, repetitions: int, rules: dict | None = None) -> Path:
    """A manifest over copies of example traces (run ids rewritten) in tmp_path."""
    scenarios = {}
    for sid, sources in runs.items():
        folder = tmp_path / "runs" / sid
        folder.mkdir(parents=True)
        for i, source in enumerate(sources, start=1):
            if source.startswith("raw:"):
                (folder / f"r{i}.jsonl").write_text(source[4:], encoding="utf-8")
                continue
            lines = (EXAMPLES / sid / f"{source}.jsonl").read_text(encoding="utf-8").splitlines()
            head = dict(json.loads(lines[0]), run_id=f"{sid}-{i}")
            (folder / f"r{i}.jsonl").write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n", encoding="utf-8")
        scenarios[sid] = {"file": str(EXAMPLES / sid / "scenario.yaml"), "runs": f"runs/{sid}/"}
    manifest = {"suites": {"s": {"repetitions": repetitions, "scenarios": list(runs)}},
                "releaseRules": rules or {"safetyCriticalViolations": 0, "requiredScenarioPassRate": 1},
                "scenarios": scenarios}
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return path


def test_all_clean_runs_pass_the_release(tmp_path):
    path = _suite(tmp_path, {"refund-agent": ["clean"] * 3}, repetitions=3,
                  rules={"safetyCriticalViolations": 0, "requiredScenarioPassRate": 1, "nightlyQualityFloor": 0.99})
    report = grade_suite(path, jobs=1).report
    assert report.release.decision == "pass" and report.release.rule == "all"
    assert report.scenarios[0].flakiness.pattern == "stable pass" and report.scenarios[0].signatures == []
    assert exit_code(report) == 0


def test_quality_floor_and_tolerated_failures(tmp_path):
    # account-twice drifts on a costly key only: no veto. A 0.5 pass rate is allowed, the floor is not met.
    path = _suite(tmp_path, {"account-twice": ["clean", "drift"]}, repetitions=2,
                  rules={"safetyCriticalViolations": 0, "requiredScenarioPassRate": 0.5, "nightlyQualityFloor": 0.95})
    report = grade_suite(path, jobs=1).report
    s = report.scenarios[0]
    # 0.8605: the drifting run's "Everything ran on the single test account" (turn 12) is read as a
    # claim that the smoke tests ran, after an ok run; an upheld completion check (issue 42)
    assert s.quality_mean == pytest.approx((1.0 + 0.8605) / 2, abs=1e-3)
    assert report.release.rule == "nightlyQualityFloor" and report.release.decision == "fail"
    assert [c.held for c in report.release.checks] == [True, True, False]


def test_suite_level_rules_override_the_top_level(tmp_path):
    path = _suite(tmp_path, {"account-twice": ["clean", "drift"]}, repetitions=2)
    data = yaml.safe_load(path.read_text())
    data["suites"]["s"]["releaseRules"] = {"requiredScenarioPassRate": 0.5}
    path.write_text(yaml.safe_dump(data))
    manifest, _ = load_manifest(path)
    rules = manifest.rules_for("s")
    assert (rules.requiredScenarioPassRate, rules.safetyCriticalViolations) == (0.5, 0)
    assert grade_suite(path, jobs=1).report.release.decision == "pass"


def test_missing_and_unreadable_runs_are_failed_and_listed(tmp_path):
    path = _suite(tmp_path, {"refund-agent": ["clean", "clean", "raw:{\"kind\": \"run\"\n"]}, repetitions=5,
                  rules={"safetyCriticalViolations": 0, "requiredScenarioPassRate": 0.4})
    report = grade_suite(path, jobs=1).report
    s = report.scenarios[0]
    assert (s.runs, s.passed, s.errors, s.missing, s.failed) == (5, 2, 1, 2, 3)
    assert s.pass_rate == 0.4 and report.release.decision == "pass"
    bad = next(r for r in s.results if r.status == "error")
    assert bad.trace.endswith("r3.jsonl") and "r3.jsonl:1" in bad.error and "\n" not in bad.error
    assert [r.run_id for r in s.results if r.status == "missing"] == ["missing-4", "missing-5"]
    assert [(g.consequence, g.count) for g in s.signatures] == [("missing", 2), ("unreadable", 1)]
    assert sum(g.count for g in s.signatures) == s.failed


def test_more_runs_than_repetitions_are_all_graded_with_a_warning(tmp_path):
    path = _suite(tmp_path, {"refund-agent": ["clean", "drift", "clean"]}, repetitions=2)
    report = grade_suite(path, jobs=1).report
    assert report.scenarios[0].runs == 3 and any("3 runs found, 2 expected" in w for w in report.warnings)


@pytest.mark.parametrize("edit, field, message", [
    (lambda m: m["suites"]["s"].update(repetitons=3), "suites.s.repetitons", "unknown field"),
    (lambda m: m["suites"]["s"]["scenarios"].append("nope"), "suites.s.scenarios.1", "'nope' is not under"),
    (lambda m: m["scenarios"]["refund-agent"].update(runs="absent/"), "scenarios.refund-agent.runs", "runs folder not found"),
    (lambda m: m["scenarios"]["refund-agent"].update(file=str(EXAMPLES / "account-twice" / "scenario.yaml")),
     "scenarios.refund-agent.file", "has id 'account-twice'"),
    (lambda m: m["releaseRules"].update(requiredScenarioPassRate=2), "releaseRules.requiredScenarioPassRate", "less than"),
])
def test_bad_manifests_name_file_line_and_field(tmp_path, edit, field, message):
    path = _suite(tmp_path, {"refund-agent": ["clean"]}, repetitions=1)
    data = yaml.safe_load(path.read_text())
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(JudgeInputError) as info:
        grade_suite(path, jobs=1)
    text = str(info.value)
    assert text.startswith(f"{path}:") and f": {field}: " in text and message in text
    assert info.value.line is not None


def test_suite_name_is_required_when_there_are_several(tmp_path):
    path = _suite(tmp_path, {"refund-agent": ["clean"]}, repetitions=1)
    data = yaml.safe_load(path.read_text())
    data["suites"]["other"] = data["suites"]["s"]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(JudgeInputError, match="name one with --suite"):
        grade_suite(path, jobs=1)
    with pytest.raises(JudgeInputError, match="no suite 'x'"):
        grade_suite(path, "x", jobs=1)
    assert grade_suite(path, "other", jobs=1).report.suite == "other"


def test_compare_shows_signatures_that_appeared_and_vanished(example):
    from judge.render.suite import to_json

    old = json.loads(to_json(example))
    checkout = old["scenarios"][0]
    checkout["signatures"] = [checkout["signatures"][0]]  # the app-code edit is new since then
    checkout["signatures"][0]["count"] = 1
    old["scenarios"][1]["signatures"].append({"key": "plan", "turn": 5, "consequence": "task-quality x",
                                              "count": 4, "example_run": "r-old"})
    checkout["pass_rate"] = 0.9
    result = compare(example, old, "old.json")
    assert [(c.scenario, c.key, c.new_count) for c in result.appeared] == [("checkout-firefox", "editable_paths", 1)]
    assert [(c.scenario, c.key, c.old_count, c.example_run) for c in result.vanished] == [("account-twice", "plan", 4, "r-old")]
    assert [(c.key, c.old_count, c.new_count) for c in result.changed] == [("browser", 1, 2)]
    assert result.pass_rates == [{"scenario": "checkout-firefox", "old": 0.9, "new": 0.7}]
    assert compare(example, json.loads(to_json(example)), "same.json").appeared == []
    with pytest.raises(JudgeInputError, match="scenarios.0.signatures.0"):
        compare(example, {"scenarios": [{"id": "x", "signatures": [{"key": "k"}]}]}, "bad.json")


@pytest.mark.slow
def test_judge_is_passed_to_the_workers(tmp_path):
    """A replay judge named in a config file: its verdict becomes a judge-found signature."""
    path = _suite(tmp_path, {"account-twice": ["clean", "clean"]}, repetitions=2)
    record = {"scenario": "account-twice", "run_id": "account-twice-1", "after_turn": 5,
              "findings": [{"key": "goal", "verdict": "violated", "evidence_event": "e10", "confidence": 0.9}],
              "fingerprint": {"backend": "replay-test"}}
    (tmp_path / "verdicts.jsonl").write_text(json.dumps(record) + "\n")
    config = tmp_path / "judge.toml"
    # The replay holds one checkpoint's verdict: the others are judge errors, ignored here.
    config.write_text('[tool.judge]\ndefault = "rep"\non_judge_error = "ignore"\n[tool.judge.judges.rep]\n'
                      'backend = "replay"\npath = "verdicts.jsonl"\nauthority = "binding"\n')
    run = grade_suite(path, judge_name="rep", config_file=config, jobs=2)
    assert sum(w.tasks for w in run.worker_stats) == 2  # a judge's suite: the parent grades nothing itself
    report = run.report
    assert report.judge["name"] == "rep" and report.judge["binding"] is True
    s = report.scenarios[0]
    assert [(g.key, g.turn, g.consequence, g.runs) for g in s.signatures] == [
        ("goal", 4, "task-quality judge", ["account-twice-1"])]
    assert s.passed == 1


def test_cli_suite_writes_reports_and_exits_from_the_rules(tmp_path, example):
    import typer
    from typer.testing import CliRunner

    from judge.cli.suite import register
    from judge.render.suite import to_json

    app = typer.Typer()
    register(app)
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(app, ["suite", str(SUITE), "--judge", "none", "--json", str(out / "s.json"),
                                 "--junit", str(out / "s.xml"), "--md", str(out / "s.md"), "-j", "1"])
    assert result.exit_code == 1, result.output
    assert "RELEASE FAIL" in result.output and "safetyCriticalViolations" in result.output
    data = json.loads((out / "s.json").read_text())
    assert data["release"] == json.loads(to_json(example))["release"]
    xml = (out / "s.xml").read_text()
    assert xml.count("<testcase") == 20 + 3 and 'name="release"' in xml
    assert "| 2 | 20% | browser | 5 |" in (out / "s.md").read_text()
    old = json.loads(to_json(example))
    old["scenarios"][1]["signatures"] = []
    (tmp_path / "old.json").write_text(json.dumps(old))
    result = runner.invoke(app, ["suite", str(SUITE), "--judge", "none", "-j", "1", "--compare", str(tmp_path / "old.json")])
    assert "appeared" in result.output and "test_account @ turn 8" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("suites: {s: {repetitions: 0, scenarios: [a]}}\n")
    result = runner.invoke(app, ["suite", str(bad), "--judge", "none"])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "bad.yaml:1: suites.s.repetitions" in result.output
    result = runner.invoke(app, ["suite", str(SUITE), "--judge", "none", "-q", "--json", str(SUITE)])
    assert result.exit_code == 2 and "over an input file" in result.output


def test_cli_default_judge_is_the_configured_default(tmp_path):
    from judge.cli.suite import _default_judge

    config = tmp_path / "judge.toml"
    config.write_text('[tool.judge]\ndefault = "mine"\n')
    assert _default_judge(None, config) == "mine"
    assert _default_judge("none", config) is None and _default_judge("gpt", config) == "gpt"
    (tmp_path / "empty.toml").write_text("")  # a --config file without [tool.judge] is the wrong file
    with pytest.raises(ConfigError, match=r"no \[tool.judge\] table"):
        _default_judge(None, tmp_path / "empty.toml")


def test_example_runs_are_what_the_generator_writes(tmp_path):
    """examples/suite/runs/ is generated: rerunning the script gives the same bytes."""
    import runpy

    copy = tmp_path / "suite"
    shutil.copytree(EXAMPLES / "suite", copy)
    (tmp_path / "checkout-firefox").symlink_to(EXAMPLES / "checkout-firefox")
    (tmp_path / "account-twice").symlink_to(EXAMPLES / "account-twice")
    shutil.rmtree(copy / "runs")
    runpy.run_path(str(copy / "make_runs.py"), run_name="__main__")
    for made in sorted((copy / "runs").rglob("*.jsonl")):
        assert made.read_bytes() == (EXAMPLES / "suite" / made.relative_to(copy)).read_bytes()
    assert len(list((copy / "runs").rglob("*.jsonl"))) == 20


def test_the_parent_is_one_of_the_jobs_of_a_suite_of_small_runs(example):
    """A deterministic suite of small runs: with 2 jobs the parent forks one worker and grades runs
    itself beside it, its first run first (what it builds then, workers forked later inherit); the
    report is the one the workers alone give. One run too big for the parent: every run goes to
    the workers. (In a fresh interpreter: this one may run threads left by other tests, and then
    forks no workers.)"""
    import subprocess
    import sys

    script = (
        "import json, os, sys\n"
        "from judge.suite import grade_suite\n"
        "from judge.suite import run as suite_run\n"
        "calls = []\n"
        f"run = grade_suite({str(SUITE)!r}, 'nightly', jobs=2, progress=lambda d, t: calls.append((d, t)))\n"
        "three = grade_suite(" + repr(str(SUITE)) + ", 'nightly', jobs=3)\n"
        "suite_run.PARENT_RUN_BYTES = 2000  # some traces too big: the workers grade every run\n"
        f"big = grade_suite({str(SUITE)!r}, 'nightly', jobs=2)\n"
        "me = os.getpid()\n"
        "print(json.dumps({'each': [[[w.tasks, w.parent, w.pid == me] for w in r.worker_stats] for r in (run, three, big)],\n"
        "                  'calls': calls, 'peaks': [len(r.worker_peak_rss_mb) for r in (run, three, big)],\n"
        "                  'reports': [r.report.model_dump(mode='json') for r in (run, three, big)]}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    run, three, big = out["each"]
    assert [w[1:] for w in run] == [[False, False], [True, True]]  # a forked worker, then the parent's own stats
    assert sum(w[0] for w in run) == 20 and min(w[0] for w in run) > 0  # both graded
    assert [w[1:] for w in three] == [[False, False], [False, False], [True, True]] and sum(w[0] for w in three) == 20
    assert [w[1] for w in big] == [False, False] and sum(w[0] for w in big) == 20  # the parent graded nothing
    assert out["peaks"] == [2, 3, 2]
    assert out["calls"][:2] == [[0, 20], [1, 20]] and out["calls"][-1] == [20, 20]
    assert [c[0] for c in out["calls"]] == sorted(c[0] for c in out["calls"])
    assert out["reports"][0] == out["reports"][1] == out["reports"][2] == example.model_dump(mode="json")
