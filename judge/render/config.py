"""Terminal renderings of `judge config show` (each setting, its value and where it comes from) and
`judge config check` (each judge: can it grade, its calibration, whether it is binding)."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from judge.config import Setting
from judge.grade.judges_check import JudgeCheck


def _value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def render_settings(settings: list[Setting], console: Console) -> None:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("setting", no_wrap=True)
    table.add_column("value", overflow="fold", ratio=2)
    table.add_column("from", overflow="fold", ratio=1)
    for s in settings:
        table.add_row(s.key, _value(s.value), Text(s.source, "dim" if s.source == "built-in default" else ""))
    console.print(table)


def render_checks(checks: list[JudgeCheck], console: Console) -> None:
    for c in checks:
        head = Text.assemble(("ok    " if c.ok else "ERROR ", "bold green" if c.ok else "bold red"),
                             (c.name, "bold"), " (default)" if c.default else "",
                             f"  {c.backend}" if c.backend else "")
        console.print(head)
        for problem in c.problems:
            console.print(Text.assemble(("  error: ", "red"), problem))
        if c.ok:
            style = {"current": "green", "stale": "yellow", "missing": "yellow"}.get(c.calibration or "", "")
            console.print(Text.assemble("  calibration: ", (c.calibration or "-", style),
                                        f" ({'; '.join(c.calibration_reasons)})" if c.calibration_reasons else ""))
            if c.binding_reason:
                console.print(f"  {c.binding_reason}", markup=False)
    bad = sum(not c.ok for c in checks)
    console.print(Text(f"{len(checks) - bad}/{len(checks)} judges can grade", "bold red" if bad else "bold green"))
