"""Packaging hook (all metadata lives in pyproject.toml).

The repository's top-level data folders are the source of truth; a wheel carries copies of them inside
the package, so that they are there after a plain `pip install`:
  prompts/  ->  judge/_builtin_prompts/
  params/   ->  judge/_builtin_params/   (the local judge's decision thresholds)
An editable install needs no copy: `judge.prompts.builtin_dir()` and
`judge.judges.local.params.builtin_dir()` fall back to the repository's folders when the packaged
copies are absent. MANIFEST.in grafts the folders into the sdist.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_DIRS = {"prompts": Path("judge") / "_builtin_prompts", "params": Path("judge") / "_builtin_params"}


class BuildPyWithData(build_py):
    def run(self):
        super().run()
        here = Path(__file__).resolve().parent
        for source, target in DATA_DIRS.items():
            src, dst = here / source, Path(self.build_lib) / target
            if src.is_dir():
                shutil.rmtree(dst, ignore_errors=True)
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))


setup(cmdclass={"build_py": BuildPyWithData})
