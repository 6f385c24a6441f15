"""The grader's hot modules compiled by mypyc (judge.compiled, scripts/build_compiled.py): loaded only
while they match their sources, all or none, and grading exactly as the pure-Python sources do."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import judge.trace.load
from judge import compiled

ROOT = Path(__file__).resolve().parent.parent
BUILD = compiled.build_dir()
BUILT = (BUILD / compiled.MANIFEST).is_file()
needs_build = pytest.mark.skipif(not BUILT, reason=f"no compiled build in {BUILD} (make install makes it; "
                                 "scripts/build_compiled.py says why it could not)")


def _manifest() -> dict:
    return json.loads((BUILD / compiled.MANIFEST).read_text(encoding="utf-8"))


def _copy_build(tmp_path: Path) -> Path:
    copy = tmp_path / "judge-compiled"
    shutil.copytree(BUILD, copy)
    return copy


@needs_build
def test_this_process_grades_with_the_compiled_modules():
    # What `make test` runs is what `make install` leaves: compiled, unless the sources changed.
    finder = compiled.install()
    assert finder is not None and finder.reason == "compiled", getattr(finder, "reason", None)
    assert compiled.is_compiled(judge.trace.load)
    for name in compiled.MODULES:
        module = sys.modules.get(name) or __import__(name, fromlist=["_"])
        assert compiled.is_compiled(module), name
        assert Path(module.__file__).is_relative_to(BUILD), module.__file__


@needs_build
def test_a_changed_source_turns_every_module_back_to_python(tmp_path):
    build = _copy_build(tmp_path)
    matching = compiled.CompiledFinder(build)
    assert matching.find_spec("judge.trace.ids") is not None and matching.reason == "compiled"
    library = next(n for n in _manifest()["files"] if n.endswith("__mypyc"))  # the modules' one shared library
    assert matching.find_spec(library) is not None and matching.find_spec("other__mypyc") is None
    assert matching.find_spec("judge.model.events") is None  # not compiled: the usual import

    manifest = _manifest()
    manifest["sources"]["judge/trace/ids.py"] = "0" * 64  # as if ids.py were edited after the build
    (build / compiled.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    stale = compiled.CompiledFinder(build)
    assert [n for n in compiled.MODULES if stale.find_spec(n) is not None] == []  # all or none
    assert "a source changed" in stale.reason


@needs_build
def test_a_build_for_another_interpreter_or_none_at_all_is_not_loaded(tmp_path):
    build = _copy_build(tmp_path)
    manifest = _manifest()
    manifest["cache_tag"] = "cpython-399"
    (build / compiled.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    other = compiled.CompiledFinder(build)
    assert other.find_spec("judge.trace.load") is None and "cpython-399" in other.reason
    assert compiled.CompiledFinder(tmp_path / "nothing").find_spec("judge.trace.load") is None


def test_install_puts_one_finder_first_unless_turned_off_or_nothing_is_built(tmp_path, monkeypatch):
    # (this process has its finder already: each case starts from a meta path without it)
    without = [f for f in sys.meta_path if not isinstance(f, compiled.CompiledFinder)]
    monkeypatch.setattr(sys, "meta_path", list(without))
    monkeypatch.delenv(compiled.ENV_OFF, raising=False)
    assert compiled.install(tmp_path / "nothing") is None and sys.meta_path == without
    build = tmp_path / "build"
    build.mkdir()
    (build / compiled.MANIFEST).write_text("{}", encoding="utf-8")
    monkeypatch.setenv(compiled.ENV_OFF, "1")
    assert compiled.install(build) is None and sys.meta_path == without
    monkeypatch.setenv(compiled.ENV_OFF, "0")
    finder = compiled.install(build)
    assert finder is not None and sys.meta_path[0] is finder and compiled.install(build) is finder
    assert len(sys.meta_path) == len(without) + 1
    # A manifest without its fields (cut short, edited by hand) loads nothing and raises nothing.
    assert finder.find_spec("judge.trace.load") is None and "unreadable manifest" in finder.reason
    (build / compiled.MANIFEST).write_text(json.dumps({"cache_tag": sys.implementation.cache_tag}), encoding="utf-8")
    assert compiled.CompiledFinder(build).find_spec("judge.trace.load") is None


def test_the_manifest_names_exactly_the_sources_the_build_reads():
    # The build is keyed by these digests; a module compiled without its source in the manifest
    # would be loaded after that source changed.
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import build_compiled
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    assert build_compiled.sources() == [f"{n.replace('.', '/')}.py" for n in compiled.MODULES]
    assert all((ROOT / s).is_file() for s in build_compiled.sources())
    # What judge.compiled says stays Python: no compiled module defines a pydantic model (a compiled
    # module's model lost its annotations: the rule registry read an empty `check`). A msgspec struct
    # compiles as a plain Python class (judge.checks.rules.Hit) and is graded the same (the test below).
    for source in build_compiled.sources():
        tree = ast.parse((ROOT / source).read_text(encoding="utf-8"))
        bases = {ast.unparse(b) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for b in node.bases}
        assert not bases & {"BaseModel", "Strict", "RootModel"}, (source, bases)
    if BUILT:
        assert sorted(_manifest()["sources"]) == sorted(build_compiled.sources())
        assert _manifest()["sources"] == compiled.source_digests(build_compiled.sources()), \
            "the build is stale: make install (or scripts/build_compiled.py --if-stale) compiles it again"


_GRADE_ALL = r"""
import json, sys
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from pathlib import Path
from judge import compiled
from judge.api import load_ledger
from judge.grade import grade_trace
import judge.trace.load
from gen_trace import generate
pairs = [(d / "scenario.yaml", t) for d in sorted(Path(sys.argv[1], "examples").iterdir())
         if (d / "scenario.yaml").is_file() for t in sorted(d.glob("*.jsonl"))]
pairs += [generate(20_000, k, 7, Path(sys.argv[2]))[::-1] for k in (1, 20)]  # (trace, scenario)
out = {"compiled": compiled.is_compiled(judge.trace.load), "reports": {}}
for scenario, trace in pairs:
    try:
        report = grade_trace(load_ledger(scenario), trace, judge=None)
        out["reports"][f"{scenario.parent.name}/{scenario.name}/{trace.name}"] = report.model_dump(mode="json")
    except Exception as exc:  # an input error is a result too, and must be the same
        out["reports"][f"{scenario.parent.name}/{scenario.name}/{trace.name}"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


@needs_build
@pytest.mark.slow
def test_compiled_and_pure_python_grade_every_example_the_same(tmp_path):
    def grade(pure: bool) -> dict:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop(compiled.ENV_OFF, None)
        if pure:
            env[compiled.ENV_OFF] = "1"
        done = subprocess.run([sys.executable, "-c", _GRADE_ALL, str(ROOT), str(tmp_path)], env=env,
                              capture_output=True, text=True, check=True, timeout=600)
        return json.loads(done.stdout.strip().splitlines()[-1])

    fast, pure = grade(False), grade(True)
    assert fast["compiled"] is True and pure["compiled"] is False
    assert len(fast["reports"]) >= 20
    for name, report in pure["reports"].items():
        assert fast["reports"][name] == report, name
    # the generated traces hold e-mails and phone numbers (the redaction's slow path) and diverge
    generated = [v for k, v in pure["reports"].items() if k.endswith("trace-20000.jsonl")]
    assert len(generated) == 2
    assert all(isinstance(r, dict) and r["first_divergence"] is not None and r["redactions"] for r in generated)
