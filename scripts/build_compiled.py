#!/usr/bin/env python3
"""Compile the grader's hot modules (judge.compiled.MODULES) with mypyc into the virtual environment.

    .venv/bin/python scripts/build_compiled.py            # build (about a minute on 2 cores)
    .venv/bin/python scripts/build_compiled.py --if-stale # only when a source changed since the last build
    .venv/bin/python scripts/build_compiled.py --remove   # back to pure Python

`make install` runs it with --if-stale (so `make test` and `make demo` rebuild after an edit). The
extensions and a manifest go to `.venv/judge-compiled/` (never into the source tree, which stays
what git holds); judge.compiled loads them only while every source the build read is unchanged.
mypyc ships with mypy, which builds with setuptools (both in the test extra); gcc and the Python headers
must be there. A build that fails leaves judge pure Python (exit 0 with a message unless --strict): nothing else depends on it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from judge.compiled import MANIFEST, MODULES, build_dir, source_digests  # noqa: E402

# The modules outside the build are Any to mypyc (their classes are pydantic's, msgspec's, or
# plain Python ones it would call the same way): type-checking all of judge's imports again took
# ~7 minutes of the build. No config file: `make test`'s mypy holds the code to the project's
# strictness; this run only needs the types.
MYPY_OPTIONS = ("--config-file=", "--follow-imports=skip", "--ignore-missing-imports", "--cache-dir", str(ROOT / ".mypy_cache" / "compiled"))


def module_file(name: str) -> Path:
    path = ROOT / Path(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def sources() -> list[str]:
    """The sources the build reads: the compiled modules only (every other module is Any to it)."""
    return [str(module_file(n).relative_to(ROOT)) for n in MODULES]


def is_current(out: Path) -> bool:
    try:
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (manifest.get("cache_tag") == sys.implementation.cache_tag and manifest.get("modules") == list(MODULES)
            and manifest.get("sources") == source_digests(sources(), ROOT))


def build(out: Path, jobs: int) -> dict:
    files = sources()
    digests = source_digests(files, ROOT)
    with tempfile.TemporaryDirectory(prefix="judge-compiled-") as tmp:
        # mypycify inside setup(): the generated C in tmp/c, objects in tmp/obj, extensions in tmp/lib.
        code = ("import sys; from setuptools import setup; from mypyc.build import mypycify; "
                "setup(name='judge-compiled', packages=[], script_args=sys.argv[1:], "
                f"ext_modules=mypycify({[*MYPY_OPTIONS, *files]!r}, separate=False, opt_level='3', target_dir={tmp + '/c'!r}))")
        args = [sys.executable, "-c", code, "build_ext", "--build-lib", f"{tmp}/lib", "--build-temp", f"{tmp}/obj",
                "-j", str(jobs)]
        done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise RuntimeError(f"mypyc failed (exit {done.returncode}):\n{tail}")
        lib = Path(tmp) / "lib"
        built = {}
        for so in sorted(lib.rglob("*.so")):
            rel = so.relative_to(lib)
            name = ".".join(rel.parts[:-1] + (rel.name.split(".")[0],))
            built[name] = str(rel)
        missing = [n for n in MODULES if n not in built]
        if missing:
            raise RuntimeError(f"mypyc built no extension for {', '.join(missing)}")
        manifest = {"cache_tag": sys.implementation.cache_tag, "modules": list(MODULES), "files": built,
                    "sources": digests, "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (lib / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        # Replace the old build whole: a new directory beside it, then renames.
        staged = out.with_name(out.name + ".new")
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(lib, staged)
        old = out.with_name(out.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if out.exists():
            os.replace(out, old)
        os.replace(staged, out)
        shutil.rmtree(old, ignore_errors=True)
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=build_dir(), help="default: %(default)s")
    parser.add_argument("--if-stale", action="store_true", help="do nothing when the build matches the sources")
    parser.add_argument("--remove", action="store_true", help="delete the build (judge runs as pure Python)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the build fails")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    if args.remove:
        shutil.rmtree(args.out, ignore_errors=True)
        print(f"compiled: removed {args.out}; judge runs as pure Python")
        return 0
    if args.if_stale and is_current(args.out):
        print(f"compiled: {len(MODULES)} modules in {args.out} match their sources")
        return 0
    started = time.monotonic()
    # Said before it starts: the build prints nothing while it runs (30-50 s on 2 idle cores; 4.5 min
    # measured at load 20).
    print(f"compiled: compiling {len(MODULES)} modules with mypyc (30-50 s on 2 idle cores, minutes on a busy "
          "machine; once, and again only after one of them is edited)", flush=True)
    try:
        build(args.out, args.jobs)
    except (RuntimeError, OSError) as exc:
        shutil.rmtree(args.out, ignore_errors=True)  # a half or stale build is never loaded
        print(f"compiled: not built, judge runs as pure Python (the same results, slower on long traces): {exc}",
              file=sys.stderr)
        return 1 if args.strict else 0
    print(f"compiled: {len(MODULES)} modules with mypyc into {args.out} in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
