"""A Platt calibrator's prediction is scipy.special.expit's, bit for bit, without importing scipy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from scipy.special import expit

from calibration.calibrators import Calibrator

ROOT = Path(__file__).resolve().parents[1]


def _platt(coef: float, intercept: float) -> Calibrator:
    return Calibrator(kind="platt", coef=coef, intercept=intercept, n=100, reason="test")


def test_platt_prediction_is_scipys_expit_bit_for_bit():
    rng = np.random.default_rng(26)
    x = np.concatenate([rng.normal(0, 5, 200_000), rng.uniform(-800, 800, 100_000), np.linspace(-746, 746, 100_001),
                        [0.0, -0.0, 709.78, -709.78, 709.79, -709.79, 745.0, -745.0, 1e300, -1e300, np.inf, -np.inf,
                         np.nan, 5e-324, -5e-324]])
    for coef, intercept in [(1.0, 0.0), (3.7, -1.2), (-0.4, 2.5)]:
        got = _platt(coef, intercept).predict(x)
        want = expit(coef * x + intercept)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (x[~same][:5], got[~same][:5], want[~same][:5])


def test_platt_prediction_keeps_the_input_shape():
    cal = _platt(2.0, -0.5)
    assert cal.predict(0.8).shape == ()
    assert cal.predict([[0.1, 0.9], [0.5, 0.7]]).shape == (2, 2)
    assert float(cal.predict(0.8)) == float(expit(2.0 * 0.8 - 0.5))


def test_predicting_imports_no_scipy_special():
    code = ("import sys; from calibration.calibrators import Calibrator; "
            "Calibrator(kind='platt', coef=1.5, intercept=-0.2, n=100, reason='test').predict([0.1, 0.9]); "
            "print([m for m in ('scipy.special', 'scipy.stats', 'sklearn') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
