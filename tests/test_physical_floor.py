"""The calibrated model never beats physics: on every GPU of the database, every value is
inside its physical bounds, and no GEMM or cast kernel is faster than its roofline floor
(its FLOPs at the peak, its bytes at the full bandwidth), whatever the shape."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from model_cases import align, supported_cases

from roofline import load_specs
from roofline.calibration.bounds import is_latency, out_of_bounds
from roofline.evaluate import calibration_of
from roofline.model.compiled import compile_model

SPECS = load_specs()
CASES = [(*case, grouped) for case in supported_cases(SPECS) for grouped in (False, True)]
dims = st.integers(min_value=1, max_value=1 << 17)


@pytest.mark.parametrize("gpu", list(SPECS.values()), ids=lambda g: g.name)
def test_every_resolved_parameter_is_within_its_bounds(gpu):
    assert out_of_bounds(calibration_of(gpu, SPECS).numbers()) == []


def _floor_parameters(gpu):
    """The GPU's parameters at the physical limit: every fraction 1, every latency 0."""
    params = calibration_of(gpu, SPECS)
    ideal = {key: 0.0 if is_latency(key) else 1.0 for key in params.numbers()}
    return params, params.with_values(ideal)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(CASES), dims, dims, dims, st.integers(1, 64), st.booleans())
def test_no_gemm_or_cast_beats_its_roofline_floor(case, m, k, n, groups, fusion):
    gpu, recipe, mode, grouped = case
    k, n = align(recipe, k, n)  # shapes the recipe accepts
    model = compile_model(mode, recipe, fusion, calibrated=True, grouped=grouped)
    params, ideal = _floor_parameters(gpu)
    no_waves = dataclasses.replace(gpu, sm_count=None)  # every tile slot busy
    shape = [np.array([float(d)]) for d in (m, k, n)]
    g = np.array([float(groups)]) if grouped else None
    times = model.term_times(gpu, *shape, params, g)
    floors = model.term_times(no_waves, *shape, ideal, g)
    for key, time in times.items():
        assert time[0] >= floors[key][0] * (1 - 1e-12), (gpu.name, recipe.name, mode, key)
