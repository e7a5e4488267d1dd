"""roofline.guidance: break-even and best-recipe semantics on hand-checkable cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from roofline.capability import Support
from roofline.evaluate import evaluate_columns
from roofline.guidance import (
    ALWAYS,
    BREAK_EVEN_KN,
    BREAK_EVEN_M_GRID,
    CANONICAL_SHAPE,
    best_recipe,
    break_even_from_curve,
    break_even_m,
    gpu_guidance,
    pick_best,
)
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
        gpu, Mode.INFERENCE, recipe,
        [s.M for s in shapes], [s.K for s in shapes], [s.N for s in shapes],
    )  # fmt: skip
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
