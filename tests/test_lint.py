"""The linters run in the README's test command (`make test`, and so CI): ruff and mypy, with the rule
selection and strictness of pyproject.toml ([tool.ruff.lint], [tool.mypy]), report nothing.

Both run as the installed commands of this virtual environment, from the repository root, so what
this test sees is what `ruff check` and `mypy` print there (CONTRIBUTING.md: running them alone)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _run(tool: str, *args: str, timeout: int, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    exe = BIN / tool
    if not exe.exists():
        pytest.fail(f"{tool} is not installed in {BIN} (it is in the test extra: `make install`)")
    return subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          input=stdin)


def test_ruff_reports_nothing():
    done = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".", timeout=300)
    assert done.returncode == 0, f"ruff check found:\n{done.stdout}{done.stderr}"


def test_ruff_selects_the_rule_families_the_project_promises():
    """The selection is explicit (no silent fall-back to ruff's defaults), and the docstring rules
    cover the public modules."""
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert {"E", "W", "F", "I", "B", "UP", "D"} <= set(lint["select"])
    assert lint["pydocstyle"]["convention"] == "google"
    undocumented = _run("ruff", "check", "--no-cache", "--select", "D103", "--isolated", "-", timeout=60,
                        stdin="def public():\n    pass\n")
    assert "D103" in undocumented.stdout  # the rule is real: a public function without a docstring fails


@pytest.mark.slow
def test_mypy_reports_nothing():
    """mypy with the pydantic plugin over judge/ and calibration/ (strict on the formats, the checks,
    judge.api and calibration): zero errors. Its cache (.mypy_cache/) makes a rerun quick."""
    done = _run("mypy", timeout=1800)
    assert done.returncode == 0, f"mypy found:\n{done.stdout[-20000:]}{done.stderr}"
    assert "Success: no issues found" in done.stdout


def test_no_module_of_ours_switches_its_mypy_errors_off():
    """The typing debt is paid (49 modules had their errors switched off when mypy joined `make test`):
    no override of pyproject.toml may ignore the errors of a module of judge/ or calibration/."""
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["overrides"]
    ours = [module for o in overrides if o.get("ignore_errors") for module in o["module"]
            if module.split(".")[0] in ("judge", "calibration")]
    assert not ours, f"{ours} ignore their mypy errors: fix them instead"
