"""Terminal renderings of `judge config show` (each setting, its value and where it comes from) and
`judge config check` (each judge: can it grade, its calibration, whether it is binding, and with
--probe what one real request found)."""

from __future__ import annotations

import json

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from judge.config import Setting
from judge.grade.judges_check import JudgeCheck
from judge.judges.probe import Probe
from judge.render import style


def _value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def render_settings(settings: list[Setting], console: Console) -> None:
    table = style.table("setting", "value", note="from")
    for s in settings:
        table.add_row(style.cell(s.key), style.cell(_value(s.value)),
                      style.cell(s.source, "dim" if s.source == "built-in default" else ""))
    style.render(console, table)


def _indented(console: Console, text: Text) -> None:
    """A line under a judge's name, wrapped lines indented as the first."""
    console.print(Padding(text, (0, 0, 0, 2), expand=False))


def render_checks(checks: list[JudgeCheck], console: Console) -> None:
    for c in checks:
        head = Text.assemble(("ok    " if c.ok else "ERROR ", "bold green" if c.ok else "bold red"),
                             (c.name, "bold"), " (default)" if c.default else "",
                             f"  {c.backend}" if c.backend else "")
        console.print(head)
        for problem in c.problems:
            _indented(console, Text.assemble(("error: ", "red"), problem))
        if c.ok:
            look = {"current": "green", "stale": "yellow", "missing": "yellow"}.get(c.calibration or "", "")
            _indented(console, Text.assemble("calibration: ", (c.calibration or "-", look),
                                             f" ({'; '.join(c.calibration_reasons)})" if c.calibration_reasons else ""))
            if c.binding_reason:
                _indented(console, Text(c.binding_reason))
        if c.probe is not None:
            for line in probe_lines(c.probe):
                _indented(console, line)
    bad = sum(not c.ok for c in checks)
    console.print(Text(f"{len(checks) - bad}/{len(checks)} judges can grade", "bold red" if bad else "bold green"))


def probe_lines(probe: Probe) -> list[Text]:
    """`probe: form F answered in S s, IN+OUT tokens, N request(s), max_tokens M`, then what was refused."""
    said = (f"form {probe.form} answered" if probe.ok else f"no valid answer (last form {probe.form or '-'})")
    lines = [Text.assemble(("probe: ", "bold"), (said, "green" if probe.ok else "red"),
                           f" in {probe.latency_s:.1f} s, {probe.input_tokens}+{probe.output_tokens} tokens, "
                           f"{probe.requests} request(s), max_tokens {probe.max_tokens}")]
    lines += [Text.assemble(("refused: ", "yellow"), r) for r in probe.refused]
    lines += [Text.assemble(("invalid answer: ", "yellow"), e) for e in probe.answer_errors]
    if probe.timeout_note:
        lines.append(Text.assemble(("warning: ", "yellow"), probe.timeout_note))
    return lines
