#!/usr/bin/env python3
"""Every command output the docs show comes from the real command; this script keeps it so.

    .venv/bin/python scripts/docs_outputs.py --write   # regenerate the blocks in README.md and docs/
    .venv/bin/python scripts/docs_outputs.py --check   # exit 1 naming each page and command that changed

tests/test_docs.py runs the check. Two kinds of marker, each an HTML comment (invisible on GitHub and
on the site) on the line right before a fenced block that the script owns:

    <!-- judge-output: judge grade docs/tour/scenario.yaml docs/tour/drift.jsonl --judge none -->
    ```text
    (generated)
    ```

    <!-- judge-file: docs/tour/scenario.yaml -->
    ```yaml
    (the file, verbatim)
    ```

    <!-- judge-generated: cli -->
    | (a Markdown table, generated) |
    <!-- /judge-generated -->

A `judge-generated` marker names a table of scripts/surface.py (`cli`, `http`, `formats`,
`objects`, `rules`: judge's commands and flags, HTTP endpoints, format names, JSON objects and their
fields, the rule kinds, read from the code), shown as Markdown (not fenced) up to the closing `<!-- /judge-generated
-->`.

A `judge-output` marker holds one command, or several separated by ` ; ` (run in order, whatever
their exit codes, as a shell would). A command may start with `COLUMNS=N ` (that width instead of
100, as a shell would set it) and `PYTHONPATH=FOLDER ` (a folder of the repository first on the
path: a plug-in installed in place). A command is split like a shell line (shlex) and is one of:

- `judge ARGS`: the `judge` console script installed beside this Python;
- `python ARGS`: this Python;
- `jq FILTER FILE`: a fragment of a JSON file an earlier command of the same marker wrote,
  printed as jq prints it (indent 2). FILTER is the small subset of jq the docs need: `.`,
  `.key`, `.[N]`, `.key[N].other` and so on, optionally followed by `| keys` or
  `| keys_unsorted`. It is done here in Python: jq need not be installed.

Every command runs with the repository root as working directory, COLUMNS=100, no colour, the
offline settings of the Makefile, PYTHONPATH=the repository root (so this checkout's `judge` is the
one run), this Python's folder first on PATH (as after `. .venv/bin/activate`), no JUDGE_*
variable but JUDGE_CACHE_DIR, and JUDGE_LOG_DIR=out/docs/runs (so that `judge grade` keeps its run
log there, not in the repository). A command writes its files under out/docs/
(ignored by git; emptied before each run). Markers run in parallel: they must not depend on one
another, so a marker that needs a report makes it itself (`judge grade ... -q --json
out/docs/NAME.json ; jq .runs[0].metrics out/docs/NAME.json`), under a name no other marker uses.

The block shows, for each command, `$ COMMAND`, then its stdout and stderr as they interleave,
then `(exit code N)` when N is not 0. Trailing spaces are dropped and the repository's absolute
path is written relative to it.

docs/index.md (the home page of the site) is generated too: README.md with its links into docs/
made relative to docs/. Edit README.md, not docs/index.md.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SCRATCH = ROOT / "out" / "docs"
README = ROOT / "README.md"
INDEX = DOCS / "index.md"
MARKER = re.compile(r"^<!-- judge-(output|file|generated): (.+?) -->\s*$")
GENERATED_END = "<!-- /judge-generated -->"
SURFACE = ROOT / "scripts" / "surface.py"
FENCE = re.compile(r"^(`{3,})([\w-]*)\s*$")
INDEX_HEADER = ("<!-- Generated from README.md by scripts/docs_outputs.py --write: edit README.md, "
                "not this file. -->\n")
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "LITELLM_OFFLINE_MODE": "true", "LITELLM_MODE": "PRODUCTION", "TOKENIZERS_PARALLELISM": "false"}
# Variables that would make rich or click colour or decorate output that is not a terminal.
FORCING = ("FORCE_COLOR", "CLICOLOR_FORCE", "PY_COLORS", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
TIMEOUT_S = 300
# Markers that load the offline model or bootstrap statistics start first, so the pool ends sooner.
SLOW = ("--judge local", "audit-summary", "judge calibrate")


class DocsError(Exception):
    """A marker that cannot be run: wrong syntax, unknown command, missing file."""


@dataclass
class Block:
    page: Path          # the page holding the marker
    line: int           # the marker's line number (1-based)
    kind: str           # "output", "file" or "generated"
    spec: str           # the command(s), the file path, or the table's name
    body: tuple[int, int] | None  # line indices [start, end) of the content; None: no block yet
    lang: str = "text"

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """The pages whose blocks are run: README.md and every docs page but the generated index."""
    return [README, *sorted(p for p in DOCS.rglob("*.md") if p != INDEX)]


def find_blocks(page: Path, lines: list[str]) -> list[Block]:
    blocks = []
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        block = Block(page, i + 1, m.group(1), m.group(2).strip(), None)
        if block.kind == "generated":
            end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == GENERATED_END), None)
            if end is not None:
                block.body, block.lang = (i + 1, end), "markdown"
            blocks.append(block)
            continue
        fence = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if fence:
            end = next((j for j in range(i + 2, len(lines)) if lines[j].rstrip() == fence.group(1)), None)
            if end is None:
                raise DocsError(f"{block.where()}: the fenced block after the marker is not closed")
            block.body, block.lang = (i + 2, end), fence.group(2) or "text"
        blocks.append(block)
    return blocks


# ---------------------------------------------------------------- running commands


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in FORCING and (not k.startswith("JUDGE_") or k == "JUDGE_CACHE_DIR")}
    env.update(OFFLINE, COLUMNS="100", NO_COLOR="1", PYTHONUNBUFFERED="1", JUDGE_LOG_DIR=str(SCRATCH / "runs"),
               PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])]),
               # as after `. .venv/bin/activate`: `python` in a command `judge` runs is this Python
               PATH=os.pathsep.join([str(Path(sys.executable).parent), *filter(None, [env.get("PATH")])]))
    return env


def _judge_script() -> str:
    here = Path(sys.executable).parent / ("judge.exe" if os.name == "nt" else "judge")
    found = str(here) if here.exists() else shutil.which("judge")
    if not found:
        raise DocsError("no `judge` console script beside this Python: install the project first (make install)")
    return found


def _normalise(text: str) -> list[str]:
    text = text.replace(str(ROOT) + os.sep, "").replace(str(ROOT), ".")
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


_STEP = re.compile(r'\.([A-Za-z_][\w-]*)|\.?\[(\d+)\]|\."([^"]+)"')


def jq(flt: str, data):
    """The jq subset the docs use: paths of keys and indexes, then optionally `| keys`."""
    stages = [s.strip() for s in flt.split("|")]
    for stage in stages:
        if stage in ("keys", "keys_unsorted"):
            if isinstance(data, dict):
                data = sorted(data) if stage == "keys" else list(data)
            elif isinstance(data, list):
                data = list(range(len(data)))
            else:
                raise DocsError(f"jq: {stage} of a {type(data).__name__}")
            continue
        if not stage.startswith("."):
            raise DocsError(f"jq: unsupported filter {stage!r} (use .key, .[N], | keys)")
        pos = 1 if stage == "." else 0
        while pos < len(stage):
            m = _STEP.match(stage, pos)
            if not m:
                raise DocsError(f"jq: cannot read {stage[pos:]!r} in {flt!r}")
            key, index, quoted = m.groups()
            if index is not None:
                data = data[int(index)] if isinstance(data, list) and int(index) < len(data) else None
            else:
                data = data.get(key or quoted) if isinstance(data, dict) else None
            pos = m.end()
    return data


def _run_one(argv: list[str], columns: str | None = None, path: str | None = None) -> tuple[str, int]:
    if argv[0] == "jq":
        if len(argv) != 3:
            raise DocsError("jq takes a filter and a file: jq FILTER FILE")
        path = ROOT / argv[2]
        if not path.is_file():
            raise DocsError(f"jq: {argv[2]} does not exist (an earlier command of the marker must write it)")
        return json.dumps(jq(argv[1], json.loads(path.read_text(encoding="utf-8"))), indent=2,
                          ensure_ascii=False), 0
    if argv[0] == "judge":
        exe = [_judge_script()]
    elif argv[0] == "python":
        exe = [sys.executable]
    else:
        raise DocsError(f"unsupported command {argv[0]!r}: a marker runs judge, python or jq")
    env = _env()
    if columns is not None:
        env["COLUMNS"] = columns
    if path is not None:  # a folder of the repository put first on PYTHONPATH (a plug-in installed in place)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / path), env["PYTHONPATH"]])
    proc = subprocess.run(exe + argv[1:], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_S)
    return proc.stdout, proc.returncode


def run_marker(spec: str) -> list[str]:
    """The lines of the block for one `judge-output` marker."""
    out: list[str] = []
    for command in (c.strip() for c in spec.split(" ; ")):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise DocsError(f"cannot split {command!r}: {exc}") from None
        columns, path = None, None
        while argv and argv[0].startswith(("COLUMNS=", "PYTHONPATH=")):  # as a shell would set them
            name, value = argv.pop(0).split("=", 1)
            if name == "COLUMNS":
                if not value.isdigit():
                    raise DocsError(f"COLUMNS must be a number in {command!r}")
                columns = value
            else:
                path = value
        if not argv:
            raise DocsError("empty command")
        text, code = _run_one(argv, columns, path)
        out.append(f"$ {command}")
        out.extend(_normalise(text))
        if code:
            out.append(f"(exit code {code})")
    return out


def generated_lines(table: str) -> list[str]:
    """A table of scripts/surface.py, run with this Python as the markers' commands are."""
    proc = subprocess.run([sys.executable, str(SURFACE), table], cwd=ROOT, env=_env(), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode:
        raise DocsError(f"scripts/surface.py {table} failed (exit code {proc.returncode}): "
                        + (proc.stderr.strip().splitlines() or ["no output"])[-1])
    return _normalise(proc.stdout)


def file_lines(spec: str) -> list[str]:
    path = ROOT / spec
    if not path.is_file():
        raise DocsError(f"{spec} does not exist")
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


# ---------------------------------------------------------------- pages


def index_from_readme(readme: str) -> str:
    """docs/index.md: README.md with its links into docs/ made relative to docs/."""
    return INDEX_HEADER + re.sub(r"\]\(docs/", "](", readme)


def _render(blocks_by_page: dict[Path, tuple[list[str], list[Block]]]) -> dict[Path, dict[int, list[str]]]:
    """Run every marker (in parallel; identical ones once) -> page -> marker line -> block lines."""
    specs = {b.spec for _, blocks in blocks_by_page.values() for b in blocks if b.kind == "output"}
    tables = {b.spec for _, blocks in blocks_by_page.values() for b in blocks if b.kind == "generated"}
    if SCRATCH.exists():
        shutil.rmtree(SCRATCH)
    SCRATCH.mkdir(parents=True)
    workers = max(2, min(8, os.cpu_count() or 2))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        order = sorted(specs, key=lambda spec: (not any(s in spec for s in SLOW), spec))
        futures = {spec: pool.submit(run_marker, spec) for spec in order}
        generated = {table: pool.submit(generated_lines, table) for table in sorted(tables)}
    results: dict[Path, dict[int, list[str]]] = {}
    for page, (_, blocks) in blocks_by_page.items():
        for b in blocks:
            try:
                if b.kind == "output":
                    lines = futures[b.spec].result()
                elif b.kind == "generated":
                    lines = generated[b.spec].result()
                else:
                    lines = file_lines(b.spec)
            except DocsError as exc:
                raise DocsError(f"{b.where()}: {exc}") from None
            results.setdefault(page, {})[b.line] = lines
    return results


def _load() -> dict[Path, tuple[list[str], list[Block]]]:
    loaded = {}
    for page in pages():
        lines = page.read_text(encoding="utf-8").split("\n")
        loaded[page] = (lines, find_blocks(page, lines))
    return loaded


def _fence_for(lines: list[str]) -> str:
    longest = max((len(m.group(0)) for line in lines for m in re.finditer(r"`{3,}", line)), default=0)
    return "`" * max(3, longest + 1)


def write() -> list[str]:
    """Regenerate every block and docs/index.md; return the pages that changed."""
    loaded = _load()
    results = _render(loaded)
    changed = []
    for page, (lines, blocks) in loaded.items():
        new = list(lines)
        for b in sorted(blocks, key=lambda b: b.line, reverse=True):  # bottom up: indices stay valid
            body = results[page][b.line]
            if b.body is None and b.kind == "generated":
                new[b.line:b.line] = [*body, GENERATED_END]
            elif b.body is None:
                fence = _fence_for(body)
                new[b.line:b.line] = [fence + b.lang, *body, fence]
            else:
                new[b.body[0]:b.body[1]] = body
        if new != lines:
            page.write_text("\n".join(new), encoding="utf-8")
            changed.append(str(page.relative_to(ROOT)))
    index = index_from_readme(README.read_text(encoding="utf-8"))
    if not INDEX.exists() or INDEX.read_text(encoding="utf-8") != index:
        INDEX.write_text(index, encoding="utf-8")
        changed.append(str(INDEX.relative_to(ROOT)))
    return changed


def check() -> list[str]:
    """One message per block whose output (or file copy) changed, and for a stale docs/index.md."""
    loaded = _load()
    results = _render(loaded)
    problems = []
    for page, (lines, blocks) in loaded.items():
        for b in blocks:
            want = results[page][b.line]
            what = {"output": f"output of `{b.spec}`", "file": f"the copy of {b.spec}",
                    "generated": f"the table `{b.spec}` of scripts/surface.py"}[b.kind]
            if b.body is None:
                problems.append(f"{b.where()}: no block after the marker for {what}")
                continue
            have = lines[b.body[0]:b.body[1]]
            if have != want:
                diff = "\n".join(difflib.unified_diff(have, want, "shown in the docs", "printed now", lineterm="", n=1))
                problems.append(f"{b.where()}: {what} changed\n{diff}")
    if not INDEX.exists() or INDEX.read_text(encoding="utf-8") != index_from_readme(README.read_text(encoding="utf-8")):
        problems.append("docs/index.md: no longer README.md with its links rebased")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the blocks and docs/index.md")
    mode.add_argument("--check", action="store_true", help="exit 1 when a block or docs/index.md is stale")
    args = parser.parse_args(argv)
    try:
        if args.write:
            changed = write()
            print("updated: " + ", ".join(changed) if changed else "every block is up to date")
            return 0
        problems = check()
    except DocsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem, end="\n\n")
    if problems:
        print(f"{len(problems)} stale block(s): run .venv/bin/python scripts/docs_outputs.py --write")
        return 1
    print("every block matches its command")
    return 0


if __name__ == "__main__":
    sys.exit(main())
