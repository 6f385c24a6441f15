"""A CI call pays for what it uses (issue 41): `judge grade` imports the one command module it runs
and the grading core, not the other commands, the prompt registry, rich (with -q), an LLM client, a
model runtime or a web framework; `judge --version` imports no command at all. The command table
that makes this possible (judge.cli.lazy.COMMANDS) is what the modules register."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import typer
import typer.main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "checkout-firefox"

# What a rules-only grade of one run (`--judge none -q`) must not import.
NOT_FOR_A_RULES_ONLY_GRADE = (
    "judge.prompts", "judge.suite", "judge.summaries.audit", "judge.draft", "judge.service", "judge.review",
    "judge.grade.judges_check", "judge.render.report", "judge.render.html",
    "rich", "click", "xml.etree.ElementTree", "litellm", "instructor", "openai", "httpx", "numpy", "onnxruntime",
    "tokenizers", "torch", "fastapi", "starlette", "jinja2", "asyncio", "calibration",
)
COMMAND_MODULES_OF_GRADE = {"judge.cli", "judge.cli.common", "judge.cli.help", "judge.cli.lazy", "judge.cli.grade",
                            "judge.cli.progress"}

CHILD = """
import json, sys
from judge.cli import main
sys.argv = ["judge", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _judge_in_child(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [n for n in names if any(m == n or m.startswith(n + ".") for m in modules)]


def test_a_rules_only_grade_imports_its_command_and_the_grading_core_only():
    result = _judge_in_child("grade", str(EXAMPLE / "scenario.yaml"), str(EXAMPLE / "clean.jsonl"),
                             "--judge", "none", "-q", "--no-log")
    assert result["code"] == 0
    modules = result["modules"]
    assert _loaded(modules, NOT_FOR_A_RULES_ONLY_GRADE) == []
    assert {m for m in modules if m.startswith("judge.cli")} == COMMAND_MODULES_OF_GRADE


def test_the_version_imports_no_command_and_no_grading_code():
    result = _judge_in_child("--version")
    assert result["code"] == 0
    judge_modules = {m for m in result["modules"] if m.startswith("judge")}
    # judge.registry: the composition root (judge/__init__.py) hands each registry its built-in specs
    # as functions, read on first use; it imports no spec.
    assert judge_modules <= {"judge", "judge.compiled", "judge.errors", "judge.registry", "judge.cli",
                             "judge.cli.common", "judge.cli.help", "judge.cli.lazy"}, judge_modules


def test_the_command_table_names_what_each_module_registers_in_the_order_help_lists_them():
    import importlib

    from judge.cli.lazy import APP_SETTINGS, COMMANDS

    eager = typer.Typer(**APP_SETTINGS)
    for module, names in COMMANDS.items():
        alone = typer.Typer(**APP_SETTINGS)
        importlib.import_module(f"judge.cli.{module}").register(alone)
        registered = [c.name or c.callback.__name__ for c in alone.registered_commands]
        registered += [g.name for g in alone.registered_groups]
        assert registered == list(names), module
        importlib.import_module(f"judge.cli.{module}").register(eager)
    from judge.cli import app

    listed = list(typer.main.get_command(app).commands)  # type: ignore[attr-defined]  # a group
    assert listed == list(typer.main.get_group(eager).commands)
    assert sorted(listed) == sorted(n for names in COMMANDS.values() for n in names)
    modules = {p.stem for p in (ROOT / "judge" / "cli").glob("*.py")}
    helpers = {"__init__", "common", "help", "lazy", "progress", "suite_merge"}
    assert modules - helpers == set(COMMANDS), "a command module of judge.cli that the table does not name"


def test_a_command_runs_the_same_whether_loaded_alone_or_with_every_other():
    from typer.testing import CliRunner

    from judge.cli import app

    runner = CliRunner()
    alone = runner.invoke(app, ["ledger", str(EXAMPLE / "scenario.yaml"), "--turn", "2", "--json"])
    listed = runner.invoke(app, ["--help"])
    after = runner.invoke(app, ["ledger", str(EXAMPLE / "scenario.yaml"), "--turn", "2", "--json"])
    assert alone.exit_code == after.exit_code == listed.exit_code == 0
    assert alone.output == after.output and '"key"' in alone.output
    typo = runner.invoke(app, ["grde"])
    assert typo.exit_code == 2 and "Did you mean 'grade'?" in typo.output


# (judge.text.cues compiles its own at import: its source is part of the local judge's fingerprint,
# code_sha256, so an edit there makes the shipped calibration record stale until it is recorded again.)
LAZY_PATTERN_MODULES = ("judge.text.dates", "judge.text.amounts", "judge.text.questions", "judge.text.serves",
                        "judge.checks.confirm")
COMPILES = """
import json, re, sys
compiled_by = []
real = re._compile
def recording(pattern, flags):
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.endswith(("re/__init__.py", "lazy_regex.py")):
        frame = frame.f_back
    compiled_by.append(frame.f_globals.get("__name__") if frame is not None else None)
    return real(pattern, flags)
re._compile = recording
import judge.model
judge.model.rule_models()
print(json.dumps(sorted(set(compiled_by))))
"""


def test_loading_every_rule_kind_compiles_none_of_the_text_patterns():
    done = subprocess.run([sys.executable, "-c", COMPILES], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    compiled_by = json.loads(done.stdout.strip().splitlines()[-1])
    assert [m for m in compiled_by if m in LAZY_PATTERN_MODULES] == []


def test_a_lazy_pattern_is_the_compiled_pattern_once_used():
    import re

    from judge.text.lazy_regex import lazy

    pattern = lazy(r"(?P<word>b\w+)", re.IGNORECASE)
    assert "_compiled" not in vars(pattern)
    text = "a Big bad wolf"
    assert pattern.search(text).group("word") == "Big"  # type: ignore[union-attr]  # it matches
    assert [m.span() for m in pattern.finditer(text)] == [(2, 5), (6, 9)]
    assert pattern.sub("x", text) == "a x x wolf" and pattern.pattern == r"(?P<word>b\w+)"
    assert pattern.flags & re.IGNORECASE and "search" in vars(pattern)  # kept: the next read is a plain lookup
    assert vars(pattern)["_compiled"] is re.compile(r"(?P<word>b\w+)", re.IGNORECASE)
