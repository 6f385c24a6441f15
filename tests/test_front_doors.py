"""The lazy front doors (docs/architecture.md, rules 3 and 6): a stage's `__init__`, judge/api.py and
calibration/__init__.py offer the names of their `if TYPE_CHECKING:` imports, each imported on first
use by the `__getattr__` scripts/front_doors.py writes from them with plain import statements, and
judge/cli/lazy.py imports its command modules the same way. What is written is what the imports
say; every lazy name resolves to its module's object and is listed; importing a front door loads
none of its lazy modules; nothing in them imports by a computed name."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "front_doors.py"


def _script():
    """scripts/front_doors.py, imported (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("front_doors", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FRONT_DOORS = _script().front_doors(ROOT)
PACKAGES = {".".join(p.with_suffix("").parts).removesuffix(".__init__"): p for p in FRONT_DOORS
            if p.as_posix() != "judge/cli/lazy.py"}


def _lazy(package: str) -> dict[str, tuple[str, str]]:
    """name offered -> (its module, its attribute there), from the package's TYPE_CHECKING block."""
    tree = ast.parse((ROOT / PACKAGES[package]).read_text(encoding="utf-8"))
    return {name: (module, attribute) for module, names in _script().lazy_names(tree).items()
            for name, attribute in names.items()}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_the_front_doors_are_found():
    assert {"judge.api", "judge.draft", "judge.grade", "judge.judges", "judge.render", "judge.suite",
            "judge.summaries", "judge.text", "judge.trace", "calibration"} <= set(PACKAGES)
    assert Path("judge/cli/lazy.py") in FRONT_DOORS


def test_the_front_doors_are_what_their_imports_say():
    done = _run("--check")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_lazy_import_added_without_regenerating_fails_the_check(tmp_path):
    """On a copy of judge/grade: --check names the stale file, --write makes it what --check wants."""
    init = tmp_path / "judge" / "grade" / "__init__.py"
    init.parent.mkdir(parents=True)
    shutil.copy(ROOT / "judge" / "grade" / "__init__.py", init)
    assert _run("--check", "--root", str(tmp_path)).returncode == 0
    text = init.read_text(encoding="utf-8")
    init.write_text(text.replace("if TYPE_CHECKING:\n", "if TYPE_CHECKING:\n"
                                 "    from judge.grade.divergence import first_divergence as divergence\n"),
                    encoding="utf-8")
    stale = _run("--check", "--root", str(tmp_path))
    assert stale.returncode == 1 and "stale: judge/grade/__init__.py" in stale.stdout, stale.stdout
    assert _run("--write", "--root", str(tmp_path)).returncode == 0
    assert _run("--check", "--root", str(tmp_path)).returncode == 0
    written = init.read_text(encoding="utf-8")
    assert 'elif name == "divergence":\n            import judge.grade.divergence as module\n' \
           '            name = {"divergence": "first_divergence"}.get(name, name)\n' in written
    assert '"divergence"' in written.split("__all__ = [", 1)[1].split("]", 1)[0]
    assert (ROOT / "judge" / "grade" / "__init__.py").read_text(encoding="utf-8") == text  # the tree untouched


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_lazy_name_resolves_and_is_listed(package):
    stage = importlib.import_module(package)
    lazy = _lazy(package)
    assert lazy, package
    for name, (module, attribute) in lazy.items():
        assert getattr(stage, name) is getattr(importlib.import_module(module), attribute), name
        assert name in stage.__all__ and name in dir(stage), name
    for name in stage.__all__:
        getattr(stage, name)  # every listed name exists
    assert stage.__all__ == sorted(stage.__all__)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'no_such_name'"):
        stage.no_such_name  # noqa: B018


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_importing_a_front_door_loads_none_of_its_lazy_modules(package):
    """In a fresh interpreter (`import judge.grade` leaves judge.grade.history, .align and .bias out)."""
    targets = sorted({module for module, _ in _lazy(package).values()})
    code = f"import json, sys\nimport {package}\nprint(json.dumps([m for m in {targets!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


@pytest.mark.parametrize("path", FRONT_DOORS, ids=str)
def test_no_front_door_imports_by_a_computed_name(path):
    text = (ROOT / path).read_text(encoding="utf-8")
    assert "importlib" not in text and "__import__" not in text


def test_calibration_front_door_imports_only_calibration():
    tree = ast.parse((ROOT / "calibration" / "__init__.py").read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert imported and all(m == "__future__" or m == "typing" or m.startswith("calibration.") for m in imported)


def test_a_stage_still_gives_its_submodules():
    """`from judge.render import style` (the library's own idiom) is the submodule, not a lazy name."""
    from judge.render import style
    from judge.text import cues

    assert style.__name__ == "judge.render.style" and cues.__name__ == "judge.text.cues"


def test_a_lazy_name_reads_its_inner_module_as_it_is_now(monkeypatch):
    """Nothing is cached in the stage: patching the inner module (as tests do) shows through the
    front door, as it did when the CLI imported the inner module by name."""
    import judge.text
    import judge.text.minilm

    def stand_in(name_or_path="m", runtime="auto"):
        return name_or_path

    monkeypatch.setattr(judge.text.minilm, "load_embedding_model", stand_in)
    assert judge.text.load_embedding_model is stand_in
