"""What `judge run` writes into its output folder, each file atomically (a temporary file in the same
folder, then a rename), and the folder's own guard: it must be new or empty (nothing is overwritten)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from judge.errors import UsageError


def prepare_folder(folder: Path) -> None:
    """Create the output folder; a folder that exists with anything in it is refused."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"{folder} exists and is not empty: `judge run` writes into a new or empty folder "
                         "(nothing is overwritten)", file=str(folder), field="-o")
    folder.mkdir(parents=True, exist_ok=True)


def write_atomic(path: Path, text: str) -> Path:
    """Write `text` to `path` through a temporary file in the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json(path: Path, data: Any) -> Path:
    return write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def write_yaml(path: Path, data: Any, header: str = "") -> Path:
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)
    return write_atomic(path, (header + "\n" if header else "") + body)
