"""Issue 41: a corpus grade keeps each trace's result in the run's cache (judge.suite.trace_cache), so a rerun
over an unchanged corpus grades nothing; a changed trace byte, policy, judge or code misses, and the report
is the same cached or not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_corpus import POLICY, _grade, corpus

import judge.suite.run
import judge.suite.trace_cache as trace_cache
from judge.suite.corpus import grade_corpus

JUDGED = POLICY + """  - {key: staging_only, class: constraint, value: only ever touch the staging database, sensitivity: costly}
"""


@pytest.fixture
def graded(monkeypatch, tmp_path) -> list[str]:
    """The traces graded (names), in this process (one job), with a cache folder of the test's own."""
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    names: list[str] = []
    real = judge.suite.run.grade_task

    def counting(task):
        names.append(task.name)
        return real(task)

    monkeypatch.setattr(judge.suite.run, "grade_task", counting)
    return names


@pytest.fixture
def policy(tmp_path) -> Path:
    path = tmp_path / "house.yaml"
    path.write_text(POLICY)
    return path


def _report(paths, policy, **kw) -> dict:
    return grade_corpus([str(p) for p in paths], str(policy), jobs=1, **kw).model_dump(mode="json", by_alias=True)


def test_a_rerun_of_an_unchanged_corpus_grades_nothing_and_reports_the_same(policy, tmp_path, graded):
    folder = corpus(tmp_path / "c", 12, 3, 4)
    many = corpus(tmp_path / "m", 6, 1, 2, one_file=True)  # traces inside one JSONL, by span
    first = _report([folder, many], policy)
    assert len(graded) == 18
    again = _report([folder, many], policy)
    assert len(graded) == 18, graded[18:]  # main graded all 18 again
    assert again == first
    assert first["outcomes"]["fail"] >= 3 and first["failing_sample"]


def test_the_cli_report_is_byte_identical_cached_or_not(policy, tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    folder = corpus(tmp_path / "c", 10, 2, 3)
    outs = [tmp_path / f"{n}.json" for n in ("first", "cached", "uncached")]
    for out, args in zip(outs, [(), (), ("--no-cache",)], strict=True):
        assert _grade(policy, folder, out, "-q", "--jobs", "2", *args).exit_code == 0
    assert outs[0].read_bytes() == outs[1].read_bytes() == outs[2].read_bytes()
    assert (tmp_path / "cache" / "verdicts.sqlite3").is_file()


def test_no_cache_grades_every_trace_and_keeps_nothing(policy, tmp_path, graded):
    folder = corpus(tmp_path / "c", 5, 1, 1)
    _report([folder], policy, cache=False)
    _report([folder], policy, cache=False)
    assert len(graded) == 10
    _report([folder], policy)  # nothing was kept for it to read
    assert len(graded) == 15


def test_a_changed_trace_byte_misses(policy, tmp_path, graded):
    folder = corpus(tmp_path / "c", 6, 0, 0)
    first = _report([folder], policy)
    assert first["outcomes"]["fail"] == 0
    trace = sorted(folder.glob("*.jsonl"))[0]
    trace.write_text(trace.read_text().replace('"tool": "db_query"', '"tool": "deploy"  '))  # same length
    changed = _report([folder], policy)
    assert graded.count(str(trace)) == 2 and len(graded) == 7
    assert changed["outcomes"]["fail"] == 1


def test_a_changed_trace_inside_a_jsonl_of_many_misses(policy, tmp_path, graded):
    many = corpus(tmp_path / "m", 4, 0, 0, one_file=True)
    assert _report([many], policy)["outcomes"]["fail"] == 0
    lines = many.read_text().splitlines(keepends=True)
    lines[-2] = lines[-2].replace('"db_query"', '"deploy"  ')  # the last run's call
    many.write_text("".join(lines))
    assert _report([many], policy)["outcomes"]["fail"] == 1
    assert len(graded) == 5


def test_a_changed_policy_misses(policy, tmp_path, graded):
    folder = corpus(tmp_path / "c", 6, 2, 0)
    assert _report([folder], policy)["outcomes"]["fail"] == 2
    policy.write_text(POLICY.replace("tool: deploy}", "tool: deploy_prod}"))  # same path, another rule
    assert _report([folder], policy)["outcomes"]["fail"] == 0
    assert len(graded) == 12


def test_a_changed_judge_or_grade_policy_misses(policy, tmp_path, graded, monkeypatch):
    from judge.grade import GradeSession

    def key(name: str, **kw) -> str:
        return trace_cache.context_key(policy_sha256="p", tools=None, session=GradeSession.open(name, **kw))

    assert key("none") == key("none")
    assert len({key("none"), key("local"), key("local", on_judge_error="ignore")}) == 3
    from judge.model.fingerprint import JudgeFingerprint

    session = GradeSession.open("local")
    before = trace_cache.context_key(policy_sha256="p", tools=None, session=session)
    assert session.judge_print is not None
    dumped = session.judge_print.dump()
    session.judge_print = JudgeFingerprint.model_validate({**dumped, "code_sha256": "0" * 64})  # the judge's own code
    assert trace_cache.context_key(policy_sha256="p", tools=None, session=session) != before


def test_a_changed_tools_file_misses(policy, tmp_path, graded):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "deploy", "parameters": {}}}]))
    folder = corpus(tmp_path / "c", 4, 1, 0)
    _report([folder], policy, tools=tools)
    _report([folder], policy, tools=tools)
    assert len(graded) == 4
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "deploy", "description": "ship it",
                                                                   "parameters": {}}}]))
    _report([folder], policy, tools=tools)
    assert len(graded) == 8


def test_a_changed_code_or_version_misses(policy, tmp_path, graded, monkeypatch):
    folder = corpus(tmp_path / "c", 4, 1, 0)
    _report([folder], policy)
    version = trace_cache.__version__
    monkeypatch.setattr(trace_cache, "__version__", "99.0.0")
    _report([folder], policy)
    assert len(graded) == 8
    monkeypatch.setattr(trace_cache, "__version__", version)
    _report([folder], policy)
    assert len(graded) == 8  # the first version's results are still there
    monkeypatch.setattr(trace_cache, "code_sha256", lambda: "0" * 64)
    _report([folder], policy)
    assert len(graded) == 12


def test_the_code_identity_is_every_source_and_data_file(tmp_path):
    root = tmp_path / "pkg"
    (root / "checks" / "__pycache__").mkdir(parents=True)
    (root / "checks" / "rule.py").write_text("LIMIT = 3\n")
    (root / "text" / "serves.json").parent.mkdir()
    (root / "text" / "serves.json").write_text('{"threshold": 0.3}')
    base = trace_cache.tree_sha256(root)
    (root / "checks" / "__pycache__" / "rule.cpython-311.pyc").write_bytes(b"\0")
    assert trace_cache.tree_sha256(root) == base  # bytecode is no source
    (root / "checks" / "rule.py").write_text("LIMIT = 4\n")
    edited = trace_cache.tree_sha256(root)
    (root / "text" / "serves.json").write_text('{"threshold": 0.4}')
    assert len({base, edited, trace_cache.tree_sha256(root)}) == 3
    assert trace_cache.code_sha256() == trace_cache.tree_sha256(Path(judge.__file__).parent)


def test_a_run_with_a_judge_error_or_an_unreadable_trace_is_not_kept(tmp_path):
    class Store:
        def __init__(self) -> None:
            self.entries: dict[str, dict] = {}

        def get(self, key):
            return self.entries.get(key)

        def put(self, key, entry):
            self.entries[key] = json.loads(json.dumps(entry))
            return True

    kept = trace_cache.TraceResults(Store(), "ctx")
    kept.keep(["a", "b", "c", None], [{"status": "passed", "judge_errors": 0, "slice": ("e1",)},
                                      {"status": "passed", "judge_errors": 2},
                                      {"status": "error", "error": "line 3: not JSON"}, {"status": "passed"}])
    assert list(kept.store.entries) == ["a"] and kept.store.entries["a"]["result"]["slice"] == ["e1"]


def test_a_cached_rerun_sends_the_engine_nothing(policy, tmp_path, graded):
    """Every result read back: no task goes to Ray, so not even its address is needed (nothing listens
    on port 1; the first run grades locally)."""
    folder = corpus(tmp_path / "c", 4, 1, 0)
    first = _report([folder], policy)
    from judge.suite.engine import Engine

    assert _report([folder], policy, engine=Engine("ray", "127.0.0.1:1")) == first
    assert len(graded) == 4


def test_the_progress_counts_the_cached_traces_as_done(policy, tmp_path, graded):
    folder = corpus(tmp_path / "c", 6, 0, 0)
    _report([folder], policy)
    trace = sorted(folder.glob("*.jsonl"))[0]
    trace.write_text(trace.read_text().replace("staging", "Staging"))
    seen: list[tuple[int, int]] = []
    _report([folder], policy, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(5, 6), (6, 6)]  # one trace graded, five read back (main: (0, 1), (1, 1))
    seen.clear()
    _report([folder], policy, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(6, 6)]


def test_a_corpus_graded_by_rules_alone_imports_no_numpy(policy, tmp_path):
    """The report's rates without a judge are observed shares with Wilson intervals (calibration.corpus):
    numpy and the calibration record's models are imported only to correct a judge's rates (issue 41: a
    cached rerun paid ~0.07 CPU-s for them)."""
    import os
    import subprocess
    import sys

    folder = corpus(tmp_path / "c", 8, 2, 1)
    code = ("import json, sys\nfrom judge.suite.corpus import grade_corpus\n"
            f"report = grade_corpus([{str(folder)!r}], {str(policy)!r}, jobs=1)\n"
            "print(json.dumps([sorted(m for m in ('numpy', 'calibration.record') if m in sys.modules), "
            "report.model_dump(mode='json', by_alias=True)['outcomes']]))")
    env = dict(os.environ, JUDGE_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(Path(__file__).parents[1]))
    for _ in range(2):  # the first run and the cached rerun
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        imported, outcomes = json.loads(out.stdout.strip().splitlines()[-1])
        assert imported == [] and outcomes["fail"] >= 1 and sum(outcomes.values()) == 8, (imported, outcomes)
