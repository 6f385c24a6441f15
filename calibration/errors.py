"""The one error a user can cause in `calibration`: bad input, named by file, line and field."""

from __future__ import annotations


class CalibrationInputError(ValueError):
    """Bad label or verdict input, or arguments that do not fit together.

    Carries the file, line (1-based) and field where it can, so a caller can render one line such as
    ``labels/a.jsonl:7: confidence: must be a number between 0 and 1``.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.field = field

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = str(self.file) + (f":{self.line}" if self.line is not None else "") + ": "
        field = f"{self.field}: " if self.field else ""
        return f"{where}{field}{self.message}"
