"""Every command's help follows the conventions (judge/cli/help.py): `-h` as well as `--help`, help
text on every option, words (not Python types) as placeholders, a short example under each command
naming files that exist; `judge --version`; and what long commands show on stderr (a progress bar
while grading many runs, a spinner while a model loads) only on a terminal and never with --quiet."""

from __future__ import annotations

import os
import pty
import re
import select
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from judge import __version__
from judge.cli import app
from judge.cli.help import EXAMPLE_HEADING

REPO = Path(__file__).resolve().parents[1]
TOUR = REPO / "docs" / "tour"
PYTHON_TYPES = re.compile(r"<\w+(\[[^\]]*\])?>|\{[a-z_]+\}|\b(list|dict|tuple)\[|<(path|str|int|float)|"
                          r"float range|int range")
PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z_]*(?:\.\.\.)?|\[[\w|-]+\])$")


def _commands(command=None, path: tuple[str, ...] = ()):
    command = command or typer.main.get_command(app)
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands())
LEAVES = [(p, c) for p, c in COMMANDS if not hasattr(c, "commands")]


def _help(*args: str) -> str:
    result = CliRunner().invoke(app, [*args], env={"COLUMNS": "100"}, prog_name="judge")
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "judge")
def test_h_and_help_print_the_same_help_without_python_types(path):
    long, short = _help(*path, "--help"), _help(*path, "-h")
    assert long == short
    usage = long.splitlines()[0]
    assert usage.startswith("Usage: judge"), usage
    assert not PYTHON_TYPES.search(usage), usage
    for line in long.splitlines():
        m = re.match(r"^  (-[-\w]+(?:, -[-\w]+)*|[A-Z][A-Z_.]*)(?: (\S+))?(?:\s{2,}|$)", line)
        if m and m.group(2) and not m.group(1)[0].isupper():
            assert PLACEHOLDER.match(m.group(2)), f"{' '.join(path)}: placeholder {m.group(2)!r} in {line!r}"
    assert not re.search(r"<(list|path|str|int|float)\b|list\[", long), long


@pytest.mark.parametrize("path,command", LEAVES, ids=[" ".join(p) for p, _ in LEAVES])
def test_every_option_has_help_and_every_command_an_example(path, command):
    for param in command.params:
        if param.param_type_name == "option" and not param.hidden:
            assert (param.help or "").strip(), f"judge {' '.join(path)} {param.opts[0]} has no help text"
        if param.param_type_name == "argument":
            assert (getattr(param, "help", None) or "").strip(), f"judge {' '.join(path)} {param.name}: no help"
    text = _help(*path, "--help")
    assert EXAMPLE_HEADING in text, f"judge {' '.join(path)} has no example (judge/cli/help.py EXAMPLES)"
    examples = [line.strip() for line in text.split(EXAMPLE_HEADING, 1)[1].splitlines() if line.strip()]
    assert examples and all(e.startswith("judge " + " ".join(path)) for e in examples), examples
    for example in examples:
        for word in shlex.split(example):
            if re.match(r"^(docs|examples|labels|calibration|prompts)/", word):
                assert (REPO / word).exists(), f"the example of judge {' '.join(path)} names {word}, which is not here"


def test_the_walk_covers_every_command_main_registers():
    """The conventions hold for every command, the ones added since (init, runs, config) included."""
    walked = {" ".join(p) for p, _ in LEAVES}
    assert {"init", "runs list", "runs diff", "config show", "config check", "grade", "suite", "view",
            "lint", "prompts list", "import otel"} <= walked
    assert {"runs", "config", "prompts", "import"} <= {" ".join(p) for p, c in COMMANDS if hasattr(c, "commands")}


def test_version():
    for flag in ("--version", "-V"):
        result = CliRunner().invoke(app, [flag])
        assert result.exit_code == 0 and result.output == f"judge {__version__}\n"


def _run_with_stderr_on_a_terminal(*args: str, timeout: float = 300) -> tuple[int, str]:
    """Run the command with its stderr on a pseudo-terminal (stdout a pipe); returns (exit code, what
    the terminal received)."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "TERM")}
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen([sys.executable, "-c", "from judge.cli import main; main()", *args], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            proc.kill()
            raise AssertionError("the command did not finish")
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=timeout), b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.slow
def test_a_progress_bar_on_a_terminal_only_and_never_with_quiet():
    traces = [str(TOUR / "drift.jsonl"), str(TOUR / "clean.jsonl")]
    code, seen = _run_with_stderr_on_a_terminal("grade", str(TOUR / "scenario.yaml"), *traces, "--judge", "none")
    assert code == 1 and "grading runs" in seen
    code, seen = _run_with_stderr_on_a_terminal("grade", str(TOUR / "scenario.yaml"), *traces, "--judge", "none",
                                                "-q")
    assert code == 1 and seen == ""
    piped = subprocess.run([sys.executable, "-c", "from judge.cli import main; main()", "grade",
                            str(TOUR / "scenario.yaml"), *traces, "--judge", "none"],
                           capture_output=True, text=True, cwd=REPO)
    assert piped.returncode == 1 and piped.stderr == ""


@pytest.mark.slow
def test_a_spinner_while_the_offline_judge_loads_its_model():
    code, seen = _run_with_stderr_on_a_terminal("grade", str(TOUR / "scenario.yaml"), str(TOUR / "drift.jsonl"),
                                                "--judge", "local")
    assert code == 1, seen
    assert "loading the model all-MiniLM-L6-v2" in seen
