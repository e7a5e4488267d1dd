"""The calibrated model's parameters: efficiencies and latencies measured or fitted on
public measurements (:mod:`roofline.measurements`).

* :mod:`.data`: the stored parameters (``roofline/data/calibration.toml``), linted;
* :mod:`.bounds`: each parameter's physical bounds, checked at load and after every fit;
* :mod:`.params`: every parameter's value for one GPU, with its basis (measured, fitted,
  assumed), its source and, for assumed values, a plausible range;
* :mod:`.write`: refit values written into a calibration file's text, keeping every
  comment and note.

The calibrated time of each GEMM and cast kernel is :mod:`roofline.model.calibrated`, the
least-squares refit behind ``roofline calibrate`` :mod:`roofline.analysis.fit` (needs
scipy). torchao's model (:mod:`roofline.model.torchao`) is unchanged; ``calibrated=True``
selects the calibrated one.
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
