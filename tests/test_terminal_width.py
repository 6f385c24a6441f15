"""The terminal report at any width: the note that says why a key was violated is never dropped (a
table on a wide console, one block per finding under ~110 columns), COLUMNS wins over the CI default
of 140, and every command's tables share one style that stacks instead of squeezing a column away."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from judge.api import GradeSession
from judge.render import style
from judge.render.report import render_terminal

REPO = Path(__file__).resolve().parents[1]
TOUR = REPO / "docs" / "tour"
EXAMPLE = REPO / "examples" / "checkout-firefox"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _render(width: int, scenario: Path, trace: Path) -> str:
    report = GradeSession.open("none").grade_files(scenario, [trace])
    out = io.StringIO()
    render_terminal(report, Console(file=out, width=width, highlight=False, color_system=None))
    return out.getvalue()


def _notes(scenario: Path, trace: Path) -> list[tuple[str, str]]:
    report = GradeSession.open("none").grade_files(scenario, [trace])
    return [(f.key, f.detail) for cp in report.runs[0].checkpoints for f in cp.findings
            if f.verdict == "violated"]


@pytest.mark.parametrize("width", [60, 80, 100, 140, 200])
@pytest.mark.parametrize("case", [(TOUR / "scenario.yaml", TOUR / "drift.jsonl"),
                                  (EXAMPLE / "scenario.yaml", EXAMPLE / "drift.jsonl")])
def test_every_violation_shows_why_at_any_width(width, case):
    text = _render(width, *case)
    assert all(len(line.rstrip()) <= width for line in text.splitlines()), "a line overflows"
    notes = _notes(*case)
    assert notes
    for key, detail in notes:
        assert key in text and _flat(detail) in _flat(text), (width, key, detail)
    assert ("note" in text.splitlines()[2]) == (width >= style.WIDE), "a table only on a wide console"


def test_the_stacked_layout_puts_each_note_under_its_finding():
    text = _render(80, TOUR / "scenario.yaml", TOUR / "drift.jsonl")
    lines = [line.rstrip() for line in text.splitlines()]
    at = lines.index("after turn 3")
    assert lines[at + 2].split() == ["editable_paths", "violated", "rule", "scope:editable_paths", "at", "e8",
                                     "(turn", "3)"]
    assert lines[at + 3].strip().startswith("edit_file path='tests/test_dates.py' is outside")
    assert lines[at + 3].startswith(" " * 18), "the note sits under the finding, not under the key"


def _cli(width: str | None, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k != "COLUMNS"}, **(env or {})}
    if width is not None:
        env["COLUMNS"] = width
    return subprocess.run([sys.executable, "-c", "from judge.cli import main; main()", *args], capture_output=True,
                          text=True, cwd=REPO, env=env)


@pytest.mark.parametrize("width", ["80", "100"])
def test_the_real_command_follows_columns(width):
    done = _cli(width, "grade", str(EXAMPLE / "scenario.yaml"), str(EXAMPLE / "drift.jsonl"), "--judge", "none")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= int(width)
    for key, detail in _notes(EXAMPLE / "scenario.yaml", EXAMPLE / "drift.jsonl"):
        assert _flat(detail) in _flat(done.stdout), (key, detail)
    assert not any(line.startswith("after  key") for line in lines), "stacked, not a table"


@pytest.mark.slow
def test_without_columns_a_log_gets_the_wide_table():
    done = _cli(None, "grade", str(TOUR / "scenario.yaml"), str(TOUR / "drift.jsonl"), "--judge", "none")
    header = next(line for line in done.stdout.splitlines() if line.startswith("after"))
    assert re.match(r"after\s+key\s+verdict\s+source\s+event\s+turn\s+rule\s+note", header)
    assert max(len(line.rstrip()) for line in done.stdout.splitlines()) > 100


def test_a_house_table_stacks_rather_than_drop_a_column():
    table = style.table("key", "class", "status", "sensitivity", title="after turn 1", note="value")
    table.add_row("editable_paths", "constraint", "active", "safety-critical", "['src/dates.py', 'src/x.py']")
    wide, narrow = io.StringIO(), io.StringIO()
    style.render(Console(file=wide, width=120, color_system=None), table)
    style.render(Console(file=narrow, width=40, color_system=None), table)
    assert wide.getvalue().splitlines()[1].split() == ["key", "class", "status", "sensitivity", "value"]
    stacked = [line.rstrip() for line in narrow.getvalue().splitlines()]
    assert stacked[:2] == ["after turn 1", "editable_paths"]
    assert _flat(" ".join(stacked[2:])) == ("class constraint · status active · sensitivity safety-critical "
                                            "['src/dates.py', 'src/x.py']")
    assert all(len(line) <= 40 for line in stacked)


@pytest.mark.parametrize("args", [["ledger", str(TOUR / "scenario.yaml")],
                                  ["suite", str(REPO / "examples" / "suite" / "suite.yaml"), "--judge", "none"],
                                  ["prompts", "list"]])
@pytest.mark.slow
def test_other_tables_fit_eighty_columns(args):
    done = _cli("80", *args)
    assert done.stdout and max(len(line.rstrip()) for line in done.stdout.splitlines()) <= 80, done.stdout
    assert "…" not in done.stdout, "nothing cut short"


@pytest.mark.slow
def test_the_run_log_and_the_configuration_fit_eighty_columns(tmp_path):
    """`judge runs list`, `judge runs diff` and `judge config show|check` in the house style: at 80
    columns nothing is cut, every column is still there (stacked), and the diff still names the rule."""
    env = {"JUDGE_LOG_DIR": str(tmp_path / "runs")}
    for trace in ("clean.jsonl", "drift.jsonl"):
        _cli("100", "grade", str(TOUR / "scenario.yaml"), str(TOUR / trace), "--judge", "none", "-q", env=env)
    for args, code in ((["runs", "list"], 0), (["runs", "diff", "previous", "latest"], 1),
                       (["config", "show"], 0), (["config", "check"], 0)):
        done = _cli("80", *args, env=env)
        assert done.returncode == code, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        assert lines and max(len(line.rstrip()) for line in lines) <= 80, done.stdout
        assert "…" not in done.stdout, f"judge {' '.join(args)}: nothing cut short"
        if args[0] == "runs" and args[1] == "list":
            assert all(word in done.stdout for word in ("outcome fail", "quality", "judge none", "tour"))
        if args[1] == "diff":
            assert re.search(r"python\s+e6\s+\d+\s+superseded-value:python", done.stdout), done.stdout


def test_one_table_style_every_command_builds_its_tables_with_judge_render_style():
    """No module but judge/render/style.py makes a rich Table: every command's tables are house tables."""
    offenders = [str(p.relative_to(REPO)) for p in (REPO / "judge").rglob("*.py")
                 if p.name != "style.py" and re.search(r"(?<![\w.])Table\(|\bTable\.grid\(", p.read_text("utf-8"))]
    assert offenders == []
