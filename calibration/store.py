"""Calibration records on disk: write NAME.json + NAME.png, load, and find by key (the lookup and
`stale_reasons`, why a record no longer fits a judge or a label set, are calibration.lookup's)."""

from __future__ import annotations

from pathlib import Path

from calibration.errors import CalibrationInputError
from calibration.files import replace_atomically
from calibration.inputs import Fingerprint
from calibration.lookup import find_record_path, read_as
from calibration.lookup import stale_reasons as stale_reasons  # where it was before calibration.lookup
from calibration.plot import reliability_diagram
from calibration.record import CalibrationRecord, check_name


def write_record(record: CalibrationRecord, out_dir: str | Path, name: str) -> tuple[Path, Path]:
    """Write `out_dir/NAME.json` (the record) and `out_dir/NAME.png` (its reliability diagram),
    each to a temporary file in the folder first, renamed into place: a crash or a full disk never
    leaves half a record, and the previous one survives."""
    check_name(name)
    out = Path(out_dir)
    json_path, png_path = out / f"{name}.json", out / f"{name}.png"
    try:
        out.mkdir(parents=True, exist_ok=True)
        replace_atomically(json_path, (record.model_dump_json(indent=2) + "\n").encode("utf-8"))
        reliability_diagram(record.reliability, png_path, title=f"{name} (n={record.n})",
                            ece=record.ece)
    except OSError as exc:
        raise CalibrationInputError(f"cannot write: {exc.strerror}",
                                    file=exc.filename or str(out)) from exc
    return json_path, png_path


def load_record(path: str | Path) -> CalibrationRecord:
    """Read one record; a file that is not a valid record is an error naming the file and field."""
    return read_as(CalibrationRecord, path)


def find_record(directory: str | Path, fingerprint: Fingerprint,
                labels_sha256: str | None = None) -> CalibrationRecord | None:
    """The newest record in `directory` (its *.json files) for this fingerprint and, when given,
    this label set; None when there is none (the calibration is then stale or missing). The files'
    heads are compared (calibration.lookup); only the record found is loaded whole."""
    path = find_record_path(directory, fingerprint, labels_sha256)
    return None if path is None else load_record(path)
