"""The one table style of every terminal report (grade, suite, ledger, calibrate, compare, estimate,
agreement, prompts list, audit-summary, import summaries, runs list|diff, config show), and the colours
they share.

A house table (`table`) has no box, a bold header, no padding at its edges and a left-aligned bold
title. Its last column may be a *note* (evidence, detail, why): the one column that wraps. `render`
prints it as a table when the console leaves the note NOTE_MIN characters (or the whole table fits),
else *stacked*: one block per row, its first cell on a line, the other cells as `name value` pairs,
the note below; so a narrow console never squeezes the note, or any column, away. The grade report
has its own stacked layout (judge.render.report), chosen with `fits` under WIDE columns.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.cells import cell_len
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

VERDICT_STYLE = {"violated": "bold red", "upheld": "green", "not-exercised": "dim",
                 "unassessed": "yellow", "judge-error": "magenta", "flagged": "bold yellow"}
STATUS_STYLE = {"PASS": "bold green", "FAIL": "bold red", "VETO": "bold white on red",
                "INCONCLUSIVE": "bold black on yellow"}
HEADER_STYLE = "bold"
NOTE_MIN = 30    # the fewest characters a note column gets
WIDE = 110       # below this width the grade report is stacked, one block per finding
GAP = 2          # characters between two columns (rich's padding of one on each side)


NOTE = "judge-note"  # the meta key marking a table's note column


def table(*columns: str, title: str | None = None, note: str | None = None, show_header: bool = True) -> Table:
    """A house table with `columns` (no wrap) and, last, a wrapping `note` column."""
    t = Table(title=Text(title) if title is not None else None, title_justify="left", title_style="bold", box=None,
              pad_edge=False, show_header=show_header, header_style=HEADER_STYLE, show_edge=False)
    for name in columns:
        t.add_column(name, no_wrap=True)
    if note is not None:
        add_note_column(t, note)
    return t


def add_note_column(t: Table, name: str) -> None:
    """The column that wraps (fold) when the rest of the width is too little for it."""
    t.add_column(name, overflow="fold")
    t.columns[-1].meta = {NOTE: True}  # type: ignore[attr-defined]


def cell(text: object, style: str = "") -> Text:
    """A cell that is plain data: never read as rich markup."""
    return Text("" if text is None else str(text), style=style)


def fits(console: Console, widths: Iterable[int], note_min: int = NOTE_MIN) -> bool:
    """Whether columns of these widths, plus a note of at least `note_min`, fit the console."""
    widths = list(widths)
    needed = sum(widths) + GAP * len(widths) + note_min
    return console.width >= WIDE and needed <= console.width


def header(text: str) -> Text:
    return Text(text, style=HEADER_STYLE)


def _plain(value: object) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def _has_note(t: Table) -> bool:
    return bool(t.columns) and bool(getattr(t.columns[-1], "meta", {}).get(NOTE))


def natural_widths(t: Table) -> list[int]:
    """Each column's width with nothing wrapped: its longest line, header included."""
    widths = []
    for column in t.columns:
        cells = [_plain(column.header) if t.show_header else "", *(_plain(c) for c in column.cells)]
        widths.append(max((cell_len(line) for c in cells for line in c.splitlines() or [""]), default=0))
    return widths


def table_fits(t: Table, width: int) -> bool:
    """The table as a table: every column whole, and the note (if any) at least NOTE_MIN wide."""
    widths = natural_widths(t)
    if _has_note(t):
        widths[-1] = min(widths[-1], NOTE_MIN)
    return sum(widths) + GAP * (len(widths) - 1) <= width


def render(console: Console, t: Table) -> None:
    """Print a house table, stacked when the console is too narrow for it (`table_fits`)."""
    if table_fits(t, console.width):
        console.print(t)
        return
    if t.title:
        console.print(Text(_plain(t.title), style="bold"))
    columns = t.columns
    note = columns[-1] if _has_note(t) and len(columns) > 1 else None
    fields = columns[1:-1] if note is not None else columns[1:]
    rows = zip(*(list(c.cells) for c in columns), strict=False) if columns else []
    for index, cells in enumerate(rows):
        row_style = t.rows[index].style if index < len(t.rows) else None
        head = cells[0] if isinstance(cells[0], Text) else Text(str(cells[0]))
        console.print(Text.assemble(head, style=row_style or ""))
        pairs = [Text.assemble((f"{_plain(c.header)} ", "dim"), cell if isinstance(cell, Text) else Text(str(cell)))
                 for c, cell in zip(fields, cells[1:1 + len(fields)], strict=False) if _plain(cell) != ""]
        if pairs:
            console.print(Padding(Text(" · ").join(pairs), (0, 0, 0, 2), expand=False))
        if note is not None and _plain(cells[-1]):
            last = cells[-1] if isinstance(cells[-1], Text) else Text(str(cells[-1]))
            console.print(Padding(last, (0, 0, 0, 2), expand=False))
