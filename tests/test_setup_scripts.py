"""Issue 39, item 3: set-up that says what it does. `make install` (scripts/install.py) says each step
with its elapsed time and, while pip works, a line every few seconds with what pip is doing; `make
demo` (scripts/demo.py) closes with a tally: what was graded, what failed by design, what did not come
out as designed, and the next command."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"scripts_{name}", REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"scripts_{name}"] = module  # (a dataclass looks its module up)
    spec.loader.exec_module(module)
    return module


install = _script("install")
demo = _script("demo")


def test_a_long_step_says_its_elapsed_time_and_what_pip_is_doing(tmp_path):
    log, said = tmp_path / "install.log", []
    step = ("import sys, time; print('Collecting scipy==1.17.1'); sys.stdout.flush(); time.sleep(0.9); "
            "print('  Downloading scipy-1.17.1.whl (35.2 MB)'); sys.stdout.flush(); time.sleep(0.9)")
    code = install.run_step("2/4 scipy", [sys.executable, "-c", step], log, every=0.3, say=said.append)
    assert code == 0 and said[0] == "install: 2/4 scipy" and said[-1].startswith("install:   done in ")
    beats = said[1:-1]
    assert len(beats) >= 3 and all(b.startswith("install:   ... ") for b in beats)
    assert any("(pip: Collecting scipy==1.17.1)" in b for b in beats)
    assert "(pip: Downloading scipy-1.17.1.whl (35.2 MB))" in beats[-1]
    assert "Collecting scipy" in log.read_text()  # pip's own output is kept, not shown


def test_a_failed_step_shows_the_log_tail_and_returns_the_code(tmp_path):
    log, said = tmp_path / "install.log", []
    step = "import sys; print('ERROR: No matching distribution found for nothere==9'); sys.exit(3)"
    code = install.run_step("3/4 judge", [sys.executable, "-c", step], log, every=60, say=said.append)
    assert code == 3
    assert any("FAILED after" in line and "exit code 3" in line for line in said)
    assert any("No matching distribution found for nothere==9" in line for line in said)


def test_elapsed_reads_as_minutes_past_a_minute():
    assert install.elapsed(37.2) == "37 s" and install.elapsed(125) == "2 min 05 s"


def test_the_makefile_installs_through_the_script():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "scripts/install.py" in makefile and "scripts/demo.py" in makefile
    assert install.TORCH == "torch==2.13.0"


def _examples(tmp_path: Path, clean_drifts: bool) -> Path:
    folder = tmp_path / "examples" / "tour"
    shutil.copytree(REPO / "docs" / "tour", folder)
    if clean_drifts:  # a "clean" run that breaks a rule: not the designed outcome
        shutil.copy(folder / "drift.jsonl", folder / "clean.jsonl")
    return tmp_path / "examples"


@pytest.mark.slow
@pytest.mark.parametrize("clean_drifts", [False, True])
def test_the_demo_closes_with_a_tally_and_fails_on_an_outcome_not_designed(tmp_path, clean_drifts):
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "demo.py"), "--judge", "none",
                           "--examples", str(_examples(tmp_path, clean_drifts))],
                          capture_output=True, text=True, timeout=300)
    tally = done.stdout[done.stdout.index("demo: graded"):]
    assert "demo: graded 1 scenarios, 2 runs, with the 'none' judge" in tally
    assert "demo: next: .venv/bin/judge init my-agent" in tally
    if clean_drifts:
        assert done.returncode == 1 and "0 clean runs passed" in tally and "2 drifting runs failed" not in tally
        assert "1 runs did NOT come out as designed" in tally and "clean.jsonl: fail (designed: pass)" in tally
    else:
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 clean runs passed" in tally and "1 drifting runs failed, as designed (1 of them vetoed" in tally
        assert "every run came out as designed" in tally
