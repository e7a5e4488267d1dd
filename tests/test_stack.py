"""Several calibrations in one call (roofline/calibration/stack.py): the same numbers.

A stacked evaluation must give, row for row, exactly (bit for bit) what one evaluation per
calibration gives, for every GPU with a plausible range and every recipe it can run;
shapes must be one-dimensional, and the stack must hold calibrations of the same
parameters.
"""

from __future__ import annotations

import numpy as np
import pytest

from roofline.analysis import guidance
from roofline.calibration.stack import ParameterStack
from roofline.evaluate import calibration_of, evaluate_columns
from roofline.recipes import Mode
from roofline.specs import load_specs

M = np.array([16.0, 1024.0, 8192.0, 3.0 * 4096])
K = np.array([4096.0, 2048.0, 8192.0, 4096.0])
N = np.array([4096.0, 8192.0, 1024.0, 14336.0])


def _cornered() -> list:
    bundled = load_specs(None)
    found = []
    for gpu in bundled.values():
        calibration = calibration_of(gpu, bundled)
        corners = guidance.calibration_corners(calibration)
        if corners:
            found.append((gpu, (calibration, *corners)))
    return found


@pytest.mark.parametrize("mode", [Mode.TRAINING, Mode.INFERENCE])
def test_stacked_rows_are_the_separate_evaluations(mode: Mode) -> None:
    cornered = _cornered()
    assert cornered, "no GPU with assumed ranges: nothing stacked"
    for gpu, calibrations in cornered[:4]:
        for recipe in guidance.native_recipes(gpu, mode):
            stacked = evaluate_columns(
                gpu, mode, recipe, M, K, N, calibration=ParameterStack(calibrations)
            )
            for row, calibration in enumerate(calibrations):
                alone = evaluate_columns(gpu, mode, recipe, M, K, N, calibration=calibration)
                for column, values in alone.items():
                    got = stacked[column]
                    got = got[row] if got.ndim == 2 else got
                    np.testing.assert_array_equal(got, values, err_msg=f"{gpu.name} {column}")


def test_a_stack_takes_one_dimensional_shapes_only() -> None:
    gpu, calibrations = _cornered()[0]
    recipe = guidance.native_recipes(gpu, Mode.TRAINING)[0]
    with pytest.raises(ValueError, match="one-dimensional"):
        evaluate_columns(
            gpu,
            Mode.TRAINING,
            recipe,
            M[:, None],
            K[:, None],
            N[:, None],
            calibration=ParameterStack(calibrations),
        )


def test_a_stack_needs_calibrations_of_the_same_parameters() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ParameterStack([])
    _, calibrations = _cornered()[0]
    first = calibrations[0]
    fewer = type(first)(first.gpu, dict(list(first.values.items())[:-1]), first.cv)
    with pytest.raises(ValueError, match="same parameters"):
        ParameterStack([first, fewer])
