"""Write one named section of benchmarks/RESULTS.md, keeping every other section where it is.

    from _results import write_section
    write_section("Grading throughput (bench_grade.py)", text)

A section is a `## title` line and what follows it up to the next `## ` heading. An existing
section of that exact title is replaced in place; a new one is appended at the end. What a section
holds from a line starting with `KEPT` on (an analysis written by hand under the measured figures,
the history of earlier runs) is kept under the new figures.
"""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEAD = "# Benchmark results\n"
KEPT = "<!-- kept:"  # a section's hand-written tail starts at a line starting with this (module docs)


def write_section(title: str, body: str, path: Path = RESULTS) -> None:
    heading = f"## {title}"
    section = f"{heading}\n\n{body.strip(chr(10))}\n"
    lines = (path.read_text(encoding="utf-8") if path.exists() else HEAD).splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.rstrip("\n") == heading]
    if not starts:
        path.write_text("".join(lines).rstrip("\n") + "\n\n" + section, encoding="utf-8")
        return
    start = starts[0]
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    kept = next((i for i in range(start + 1, end) if lines[i].startswith(KEPT)), end)
    if kept < end:
        section += "\n" + "".join(lines[kept:end]).rstrip("\n") + "\n"
    after = "".join(lines[end:])
    path.write_text("".join(lines[:start]) + section + ("\n" + after if after else ""), encoding="utf-8")


def quick_defaults(args, quick: dict, full: dict) -> None:
    """Fill the options left unset (None) from `quick` with `--quick`, else from `full`."""
    for name, value in (quick if getattr(args, "quick", False) else full).items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)


def run_kind(quick: bool, quick_size: str, full_size: str) -> str:
    """The sentence a RESULTS section opens with: which run made it, and what the other one measures."""
    if quick:
        return f"**Run:** `--quick` ({quick_size}); the full run measures {full_size}."
    return f"**Run:** the full run ({full_size}); `--quick` measures {quick_size}."
