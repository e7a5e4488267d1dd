"""Several calibrations of one GPU evaluated in one call of a compiled model.

A headline's plausible range is the extent of its value over the nominal parameters and
every corner of the assumed ranges (:func:`roofline.analysis.guidance.calibration_corners`):
up to 32 calibrations of one GPU, each once a small evaluation. Stacked, each parameter
is a column (one row per calibration) that numpy broadcasts against the row of shapes,
so one call gives every calibration's times, one row each, computed by the same
operations in the same order as separate calls (the same numbers, bit for bit).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from roofline.calibration.params import CalibratedParameters


class ParameterStack:
    """``calibrations`` (of one GPU, with the same parameter keys) as one argument of
    :meth:`roofline.model.compiled.CompiledModel.term_times`: its times have one row per
    calibration, in the order given."""

    def __init__(self, calibrations: Sequence[CalibratedParameters]) -> None:
        if not calibrations:
            raise ValueError("a parameter stack needs at least one calibration")
        keys = calibrations[0].values.keys()
        if any(c.values.keys() != keys for c in calibrations):
            raise ValueError("the calibrations of a stack must have the same parameters")
        self.calibrations = tuple(calibrations)
        self._columns = {
            key: np.array([c.values[key].value for c in calibrations], dtype=np.float64)[:, None]
            for key in keys
        }

    def __len__(self) -> int:
        return len(self.calibrations)

    def numbers(self) -> dict[str, np.ndarray]:
        """Parameter key -> its values as a column (calibrations, 1)."""
        return self._columns
