"""The conventions every command's help follows, applied in one place (`apply_conventions`):

- `-h` as well as `--help`, everywhere;
- argument and option placeholders are words, never Python types: `SCENARIO TRACE...`, `--json
  PATH`, `--jobs INTEGER`, `--on-judge-error [inconclusive|ignore]` (typer would print
  `{scenario}`, `<list[Path]>`, `<str>`);
- a short example under each command's help (its epilog: `EXAMPLES` below, unless the command
  sets its own: `epilog="Example: judge ..."` is shown the same way), run from the repository's
  root on files that are there.

tests/test_cli_conventions.py walks every command's help and holds these (and that every option
has help text). A new command adds its example to EXAMPLES, or passes `epilog=` when registering.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any, get_args, get_origin

import typer
from typer.core import TyperCommand, TyperGroup

HELP_OPTIONS = ["-h", "--help"]
EXAMPLE_HEADING = "Example:"

EXAMPLES: dict[str, list[str]] = {
    "grade": ["judge grade docs/tour/scenario.yaml docs/tour/drift.jsonl --judge none --html run.html",
              "judge grade docs/toolkit/scenario.yaml docs/toolkit/drift.jsonl --tools docs/toolkit/tools.json "
              "--judge none",
              "judge grade --policy agent-safety docs/toolkit/drift.jsonl --tools docs/toolkit/tools.json "
              "--judge none",
              "judge grade --policy agent-safety examples/suite/runs/ --judge none --json corpus.json"],
    "corpus diff": ["judge corpus diff last-week.json this-week.json --json diff.json"],
    "lint": ["judge lint examples/travel-booking/scenario.yaml examples/travel-booking/drift.jsonl",
             "judge lint docs/toolkit/typo.yaml --tools docs/toolkit/tools.json",
             "judge lint --policy agent-safety --tools docs/toolkit/tools.json"],
    "ledger": ["judge ledger docs/tour/scenario.yaml --turn 2"],
    "schema": ["judge schema scenario"],
    "rules": ["judge rules", "judge rules --markdown"],
    "draft": ["judge draft docs/tour/drift.jsonl -o scenario.yaml"],
    "calibrate": ["judge calibrate --labels labels --verdicts calibration/records/local.verdicts.jsonl "
                  "--name local --out out/records"],
    "compare": ["judge compare --labels labels --verdicts a.verdicts.jsonl --verdicts b.verdicts.jsonl"],
    "estimate": ["judge estimate --labels labels --verdicts calibration/records/local.verdicts.jsonl "
                 "--unlabeled unlabeled.verdicts.jsonl"],
    "bias": ["judge bias --judge local --labels labels", "judge bias --judge gpt --record"],
    "align": ["judge align --judge gpt --labels labels --max-examples 6"],
    "agreement": ["judge agreement --verdicts run1.verdicts.jsonl --verdicts run2.verdicts.jsonl"],
    "serve": ["judge serve --reports out/reports --labels out/review.jsonl"],
    "suite": ["judge suite examples/suite/suite.yaml --suite nightly --judge none --html suite.html",
              "judge suite docs/toolkit/suite.yaml --tools docs/toolkit/tools.json --judge none",
              "judge suite docs/toolkit/suite.yaml --policy agent-safety --tools docs/toolkit/tools.json --judge none"],
    "slice": ["judge slice report.json --run checkout-firefox-r06 -o slice/"],
    "run": ["judge run examples/scripted-checkout/scenario.yaml --agent \"python examples/agents/agent.py\" "
            "--stress all --judge none",
            "judge run examples/scripted-checkout/scenario.yaml --agent \"python examples/agents/agent.py\" --pair "
            "--judge none -o out/pair"],
    "view": ["judge view --open", "judge view out/reports"],
    "audit-summary": ["judge audit-summary examples/account-twice/scenario.yaml "
                      "--trace examples/account-twice/drift.jsonl"],
    "continue": ["judge continue examples/account-twice/scenario.yaml examples/account-twice/drift.jsonl "
                 "--agent \"python examples/agents/rule_agent.py\" --event e19"],
    "summary-eval": ["judge summary-eval labels/summaries"],
    "prompts list": ["judge prompts list"],
    "prompts show": ["judge prompts show goal-fidelity@1"],
    "prompts check": ["judge prompts check"],
    "prompts lock": ["judge prompts lock"],
}

# Placeholders by option name, where the type alone says too little.
NAMED = {"--judge": "NAME", "--suite": "NAME", "--name": "NAME", "--annotator": "NAME", "--run": "RUN_ID",
         "--event": "EVENT_ID", "--host": "ADDRESS", "--agent": "COMMAND", "--policy": "POLICY"}
TYPES = {int: "INTEGER", float: "NUMBER", str: "TEXT", bool: "BOOLEAN"}


def epilog(lines: list[str]) -> str:
    """An example block that click prints as written (`\\b`: no rewrapping)."""
    return "\b\n" + EXAMPLE_HEADING + "\n" + "\n".join(f"  {line}" for line in lines)


def as_example_block(text: str) -> str:
    """A command's own `epilog="Example: judge ..."` (one example a line) as the example block, so
    that click does not rewrap it; an epilog that is no example is left as it is."""
    if text.startswith("\b") or not text.startswith(EXAMPLE_HEADING):
        return text
    lines = [line.strip() for line in text[len(EXAMPLE_HEADING):].splitlines() if line.strip()]
    return epilog(lines) if lines else text


def _descriptor(param: Any) -> Any:
    return getattr(param, "type_descriptor", None)


def placeholder(param: Any) -> str:
    """The word shown for an option's value: its metavar, a name, the choices, or its type."""
    if param.metavar:
        return param.metavar
    named = next((NAMED[o] for o in param.opts if o in NAMED), None)
    if named:
        return named
    desc = _descriptor(param)
    if desc is not None:
        if getattr(desc, "is_choice", False) and desc.choices:
            return "[" + "|".join(str(getattr(c, "value", c)) for c in desc.choices) + "]"
        if getattr(desc, "is_path", False) or getattr(desc, "is_file", False):
            return "PATH"
        annotation = desc.annotation
        inner = get_args(annotation)
        if get_origin(annotation) in (list, tuple) and inner:
            annotation = inner[0]
        if isinstance(annotation, type) and issubclass(annotation, PurePath):
            return "PATH"
        for kind, word in TYPES.items():
            if annotation is kind:
                return word
    return "VALUE"


def argument_name(param: Any) -> str:
    """`SCENARIO`, `TRACE...` (a list argument, its name made singular), `[LABELS]` when optional."""
    name = (param.metavar or param.name or "arg").upper()
    if param.nargs != 1:
        name = (name[:-1] if name.endswith("S") and not name.endswith("SS") else name) + "..."
    return name if param.required else f"[{name}]"


def _help_text(param: Any, ctx: Any) -> str:
    record = param.get_help_record(ctx)
    text = record[1] if record else (param.help or "")
    if param.param_type_name == "argument":
        text = text.replace("  [required]", "").replace("[required]", "").rstrip()
    return text


def _records(command: Any, ctx: Any) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    args, opts = [], []
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        if param.param_type_name == "argument":
            args.append((argument_name(param).strip("[]"), _help_text(param, ctx)))
        elif param.param_type_name == "option":
            names = ", ".join(sorted(param.opts, key=lambda o: (o.startswith("--"), o)))
            if param.secondary_opts:
                names += " / " + ", ".join(param.secondary_opts)
            flag = getattr(param, "is_flag", False) or getattr(param, "count", False)
            opts.append((names if flag else f"{names} {placeholder(param)}", _help_text(param, ctx)))
    return args, opts


def _write(command: Any, ctx: Any, formatter: Any) -> None:
    args, opts = _records(command, ctx)
    if args:
        with formatter.section("Arguments"):
            formatter.write_dl(args)
    if opts:
        with formatter.section("Options"):
            formatter.write_dl(opts)


class JudgeCommand(TyperCommand):
    """A command whose usage line and help use the placeholders above."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        return pieces + [argument_name(p) for p in self.get_params(ctx) if p.param_type_name == "argument"]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        _write(self, ctx, formatter)


class JudgeGroup(TyperGroup):
    """A command group whose own options use the placeholders above."""

    def format_options(self, ctx: Any, formatter: Any) -> None:
        _write(self, ctx, formatter)
        self.format_commands(ctx, formatter)


def _ours(cls: Any, default: type, ours: type) -> type:
    """Our class where typer would use its default (a command may bring its own subclass)."""
    return ours if not isinstance(cls, type) or cls is default else cls


def _settings(existing: dict[str, Any] | None) -> dict[str, Any]:
    return {**(existing or {}), "help_option_names": HELP_OPTIONS}


def apply_conventions(app: typer.Typer, prefix: str = "") -> None:
    """Give every command of `app` (and of its sub-apps) the conventions: -h, placeholders, example."""
    app.info.cls = _ours(app.info.cls, TyperGroup, JudgeGroup)
    app.info.context_settings = _settings(app.info.context_settings)
    for command in app.registered_commands:
        name = command.name or (command.callback.__name__.replace("_", "-") if command.callback else "")
        command.cls = _ours(command.cls, TyperCommand, JudgeCommand)
        command.context_settings = _settings(command.context_settings)
        example = EXAMPLES.get(f"{prefix}{name}")
        if command.epilog is None and example:
            command.epilog = epilog(example)
        elif command.epilog:
            command.epilog = as_example_block(command.epilog)
    for group in app.registered_groups:
        sub = group.typer_instance
        if sub is not None:
            group.cls = _ours(group.cls, TyperGroup, JudgeGroup)
            group.context_settings = _settings(group.context_settings)
            apply_conventions(sub, f"{prefix}{group.name or sub.info.name} ")
