"""`judge init [DIR]`: a commented scenario, a clean and a drifting trace, the [tool.judge] table, a
GitHub Actions workflow and a pytest example, ready to lint and grade. Never overwrites a file: every
target is checked before any is written, and one that exists stops the command (exit 2).

The templates are package data (judge/cli/scaffold/), so they are there after a plain `pip install`.
The workflow installs `judge-drift=={judge_version}`: judge's distribution name (`judge` on the package
index is an unrelated project) at the version that wrote it, so CI grades with the judge you ran.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import typer

from judge import __version__
from judge.cli.common import console, user_errors
from judge.errors import UsageError

SCENARIO = "scenarios/hotel-booking.yaml"
CLEAN = "traces/hotel-booking.clean.jsonl"
DRIFT = "traces/hotel-booking.drift.jsonl"
CONFIG_SEPARATE = "judge.toml"

# target (relative to DIR) -> (template in judge/cli/scaffold/, what it is)
FILES: dict[str, tuple[str, str]] = {
    SCENARIO: ("scenario.yaml", "a commented scenario: each entry class, a `set` delta, each common rule"),
    CLEAN: ("clean.jsonl", "a run that keeps the ledger (grades exit 0)"),
    DRIFT: ("drift.jsonl", "a run that drifts: charges before the go-ahead, books the old date (exit 1)"),
    ".github/workflows/judge.yml": ("workflow.yml", "GitHub Actions: install, grade, upload the JUnit report"),
    "tests/test_agent_runs.py": ("test_agent_runs.py", "the same checks from pytest (judge.testing)"),
}


def _template(name: str) -> str:
    """A scaffold file, `{judge_version}` made this judge's version (the workflow installs the judge
    that wrote it, by its distribution name `judge-drift`)."""
    text = resources.files("judge.cli").joinpath("scaffold", name).read_text(encoding="utf-8")
    return text.replace("{judge_version}", __version__)


def plan(directory: Path) -> dict[Path, tuple[str, str]]:
    """Every file `judge init` writes into `directory`: path -> (text, what it is). The [tool.judge]
    table goes into a new pyproject.toml, or into judge.toml when the folder already has one."""
    files = {directory / target: (_template(name), what) for target, (name, what) in FILES.items()}
    table = _template("judge.toml")
    if (directory / "pyproject.toml").exists():
        files[directory / CONFIG_SEPARATE] = (table, "the [tool.judge] table: add it to your pyproject.toml "
                                              "(or pass --config judge.toml)")
    else:
        files[directory / "pyproject.toml"] = (table, "the [tool.judge] table: the local judge, an LLM judge "
                                               "commented out")
    return files


def _refuse_existing(files: dict[Path, tuple[str, str]]) -> None:
    existing = [str(p) for p in files if p.exists() or p.is_symlink()]
    if existing:
        raise UsageError(f"refusing to overwrite {len(existing)} existing file(s): {', '.join(existing)} "
                         "(judge init writes nothing over a file; move them or pick another folder)")


@user_errors
def init_command(directory: Path = typer.Argument(Path("."), metavar="DIR", help="Folder to write the "
                                                  "files into (created if missing; default: here).")) -> None:
    """Write a small commented scenario, a clean and a drifting trace, the [tool.judge] table, a
    GitHub Actions workflow and a pytest example. Refuses (exit 2, nothing written) when any of
    these files exists."""
    if directory.exists() and not directory.is_dir():
        raise UsageError("not a folder", file=str(directory))
    files = plan(directory)
    _refuse_existing(files)
    for path, (text, _) in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as handle:  # "x": never over a file that appeared meanwhile
            handle.write(text)
    out = console(None, soft_wrap=True)
    out.print(f"wrote {len(files)} files into {directory.as_posix()}/:", markup=False)
    width = max(len(str(p.relative_to(directory).as_posix())) for p in files)
    for path, (_, what) in files.items():
        out.print(f"  {path.relative_to(directory).as_posix():<{width}}  {what}", markup=False)
    config = " --config judge.toml" if (directory / CONFIG_SEPARATE) in files else ""
    steps = [(f"judge lint {SCENARIO}", "exit 0"),
             (f"judge grade {SCENARIO} {CLEAN}{config}", "exit 0: passed"),
             (f"judge grade {SCENARIO} {DRIFT}{config}", "exit 1: the drift is caught"),
             ("judge runs diff previous latest", "exit 1: names the keys that newly fail"),
             ("judge view --open", "each graded run as a page in your browser"),
             ("pytest tests/test_agent_runs.py", "judge.testing")]
    if directory.resolve() != Path.cwd().resolve():
        steps.insert(0, (f"cd {directory.as_posix()}", ""))
    width = max(len(cmd) for cmd, _ in steps)
    out.print("next:", markup=False)
    for cmd, why in steps:
        out.print(f"  {cmd:<{width}}  # {why}" if why else f"  {cmd}", markup=False)


def register(app: typer.Typer) -> None:
    """Add `init` to the `judge` typer app."""
    app.command("init", epilog="Example: judge init my-agent && cd my-agent && judge lint "
                f"{SCENARIO}")(init_command)
