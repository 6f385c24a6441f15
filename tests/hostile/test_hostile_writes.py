"""Writes that cannot tear: a report written over a previous one survives a kill mid-write and a full
disk (the previous file is left whole, no temporary file is left behind by an error), and two
outputs naming one file are a usage error."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge.cli import app

runner = CliRunner()
TOUR = Path(__file__).resolve().parents[2] / "docs" / "tour"
PREVIOUS = '{"previous": "report", "kept": true}\n'


def _grade(*extra: str):
    return runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(TOUR / "drift.jsonl"), "--judge", "none",
                               "--no-log", "-q", *extra])


@pytest.mark.parametrize("first, second", [("--json", "--html"), ("--junit", "--md"), ("--json", "--md")])
def test_two_outputs_naming_one_file_are_a_usage_error(tmp_path, first, second):
    target = tmp_path / "report.out"
    result = _grade(first, str(target), second, str(target))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and f"{first} and {second} name the same file" in lines[0]
    assert not target.exists()


def test_two_outputs_naming_one_file_by_another_path_are_refused_too(tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    result = _grade("--json", "out/r.json", "--html", str(tmp_path / "out" / ".." / "out" / "r.json"))
    assert result.exit_code == 2 and "--json and --html name the same file" in result.output


def test_suite_refuses_two_outputs_naming_one_file(tmp_path):
    manifest = tmp_path / "suite.yaml"
    (tmp_path / "scenario.yaml").write_bytes((TOUR / "scenario.yaml").read_bytes())
    (tmp_path / "drift.jsonl").write_bytes((TOUR / "drift.jsonl").read_bytes())
    manifest.write_text("suites:\n  s: {repetitions: 1, scenarios: [tour]}\n"
                        "scenarios:\n  tour: {file: scenario.yaml, runs: \"drift*.jsonl\"}\n")
    result = runner.invoke(app, ["suite", str(manifest), "--judge", "none", "-q", "--json", str(tmp_path / "x"),
                                 "--junit", str(tmp_path / "x")])
    assert result.exit_code == 2 and "--json and --junit name the same file" in result.output


def test_a_cli_killed_mid_write_leaves_the_previous_report_whole(tmp_path):
    """The process is killed after the new report is written to its temporary file and before the
    rename (the fsync between them is where the kill is injected): the old report is untouched."""
    report = tmp_path / "r.json"
    report.write_text(PREVIOUS)
    code = ("import os, signal, sys\n"
            "os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)\n"
            "from judge.cli import main\n"
            f"sys.argv = ['judge', 'grade', {str(TOUR / 'scenario.yaml')!r}, {str(TOUR / 'drift.jsonl')!r},"
            f" '--judge', 'none', '--no-log', '-q', '--json', {str(report)!r}]\n"
            "main()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "JUDGE_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == -9, (done.returncode, done.stderr[-2000:])
    assert report.read_text() == PREVIOUS
    partial = [p for p in tmp_path.iterdir() if p.name.startswith(".r.json.")]
    assert len(partial) == 1 and json.loads(partial[0].read_text())["runs"]  # the new report, never renamed


def test_a_failing_write_leaves_the_previous_report_and_no_temporary_file(tmp_path, monkeypatch):
    """A fault-injected ENOSPC (the disk fills while the report is written): exit 2, one line."""
    import judge.model.atomic as atomic

    report = tmp_path / "r.json"
    report.write_text(PREVIOUS)

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fsync", full)
    result = _grade("--json", str(report))
    assert result.exit_code == 2, result.output
    assert "No space left on device" in result.output and "r.json" in result.output
    assert report.read_text() == PREVIOUS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MB tmpfs (needs root and mount; skipped elsewhere)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs root and mount to make a small tmpfs")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def test_a_full_disk_leaves_the_previous_page_whole(small_disk, tmp_path):
    lines = (TOUR / "drift.jsonl").read_text().splitlines()
    big = [json.dumps({"id": f"x{i}", "turn": 99, "kind": "assistant", "text": f"note {i} " + "w" * 1500})
           for i in range(120)]
    trace = tmp_path / "big.jsonl"
    trace.write_text("\n".join([*lines, *big]) + "\n")
    page = small_disk / "page.html"
    page.write_text("<p>the previous page</p>\n")
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (1024 * 1024 - 24 * 1024))  # the disk is nearly full: the new page cannot fit
    result = runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(trace), "--judge", "none", "--no-log",
                                 "-q", "--html", str(page)])
    assert result.exit_code == 2, result.output
    assert "No space left on device" in result.output
    assert page.read_text() == "<p>the previous page</p>\n"
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "page.html"]
    filler.unlink()  # with room, the same command writes the page
    again = runner.invoke(app, ["grade", str(TOUR / "scenario.yaml"), str(trace), "--judge", "none", "--no-log",
                                "-q", "--html", str(page)])
    assert again.exit_code == 1 and "<html" in page.read_text() and len(page.read_bytes()) > 24 * 1024


def test_a_run_log_entry_is_never_replaced(tmp_path):
    from judge.model.atomic import write_atomic

    entry = tmp_path / "20261201-120000-abcd.json"
    write_atomic(entry, "first\n", exclusive=True)
    with pytest.raises(FileExistsError):
        write_atomic(entry, "second\n", exclusive=True)
    assert entry.read_text() == "first\n" and sorted(p.name for p in tmp_path.iterdir()) == [entry.name]
