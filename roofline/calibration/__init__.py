"""The calibrated model: torchao's terms, timed with efficiencies and latencies measured or
fitted on public measurements (:mod:`roofline.measurements`).

* :mod:`.terms`: the calibrated time of each GEMM and cast kernel, in sympy;
* :mod:`.data`: the stored parameters (``roofline/data/calibration.toml``), linted;
* :mod:`.params`: every parameter's value for one GPU, with its basis (measured, fitted,
  assumed), its source and, for assumed values, a plausible range;
* :mod:`.fit`: the least-squares refit behind ``roofline calibrate`` (needs scipy).

torchao's model (:mod:`roofline.model.formulas`) is unchanged; ``calibrated=True`` selects this one.
"""

from __future__ import annotations

from roofline.calibration.data import CalibrationData, load_calibration
from roofline.calibration.params import (
    Basis,
    CalibratedParameters,
    ParameterValue,
    calibration_for,
)

__all__ = [
    "Basis",
    "CalibratedParameters",
    "CalibrationData",
    "ParameterValue",
    "calibration_for",
    "load_calibration",
]
