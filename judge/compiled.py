"""The grader's hot modules, compiled by mypyc, loaded only while they match their sources.

`make install` compiles the modules of `MODULES` (scripts/build_compiled.py) into
`.venv/judge-compiled/` and writes a manifest there: every compiled module's extension file and
the sha256 of its source (the build reads no other: every module outside it is `Any` to mypyc,
called as Python calls it). On the first import of one of them, `CompiledFinder` hashes those sources again: when all
match, every module of the manifest is loaded from its extension; when any differs (a source edited
since the build, another checkout, another interpreter), none is, and every module is the Python
source as usual. All or none, because compiled modules call each other directly: one edited module
loaded from its source beside the others compiled from the old one would mix two versions.

Without a build (no C compiler, a plain `pip install`), or with `JUDGE_PURE_PYTHON=1` set, judge is
the pure-Python package it always is; the results are the same either way (tests/test_compiled.py
grades the bundled examples both ways and compares the reports).

Only the standard library is imported here: this runs from judge/__init__.py, before anything else.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

# Compiled by `make install` (the 1M-event grade's hot loop: the reader, the redaction precheck and
# the detectors it calls on a flagged line's strings, the rules' shared state, the windows). Modules
# that define pydantic models stay Python: compiled, a model lost its annotations (the rule registry
# read an empty `check` tag); tests/test_compiled.py holds that. (A msgspec struct compiles as a
# plain Python class: judge.checks.rules.Hit.)
MODULES = (
    "judge.trace.ids", "judge.trace.blocks", "judge.trace.prescan", "judge.trace.precheck",
    "judge.trace.encoded", "judge.trace.normal", "judge.trace.load", "judge.trace.redact",
    "judge.trace.detect", "judge.trace.hidden", "judge.trace.prose", "judge.trace.providers",
    "judge.trace.duplicates",
    "judge.checks.rules", "judge.checks.recent", "judge.checks.progress", "judge.checks.restated",
    "judge.text.claim_target", "judge.text.claim_tokens", "judge.text.assertions", "judge.text.acts",
    "judge.grade.windows",
    "judge.checks.kinds._pathlike", "judge.checks.kinds._claimed", "judge.checks.matching", "judge.model.patterns",
)
ENV_OFF = "JUDGE_PURE_PYTHON"
MANIFEST = "manifest.json"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # the directory holding judge/


def build_dir(prefix: str | None = None) -> Path:
    """Where `make install` puts the compiled modules: inside the virtual environment."""
    return Path(prefix if prefix is not None else sys.prefix) / "judge-compiled"


def source_digests(paths: Sequence[str], root: Path = PACKAGE_ROOT) -> dict[str, str]:
    """sha256 of each source (paths relative to `root`); a missing file has the digest ''."""
    out = {}
    for rel in paths:
        try:
            out[rel] = hashlib.sha256((root / rel).read_bytes()).hexdigest()
        except OSError:
            out[rel] = ""
    return out


class CompiledFinder:
    """A meta path finder for the manifest's modules (PEP 451): their extension, or nothing."""

    def __init__(self, directory: Path, root: Path = PACKAGE_ROOT) -> None:
        self.directory = directory
        self.root = root
        self._files: dict[str, str] | None = None  # module -> extension file, once checked
        self.reason = "not checked yet"

    def _check(self) -> dict[str, str]:
        if self._files is None:
            self._files = {}
            try:
                manifest = json.loads((self.directory / MANIFEST).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self.reason = f"no build in {self.directory}"
                return self._files
            if not isinstance(manifest, dict) or not isinstance(manifest.get("sources"), dict) \
                    or not isinstance(manifest.get("files"), dict):
                self.reason = f"an unreadable manifest in {self.directory}"  # (never an error at import)
            elif manifest.get("cache_tag") != sys.implementation.cache_tag:
                self.reason = f"built for {manifest.get('cache_tag')}, not {sys.implementation.cache_tag}"
            elif source_digests(list(manifest["sources"]), self.root) != manifest["sources"]:
                self.reason = "a source changed since the build (make install compiles it again)"
            else:
                self._files = dict(manifest["files"])
                self.reason = "compiled"
        return self._files

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if not fullname.startswith("judge.") and not fullname.endswith("__mypyc"):
            return None  # (the modules' one shared library is a top-level `<hash>__mypyc`)
        file = self._check().get(fullname)
        if file is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(self.directory / file))
        return importlib.util.spec_from_file_location(fullname, self.directory / file, loader=loader)


def install(directory: Path | None = None) -> CompiledFinder | None:
    """Put a `CompiledFinder` first on `sys.meta_path` (once), unless JUDGE_PURE_PYTHON is set or
    there is no build; returns it (None when not installed)."""
    if os.environ.get(ENV_OFF, "") not in ("", "0"):
        return None
    for finder in sys.meta_path:
        if isinstance(finder, CompiledFinder):
            return finder
    directory = directory if directory is not None else build_dir()
    if not (directory / MANIFEST).is_file():
        return None
    finder = CompiledFinder(directory)
    sys.meta_path.insert(0, finder)
    return finder


def is_compiled(module: ModuleType) -> bool:
    """Whether `module` was loaded from a compiled extension."""
    return isinstance(getattr(module, "__loader__", None), importlib.machinery.ExtensionFileLoader)
