"""`judge prompts list|show|check|lock`: thin commands over judge.prompts.

Exit codes: 0 fine; 1 `check` (or `lock`) found a problem; 2 bad input (one line, no traceback).
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from judge import prompts as registry
from judge.cli.common import console, user_errors


def _console():
    return console(None, soft_wrap=True)


def _lock_state(prompt: registry.Prompt) -> str:
    pinned = registry.read_lock(prompt.path.parent.parent).get(prompt.ref)
    if pinned is None:
        return "unlocked"
    return "locked" if pinned == prompt.sha256 else "CHANGED"


@user_errors
def list_cmd() -> None:
    """List the prompts visible from here (your prompts/ first, then the built-in ones)."""
    from judge import render

    found = registry.list_prompts()
    table = render.table("prompt", "origin", "lock", "sha256", note="purpose")
    for p in found:
        table.add_row(*(render.cell(cell) for cell in (p.ref, p.origin, _lock_state(p), p.sha256[:12], p.meta.purpose)))
    render.render_table(console(), table)


@user_errors
def show_cmd(ref: str = typer.Argument(..., help="ID@VERSION, e.g. goal-fidelity@1 (ID alone: latest)")) -> None:
    """Print one prompt: header, hash and template."""
    p = registry.load_prompt(ref, verify=False)  # shows an edited locked version too (lock: changed)
    out = _console()
    out.print(f"[bold]{escape(p.ref)}[/bold]  ({escape(p.origin)}: {escape(str(p.path))})", markup=True)
    out.print(f"purpose: {p.meta.purpose}\noutput_schema: {p.meta.output_schema}\nsha256: {p.sha256}"
              f"\nlock: {_lock_state(p)}", markup=False)
    if p.meta.notes:
        out.print(f"notes: {p.meta.notes}", markup=False)
    out.rule()
    out.print(p.body.strip(), markup=False)


def _report(report: registry.CheckReport) -> None:
    out = _console()
    for ref in report.added:
        out.print(f"[green]locked[/green] {escape(ref)}", markup=True)
    for problem in report.problems:
        out.print(f"[red]{escape(problem.kind)}[/red] {escape(problem.ref)}: {escape(problem.detail)}", markup=True)
    if report.ok:
        out.print(f"{report.folder}: {report.locked} prompt version(s) locked, all match", markup=False)
    else:
        raise typer.Exit(1)


@user_errors
def check_cmd(folder: Path | None = typer.Option(None, "--dir",
                                                help="prompts folder (default: yours, else built-in)")) -> None:
    """Fail (exit 1) when a locked prompt changed, a version is not locked or a lock entry has no file."""
    report = registry.check(folder)
    _report(report)


@user_errors
def lock_cmd(folder: Path | None = typer.Option(None, "--dir",
                                               help="prompts folder (default: yours, else built-in)")) -> None:
    """Pin the hash of every new prompt version. A changed locked version is never re-pinned."""
    report = registry.lock(folder)
    _report(report)


def register(app: typer.Typer) -> None:
    """Add the `prompts` sub-app to the main CLI."""
    sub = typer.Typer(help="Versioned judge prompts: list, show, check, lock.", no_args_is_help=True)
    sub.command("list")(list_cmd)
    sub.command("show")(show_cmd)
    sub.command("check")(check_cmd)
    sub.command("lock")(lock_cmd)
    app.add_typer(sub, name="prompts")
