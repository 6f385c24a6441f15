"""The `judge` command group that imports a command's module only when that command runs.

`judge grade ...` imports judge.cli.grade and what it calls, not the modules of the 30 other
commands (the prompt registry, the calibration tables, the drafting assistant, the service): a CI
call pays for the command it makes. `judge --help`, a typo's suggestions and anything else that
reads the whole group (`group.commands`) load every module, registered into one typer app in the
order of `COMMANDS`, so the listing and each command's help are what one eager app would give.

`COMMANDS` says which module adds which commands; tests/test_cli_lazy.py checks it against what
each module's `register(app)` adds, so a new command cannot be left out of it unseen.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

import typer
import typer.main

from judge.cli.common import guard_commands
from judge.cli.help import JudgeGroup, apply_conventions

# Each command module of judge.cli, in the order `judge --help` lists what it adds, and the names of
# the commands and command groups its `register(app)` adds.
COMMANDS: dict[str, tuple[str, ...]] = {
    "init": ("init",),
    "grade": ("grade", "lint", "ledger", "schema"),
    "kinds": ("rules",),
    "runs": ("runs",),
    "config": ("config",),
    "draft": ("draft",),
    "calibration": ("calibrate", "compare", "estimate", "agreement"),
    "trust": ("bias", "align"),
    "prompts": ("prompts",),
    "serve": ("serve",),
    "suite": ("suite", "slice"),
    "corpus": ("corpus",),
    "drive": ("run",),
    "view": ("view",),
    "imports": ("import",),
    "summary": ("audit-summary", "continue", "summary-eval"),
}
MODULE_OF = {name: module for module, names in COMMANDS.items() for name in names}
# The settings of the root app (judge.cli.app), which the apps built here share.
APP_SETTINGS: dict[str, Any] = {"add_completion": False, "rich_markup_mode": None, "pretty_exceptions_enable": False}

_apps: dict[tuple[str, ...], typer.Typer] = {}
_lock = threading.Lock()


def commands_app(modules: tuple[str, ...]) -> typer.Typer:
    """A typer app holding the commands of `modules` (judge.cli's module names), each behind the one
    error printer and with the help conventions; built once per process, as the eager app was."""
    with _lock:
        app = _apps.get(modules)
        if app is None:
            app = typer.Typer(**APP_SETTINGS)
            for module in modules:
                importlib.import_module(f"judge.cli.{module}").register(app)
            guard_commands(app)
            apply_conventions(app)
            _apps[modules] = app
        return app


def click_commands(modules: tuple[str, ...]) -> dict[str, Any]:
    """The click commands of `modules`, by name, in the order typer lists them."""
    return dict(typer.main.get_group(commands_app(modules)).commands)


def click_command(module: str, name: str) -> Any:
    """The one click command (or group) `name` of `module`: typer converts each command's parameters
    when it is built, so a run builds only the command it runs."""
    app = commands_app((module,))
    for command in app.registered_commands:
        if (command.name or typer.main.get_command_name(command.callback.__name__)) == name:  # type: ignore[union-attr]
            return typer.main.get_command_from_info(command, pretty_exceptions_short=app.pretty_exceptions_short,
                                                    rich_markup_mode=app.rich_markup_mode)
    return click_commands((module,)).get(name)  # a group, or a name only typer's own rules give


class LazyGroup(JudgeGroup):
    """The root group: `get_command` loads the one module that adds the command asked for; reading
    `commands` (a listing, a typo's suggestions, a walk of the whole tree) loads them all."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._all: dict[str, Any] | None = None
        self._given: dict[str, Any] = {}
        super().__init__(*args, **kwargs)

    @property  # type: ignore[override]  # click declares a plain attribute; reading it loads every module
    def commands(self) -> dict[str, Any]:
        if self._all is None:
            self._all = {**click_commands(tuple(COMMANDS)), **self._given}
        return self._all

    @commands.setter
    def commands(self, value: dict[str, Any]) -> None:
        self._given, self._all = dict(value), None

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        module = MODULE_OF.get(cmd_name)
        if self._all is not None or module is None or cmd_name in self._given:
            return self.commands.get(cmd_name)
        return click_command(module, cmd_name)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)
