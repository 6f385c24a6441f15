"""`judge prompts list|show|check|lock`: thin commands over judge.prompts.

Exit codes: 0 fine; 1 `check` (or `lock`) found a problem; 2 bad input (one line, no traceback).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judge import prompts as registry
from judge.errors import JudgeInputError


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _fail(exc: JudgeInputError) -> None:
    _console(stderr=True).print(f"[red]error:[/red] {exc}", markup=True)
    raise typer.Exit(2)


def _lock_state(prompt: registry.Prompt) -> str:
    pinned = registry.read_lock(prompt.path.parent.parent).get(prompt.ref)
    if pinned is None:
        return "unlocked"
    return "locked" if pinned == prompt.sha256 else "CHANGED"


def list_cmd() -> None:
    """List the prompts visible from here (your prompts/ first, then the built-in ones)."""
    from rich.table import Table

    try:
        found = registry.list_prompts()
    except JudgeInputError as exc:
        _fail(exc)
    table = Table("prompt", "origin", "lock", "sha256", "purpose")
    for p in found:
        table.add_row(p.ref, p.origin, _lock_state(p), p.sha256[:12], p.meta.purpose)
    _console().print(table)


def show_cmd(ref: str = typer.Argument(..., help="ID@VERSION, e.g. goal-fidelity@1 (ID alone: latest)")) -> None:
    """Print one prompt: header, hash and template."""
    try:
        p = registry.load_prompt(ref)
    except JudgeInputError as exc:
        _fail(exc)
    out = _console()
    out.print(f"[bold]{p.ref}[/bold]  ({p.origin}: {p.path})", markup=True)
    out.print(f"purpose: {p.meta.purpose}\noutput_schema: {p.meta.output_schema}\nsha256: {p.sha256}"
              f"\nlock: {_lock_state(p)}")
    if p.meta.notes:
        out.print(f"notes: {p.meta.notes}")
    out.rule()
    out.print(p.body.strip(), markup=False)


def _report(report: registry.CheckReport) -> None:
    out = _console()
    for ref in report.added:
        out.print(f"[green]locked[/green] {ref}", markup=True)
    for problem in report.problems:
        out.print(f"[red]{problem.kind}[/red] {problem.ref}: {problem.detail}", markup=True)
    if report.ok:
        out.print(f"{report.folder}: {report.locked} prompt version(s) locked, all match")
    else:
        raise typer.Exit(1)


def check_cmd(folder: Optional[Path] = typer.Option(None, "--dir", help="prompts folder (default: yours, else built-in)")) -> None:
    """Fail (exit 1) when a locked prompt changed, a version is not locked or a lock entry has no file."""
    try:
        report = registry.check(folder)
    except JudgeInputError as exc:
        _fail(exc)
    _report(report)


def lock_cmd(folder: Optional[Path] = typer.Option(None, "--dir", help="prompts folder (default: yours, else built-in)")) -> None:
    """Pin the hash of every new prompt version. A changed locked version is never re-pinned."""
    try:
        report = registry.lock(folder)
    except JudgeInputError as exc:
        _fail(exc)
    _report(report)


def register(app: typer.Typer) -> None:
    """Add the `prompts` sub-app to the main CLI."""
    sub = typer.Typer(help="Versioned judge prompts: list, show, check, lock.", no_args_is_help=True)
    sub.command("list")(list_cmd)
    sub.command("show")(show_cmd)
    sub.command("check")(check_cmd)
    sub.command("lock")(lock_cmd)
    app.add_typer(sub, name="prompts")
