"""calibration: measure any judge against human labels. Knows nothing of the `judge` package.

Input: label records (case, label, annotator) and verdict records (case, verdict, confidence, judge
fingerprint). Output: statistics, calibrators and calibration records. Names are exported lazily so
that importing the package (e.g. for `judge --help`) does not import scikit-learn or scipy.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CalibrationInputError": "calibration.errors",
    "LabelRecord": "calibration.inputs",
    "VerdictRecord": "calibration.inputs",
    "read_labels": "calibration.inputs",
    "read_verdicts": "calibration.inputs",
    "labels_sha256": "calibration.inputs",
    "CalibrationRecord": "calibration.record",
    "calibrate": "calibration.record",
    "Calibrator": "calibration.calibrators",
    "fit_calibrator": "calibration.calibrators",
    "review_threshold": "calibration.calibrators",
    "write_record": "calibration.store",
    "load_record": "calibration.store",
    "find_record": "calibration.store",
    "stale_reasons": "calibration.store",
    "compare_judges": "calibration.compare",
    "agreement": "calibration.compare",
    "estimate_prevalence": "calibration.prevalence",
    "calibrate_files": "calibration.api",
    "compare_files": "calibration.api",
    "estimate_files": "calibration.api",
    "agreement_files": "calibration.api",
    "add_bias_file": "calibration.api",
    "with_bias_gate": "calibration.record",
    "BiasGate": "calibration.bias",
    "FlipObservation": "calibration.bias",
    "bias_gate": "calibration.bias",
    "flip_rate": "calibration.bias",
    "mcnemar_test": "calibration.bias",
    "HeldOut": "calibration.splits",
    "SplitFigures": "calibration.splits",
    "CrossValidation": "calibration.splits",
    "case_splits": "calibration.splits",
    "cross_validate": "calibration.splits",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'calibration' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


def __dir__() -> list[str]:
    return __all__
