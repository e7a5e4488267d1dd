"""The latency of one K step of a GEMM tile's main loop (t_gemm,k): the floor it puts on a
small GEMM's compute time, how a GPU without a fitted value resolves, its bounds in a
calibration file, and the per-GPU fp4 GEMM latency fitted beside it."""

from __future__ import annotations

from dataclasses import replace

import pytest
import sympy

from roofline import load_specs
from roofline.calibration.bounds import out_of_bounds
from roofline.calibration.data import PER_GPU_LATENCY_KEYS, load_calibration
from roofline.calibration.families import PLATFORM_PARAMS, platform_of
from roofline.calibration.params import Basis, Level, calibration_for
from roofline.model.calibrated import GEMM_TILE_K, calibrated_gemm_time
from roofline.model.grouped import Gemm, GemmShape, Layout
from roofline.recipes import FP8, Mode, get_recipe
from roofline.symbols import T_GEMM_FP4, T_KSTEP, G

SPECS = load_specs()
KEY = T_KSTEP.spec_key
ROWWISE = get_recipe("rowwise", Mode.INFERENCE)
NUMBERS = {"P_fp8": 2.6e15, "eta_fp8": 0.4, "N_SM": 304}


def _shape(m: int, k: int, n: int, layout: Layout = Layout.DENSE) -> GemmShape:
    return GemmShape(Gemm.OUTPUT, sympy.Integer(m), sympy.Integer(k), sympy.Integer(n), layout)


def _compute_s(shape: GemmShape, step_s: float) -> float:
    expr = calibrated_gemm_time(shape, FP8, ROWWISE).compute
    values = {s: NUMBERS[s.name] for s in expr.free_symbols if s.name in NUMBERS}
    return float(expr.subs({**values, T_KSTEP.symbol: step_s}))


def test_a_small_deep_gemm_is_paced_by_its_k_steps():
    # M = 16, K = 7168: 2 x 16 x 7168 x 256 FLOPs take 0.09 us at this rate, far less than
    # 56 steps of 0.15 us one after another.
    shape = _shape(16, 7168, 256)
    assert _compute_s(shape, 0.15e-6) == pytest.approx(56 * 0.15e-6, rel=1e-12)
    # a shallow K (two steps) leaves the same latency per step almost nothing to pace
    assert _compute_s(_shape(16, 256, 256), 0.15e-6) == pytest.approx(0.3e-6, rel=1e-12)
    # K is counted in whole 128-deep steps
    assert GEMM_TILE_K == 128
    assert _compute_s(_shape(16, 129, 256), 1e-7) == pytest.approx(2e-7, rel=1e-12)


def test_a_large_gemm_keeps_its_throughput_time():
    shape = _shape(8192, 7168, 4608)
    assert _compute_s(shape, 0.15e-6) == _compute_s(shape, 0.0)
    assert _compute_s(shape, 0.0) > 56 * 0.15e-6


def test_a_grouped_weight_gradient_walks_each_groups_tokens():
    # 2D-2D: K is the layer's 131072 tokens, 16384 per group at G = 8, so 128 steps; a
    # 2D-3D GEMM's groups each walk the whole K.
    recipe = get_recipe("rowwise", Mode.TRAINING)
    for layout, k, steps in ((Layout.GROUPED_2D2D, 131072, 128), (Layout.GROUPED_2D3D, 7168, 56)):
        shape = _shape(16, k, 256, layout)
        expr = calibrated_gemm_time(shape, FP8, recipe).compute
        chain = [a for a in expr.args if T_KSTEP.symbol in a.free_symbols]
        assert len(chain) == 1
        assert chain[0].subs({G: 8, T_KSTEP.symbol: 1}) == steps


def test_cuda_gpus_take_the_stated_default_and_its_source():
    for name in ("NVIDIA B200", "NVIDIA H100 SXM", "NVIDIA GeForce RTX 5090", "NVIDIA A100 SXM"):
        value = calibration_for(SPECS[name], SPECS).values[KEY]
        assert (value.value, value.basis, value.level) == (0.0, Basis.ASSUMED, Level.GLOBAL)
        assert value.source == PLATFORM_PARAMS[KEY][1]
        assert "https://arxiv.org/abs/2301.03598" in value.source


def test_a_rocm_gpu_without_its_own_step_takes_its_familys():
    data = load_calibration()
    assert {platform_of(SPECS[n]) for n, e in data.gpus.items() if KEY in e} == {"ROCm"}
    mi355x = data.gpu_entry("AMD Instinct MI355X", KEY).value
    got = calibration_for(SPECS["AMD Instinct MI350X"], SPECS, data).values[KEY]
    assert (got.value, got.basis, got.level) == (pytest.approx(mi355x), Basis.ASSUMED, Level.FAMILY)
    # with no ROCm GPU fitted, a ROCm GPU takes the platform default, not a CUDA mean
    bare = replace(
        data, gpus={n: {k: e for k, e in v.items() if k != KEY} for n, v in data.gpus.items()}
    )
    assert calibration_for(SPECS["AMD Instinct MI300X"], SPECS, bare).values[KEY].value == 0.0


def test_a_step_is_a_latency_from_none_to_a_microsecond():
    assert out_of_bounds({KEY: 0.0}) == out_of_bounds({KEY: 1e-6}) == []
    (problem,) = out_of_bounds({KEY: 2e-6})
    assert "expected a fixed latency in [0, 1] us" in problem
    assert out_of_bounds({KEY: -1e-9})


def test_a_calibration_file_with_a_slow_step_is_refused(refused_gpu_value):
    message = refused_gpu_value("AMD Instinct MI325X", KEY, 3e-6)
    assert f"key '{KEY}.value': expected a fixed latency in [0, 1] us" in message


def test_the_fp4_gemm_latency_is_each_vendors_own():
    # MI355X's MXFP4 kernels and B200's NVFP4 ones start in their own times; a GPU without
    # one pools its family's (GB200: B200's; MI350X: MI355X's).
    assert T_GEMM_FP4.spec_key in PER_GPU_LATENCY_KEYS
    data = load_calibration()
    b200 = data.gpu_entry("NVIDIA B200", T_GEMM_FP4.spec_key)
    mi355x = data.gpu_entry("AMD Instinct MI355X", T_GEMM_FP4.spec_key)
    assert b200 is not None and mi355x is not None and b200.value != mi355x.value
    for gpu, entry in (("NVIDIA GB200", b200), ("AMD Instinct MI350X", mi355x)):
        got = calibration_for(SPECS[gpu], SPECS, data).values[T_GEMM_FP4.spec_key]
        assert (got.value, got.level) == (pytest.approx(entry.value), Level.FAMILY)
