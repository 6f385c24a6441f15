"""Writes that cannot tear: the one way `judge` writes a file it produces (a report, a page, a suite
part, a calibration record's verdicts, a run-log entry, a slice, the prompt lock).

`write_atomic` writes to a temporary file in the target's own folder (so the rename cannot cross
file systems), flushes and fsyncs it, then renames it over the target: a reader sees the old file
or the new one, never half of one, and a kill or a full disk before the rename leaves the previous
file as it was (the temporary file is removed on any error). `exclusive=True` never replaces an
existing file (a run-log entry under a fresh name): the finished file is linked into place, which
fails when the name is taken.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def _umask() -> int:
    umask = os.umask(0)  # read once, at import: setting it back and forth is not thread-safe
    os.umask(umask)
    return umask


_UMASK = _umask()


def _mode(path: Path) -> int:
    """The permissions the target should have: the existing file's, else what the umask allows."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_UMASK


def write_atomic(path: str | Path, data: str | bytes | Iterable[str], *, exclusive: bool = False,
                 encoding: str = "utf-8") -> Path:
    """Write `data` (text in `encoding`, bytes, or text in pieces: a long report written as it is
    made) to `path`, creating its folder; atomically (see the module docstring). Raises OSError
    (FileExistsError with `exclusive` when `path` exists)."""
    path = Path(path)
    pieces = [data] if isinstance(data, (str, bytes)) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            for piece in pieces:
                handle.write(piece.encode(encoding) if isinstance(piece, str) else piece)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _mode(path))
        if exclusive:
            os.link(tmp, path)  # fails when the name is taken; the file is whole before it has the name
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
