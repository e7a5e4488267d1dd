"""roofline.analysis.guidance: break-even and best-recipe semantics on hand-checkable cases."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from roofline.analysis.guidance import (
    ALWAYS,
    BF16_EFFICIENCY,
    BREAK_EVEN_KN,
    BREAK_EVEN_M_GRID,
    CANONICAL_SHAPE,
    SPEEDUP,
    best_recipe,
    break_even_from_curve,
    break_even_m,
    calibration_corners,
    gpu_guidance,
    has_calibration_data,
    native_recipes,
    pick_best,
    recipe_guidance,
)
from roofline.calibration.params import Basis, CalibratedParameters, ParameterValue
from roofline.capability import Support
from roofline.evaluate import calibration_of, evaluate_columns
from roofline.recipes import Mode, get_recipe
from roofline.shapes import llama

M = np.array([16.0, 32.0, 64.0, 128.0])


def test_break_even_interpolates_in_log2_m():
    # speedup crosses 1 halfway between M=32 (0.8) and M=64 (1.2): log2 M = 5.5.
    assert break_even_from_curve(np.array([0.5, 0.8, 1.2, 1.5]), M) == pytest.approx(2**5.5)


def test_break_even_at_a_grid_point_is_that_point():
    assert break_even_from_curve(np.array([0.5, 0.8, 1.0, 1.5]), M) == pytest.approx(64.0)


def test_break_even_never_and_always():
    assert break_even_from_curve(np.array([0.5, 0.6, 0.7, 0.9]), M) is None
    assert break_even_from_curve(np.array([1.0, 1.1, 1.2, 1.3]), M) == ALWAYS
    assert math.isinf(ALWAYS) and ALWAYS < 0


def test_break_even_is_the_last_crossing():
    # dips below 1 again at M=64: the speedup only *stays* >= 1 from between 64 and 128.
    value = break_even_from_curve(np.array([1.2, 1.1, 0.9, 1.1]), M)
    assert 64 < value < 128


def test_grid_is_sixteenth_octaves_from_16_to_262144():
    assert BREAK_EVEN_M_GRID[0] == 16 and BREAK_EVEN_M_GRID[-1] == 2**18
    assert np.all(np.diff(BREAK_EVEN_M_GRID) > 0)
    assert BREAK_EVEN_KN == (1024, 2048, 4096, 8192, 16384)
    assert CANONICAL_SHAPE == (8192, 4096, 4096)


def test_break_even_m_matches_the_speedup_curve(bundled):
    gpu = bundled["NVIDIA H100"]
    m = break_even_m(gpu, "training", "rowwise", 4096)
    assert m is not None and 16 < m < 2**18
    recipe = get_recipe("rowwise")
    below, above = np.floor(m * 0.98), np.ceil(m * 1.02)
    speedup = evaluate_columns(gpu, Mode.TRAINING, recipe, [below, above], 4096, 4096)
    assert speedup["r_fp8_gemm_and_ovhd_spdp"][0] < 1 <= speedup["r_fp8_gemm_and_ovhd_spdp"][1]


def test_break_even_of_an_impossible_recipe_is_never(bundled):
    assert break_even_m(bundled["NVIDIA H100"], "inference", "nvfp4", 4096) is None


def test_pick_best_needs_more_than_one_and_keeps_first_of_ties():
    assert pick_best({}) == (None, 1.0)
    assert pick_best({"a": 0.9, "b": 1.0}) == (None, 1.0)
    assert pick_best({"a": 1.3, "b": 1.3, "c": 1.1}) == ("a", 1.3)


def test_best_recipe_is_native_and_fastest(bundled):
    gpu = bundled["NVIDIA H100"]  # fp8 only: MX and NV recipes are never best here
    name, speedup = best_recipe(gpu, "training", *CANONICAL_SHAPE)
    assert name is not None and get_recipe(name).native_format == "fp8"
    guidance = gpu_guidance(gpu)
    natives = {
        r: g.canonical_speedup
        for (mode, r), g in guidance.recipes.items()
        if mode is Mode.TRAINING and g.native
    }
    assert speedup == pytest.approx(max(natives.values()))
    hypothetical = [g for g in guidance.recipes.values() if g.support is Support.HYPOTHETICAL]
    assert hypothetical, "MX recipes on H100 are included, marked hypothetical"
    assert all(get_recipe(g.recipe).native_format != "fp8" for g in hypothetical)


def test_best_recipe_at_tiny_shapes_is_bf16(bundled):
    assert best_recipe(bundled["NVIDIA H100"], "training", 128, 128, 128) == (None, 1.0)


def test_a_gpu_without_fp8_has_no_fp8_guidance(bundled):
    gpu = bundled["NVIDIA A100 SXM"]
    guidance = gpu_guidance(gpu)
    assert guidance.recipes == {}
    assert guidance.best_canonical == {Mode.TRAINING: (None, 1.0), Mode.INFERENCE: (None, 1.0)}


def test_llama_speedup_is_the_time_weighted_aggregate(bundled):
    gpu = bundled["NVIDIA H100"]
    recipe = get_recipe("tensorwise")
    shapes = llama()
    cols = evaluate_columns(
        gpu,
        Mode.INFERENCE,
        recipe,
        [s.M for s in shapes],
        [s.K for s in shapes],
        [s.N for s in shapes],
    )
    expected = np.sum(cols["r_bf16_gemm_s"] + cols["r_bf16_ovhd_s"]) / np.sum(
        cols["r_fp8_gemm_and_ovhd_s"]
    )
    got = gpu_guidance(gpu).recipes[(Mode.INFERENCE, "tensorwise")].llama_speedup
    assert got == pytest.approx(expected, rel=1e-12)


def test_speedup_rises_with_bandwidth(bundled):
    """Cast overhead is memory-bound: more bandwidth never lowers a speedup."""
    import dataclasses

    gpu = bundled["NVIDIA H100"]
    faster = dataclasses.replace(gpu, peak_mem_bw_bytes_sec=gpu.peak_mem_bw_bytes_sec * 2)
    slow, fast = gpu_guidance(gpu), gpu_guidance(faster)
    for key, g in slow.recipes.items():
        assert fast.recipes[key].canonical_speedup >= g.canonical_speedup - 1e-12


# -- the calibrated model through the decision layer ------------------------------------


def test_torchao_is_the_default(bundled):
    gpu = bundled["NVIDIA H100"]
    default, explicit = gpu_guidance(gpu), gpu_guidance(gpu, calibrated=False)
    assert default == explicit and not default.calibrated
    assert all(not g.calibrated for g in default.recipes.values())
    assert break_even_m(gpu, "training", "rowwise", 4096) == break_even_m(
        gpu, "training", "rowwise", 4096, calibrated=False
    )


def test_calibrated_guidance_is_the_calibrated_model(bundled):
    from roofline import evaluate

    gpu = bundled["NVIDIA H100"]
    calibration = calibration_of(gpu, bundled)
    guidance = gpu_guidance(gpu, calibrated=True, specs=bundled)
    assert guidance.calibrated
    for (mode, name), g in guidance.recipes.items():
        assert g.calibrated
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # hypothetical recipes warn
            want = evaluate(gpu, mode, name, *CANONICAL_SHAPE, specs=bundled, calibrated=True)
        assert g.canonical_speedup == pytest.approx(float(np.ravel(want[SPEEDUP])[0]), rel=1e-12)
    # break-even M: the calibrated speedup crosses 1 there
    m = break_even_m(gpu, "training", "rowwise", 4096, calibrated=True, specs=bundled)
    assert m is not None and 16 < m < 2**18
    below, above = np.floor(m * 0.98), np.ceil(m * 1.02)
    cols = evaluate_columns(
        gpu,
        Mode.TRAINING,
        get_recipe("rowwise"),
        [below, above],
        4096,
        4096,
        calibration=calibration,
    )
    assert cols[SPEEDUP][0] < 1 <= cols[SPEEDUP][1]
    # the best recipe is the fastest native one by the calibrated model
    name, speedup = best_recipe(gpu, "training", *CANONICAL_SHAPE, calibrated=True, specs=bundled)
    natives = {
        r: g.canonical_speedup
        for (mode, r), g in guidance.recipes.items()
        if mode is Mode.TRAINING and g.native
    }
    assert (name, speedup) == pick_best(natives)


def test_has_calibration_data_is_a_measured_bf16_efficiency(bundled):
    seen = set()
    for gpu in bundled.values():
        calibration = calibration_of(gpu, bundled)
        basis = calibration.values[BF16_EFFICIENCY].basis
        assert has_calibration_data(calibration) is (basis is not Basis.ASSUMED)
        seen.add(has_calibration_data(calibration))
    assert seen == {True, False}, "the bundled database has GPUs of both kinds"


def _parameters(**entries: ParameterValue) -> CalibratedParameters:
    return CalibratedParameters("gpu", {k.replace("__", "."): v for k, v in entries.items()})


def test_corners_move_each_group_to_both_ends():
    assumed = Basis.ASSUMED
    params = _parameters(
        gemm_efficiency__bf16=ParameterValue(0.7, assumed, "s", low=0.5, high=0.8),
        gemm_efficiency__fp8=ParameterValue(0.6, assumed, "s", low=0.4, high=0.7),
        cast_efficiency__row=ParameterValue(0.85, assumed, "s", low=0.8, high=0.9),
        cast_efficiency__tile=ParameterValue(0.8, assumed, "s", low=0.8, high=0.8),  # a point
        cast_efficiency__column=ParameterValue(0.7, Basis.MEASURED, "s"),
        gemm_fixed_latency_s=ParameterValue(7e-6, Basis.FITTED, "s"),
    )
    corners = calibration_corners(params)
    assert len(corners) == 4  # two groups (GEMM, cast), each at low and at high
    seen = set()
    for corner in corners:
        n = corner.numbers()
        gemm_end = "low" if n["gemm_efficiency.bf16"] == 0.5 else "high"
        assert n["gemm_efficiency.fp8"] == (0.4 if gemm_end == "low" else 0.7)
        cast_end = "low" if n["cast_efficiency.row"] == 0.8 else "high"
        # values without a range, and measured or fitted ones, never move
        assert n["cast_efficiency.tile"] == 0.8 and n["cast_efficiency.column"] == 0.7
        assert n["gemm_fixed_latency_s"] == 7e-6
        seen.add((gemm_end, cast_end))
    assert seen == {("low", "low"), ("low", "high"), ("high", "low"), ("high", "high")}
    measured = _parameters(gemm_efficiency__bf16=ParameterValue(0.7, Basis.MEASURED, "s"))
    assert calibration_corners(measured) == ()


def test_corners_bound_an_assumed_gpus_speedup(bundled):
    def dense_range(g) -> bool:  # an assumed GEMM or cast efficiency with a range
        values = calibration_of(g, bundled).values
        return any(
            key.startswith(("gemm_efficiency.", "cast_efficiency."))
            and values[key].low != values[key].high
            for key in calibration_of(g, bundled).assumed()
        )

    gpu = next(g for g in bundled.values() if dense_range(g))
    calibration = calibration_of(gpu, bundled)
    recipe = next(r for r in native_recipes(gpu, Mode.TRAINING))
    nominal = recipe_guidance(gpu, Mode.TRAINING, recipe, calibration=calibration)
    corners = [
        recipe_guidance(gpu, Mode.TRAINING, recipe, calibration=c)
        for c in calibration_corners(calibration)
    ]
    speedups = [c.canonical_speedup for c in corners]
    assert all(c.calibrated for c in corners)
    assert len(set(speedups)) > 1, "the assumed ranges move the speedup"
    assert min(speedups) <= nominal.canonical_speedup * (1 + 1e-12)
