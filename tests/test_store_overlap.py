"""The share of a GEMM's output store its main loop hides (omega_st): the formula at both
ends, how a GPU without a fitted share resolves, and its bounds in a calibration file."""

from __future__ import annotations

from dataclasses import replace

import pytest
import sympy

from roofline import load_specs
from roofline.calibration.bounds import out_of_bounds
from roofline.calibration.data import load_calibration
from roofline.calibration.families import PLATFORM_PARAMS, platform_of
from roofline.calibration.params import Basis, Level, calibration_for
from roofline.model.calibrated import calibrated_gemm_time, streaming_time
from roofline.model.grouped import Gemm, GemmShape, Layout
from roofline.model.terms import gemm_bytes
from roofline.recipes import BF16, FP8, Mode, get_recipe
from roofline.symbols import ETA_ROW, MEM_BW, OMEGA_STORE, T_GEMM

SPECS = load_specs()
KEY = OMEGA_STORE.spec_key
ROWWISE = get_recipe("rowwise", Mode.INFERENCE)
# A large-output, shallow-K GEMM (the aiter rows it was fitted on): 8192 x 256 @ 256 x 7168.
SHAPE = GemmShape(Gemm.OUTPUT, sympy.Integer(8192), sympy.Integer(256), sympy.Integer(7168))
NUMBERS = {
    "P_fp8": 2.6e15,
    "eta_fp8": 0.4,
    "eta_row": 0.8,
    "B_mem": 5.3e12,
    "t_gemm": 6e-6,
    "N_SM": 304,
    "t_kstep": 0.1e-6,  # 32 us of K steps would be 0.2 us here: the compute paces it
}


def _seconds(expr: sympy.Expr, omega: float) -> float:
    values = {s: NUMBERS[s.name] for s in expr.free_symbols if s.name in NUMBERS}
    return float(expr.subs({**values, OMEGA_STORE.symbol: omega}))


def _output_store_s() -> float:
    out_bytes = BF16.bytes_per_element * 8192 * 7168
    return out_bytes / (NUMBERS["eta_row"] * NUMBERS["B_mem"])


def test_a_hidden_store_is_the_roofline_of_every_byte():
    # omega = 1: the longer of compute and all the bytes (operands and output), as before
    gemm = calibrated_gemm_time(SHAPE, FP8, ROWWISE)
    all_bytes = gemm_bytes(SHAPE.m, SHAPE.k, SHAPE.n, FP8)
    expected = T_GEMM.symbol + sympy.Max(gemm.compute, streaming_time(all_bytes))
    assert _seconds(gemm.total, 1.0) == pytest.approx(_seconds(expected, 1.0), rel=1e-12)
    assert _seconds(gemm.store, 1.0) == 0


def test_an_exposed_store_follows_the_main_loop():
    # omega = 0: the whole output store comes after the compute of this compute-bound GEMM
    gemm = calibrated_gemm_time(SHAPE, FP8, ROWWISE)
    assert _seconds(gemm.compute, 0.0) > _seconds(gemm.memory, 0.0)
    exposed = _seconds(gemm.total, 0.0) - _seconds(gemm.total, 1.0)
    assert exposed == pytest.approx(_output_store_s(), rel=1e-12)
    # in between, time falls linearly as more of the store hides
    half = _seconds(gemm.total, 0.5) - _seconds(gemm.total, 1.0)
    assert half == pytest.approx(_output_store_s() / 2, rel=1e-12)


def test_the_store_counts_every_output_of_a_grouped_weight_gradient():
    m, k, n = sympy.Integer(4096), sympy.Integer(65536), sympy.Integer(2048)
    shape = GemmShape(Gemm.GRAD_WEIGHT, m, k, n, Layout.GROUPED_2D2D, out_copies=sympy.Integer(8))
    gemm = calibrated_gemm_time(shape, FP8, get_recipe("rowwise", Mode.TRAINING))
    store = gemm.store.subs({ETA_ROW.symbol: 1, MEM_BW.symbol: 1, OMEGA_STORE.symbol: 0})
    assert store == BF16.bytes_per_element * 8 * 4096 * 2048


def test_cuda_gpus_keep_the_store_hidden_and_say_why():
    for name in ("NVIDIA B200", "NVIDIA H100 SXM", "NVIDIA GeForce RTX 5090", "NVIDIA A100 SXM"):
        value = calibration_for(SPECS[name], SPECS).values[KEY]
        assert (value.value, value.basis, value.source) == (
            1.0,
            Basis.ASSUMED,
            PLATFORM_PARAMS[KEY][1],
        )


def test_a_rocm_gpu_without_its_own_share_takes_its_familys():
    data = load_calibration()
    mi355x = data.gpu_entry("AMD Instinct MI355X", KEY).value
    got = calibration_for(SPECS["AMD Instinct MI350X"], SPECS, data).values[KEY]
    assert (got.value, got.basis, got.level) == (pytest.approx(mi355x), Basis.ASSUMED, Level.FAMILY)
    # ... and without it, the family's mean (MI325X: MI300X's alone)
    gpus = dict(data.gpus)
    gpus["AMD Instinct MI325X"] = {k: e for k, e in gpus["AMD Instinct MI325X"].items() if k != KEY}
    got = calibration_for(SPECS["AMD Instinct MI325X"], SPECS, replace(data, gpus=gpus)).values[KEY]
    mi300x = data.gpu_entry("AMD Instinct MI300X", KEY).value
    assert (got.value, got.level) == (pytest.approx(mi300x), Level.FAMILY)


def test_the_share_never_pools_across_platforms():
    # With only ROCm GPUs fitted, a CUDA GPU keeps the stated default, not their mean; a
    # file without any share gives every GPU the default.
    data = load_calibration()
    assert {platform_of(SPECS[n]) for n, e in data.gpus.items() if KEY in e} == {"ROCm"}
    bare = replace(
        data, gpus={n: {k: e for k, e in v.items() if k != KEY} for n, v in data.gpus.items()}
    )
    for name in ("NVIDIA H200", "AMD Instinct MI300X"):
        assert calibration_for(SPECS[name], SPECS, bare).values[KEY].value == 1.0


def test_a_share_is_a_fraction_from_none_to_all():
    assert out_of_bounds({KEY: 0.0}) == out_of_bounds({KEY: 1.0}) == []
    (problem,) = out_of_bounds({KEY: 1.2})
    assert "expected a finite fraction in [0, 1]" in problem


def test_a_calibration_file_with_a_share_above_one_is_refused(refused_gpu_value):
    message = refused_gpu_value("AMD Instinct MI300X", KEY, 1.5)
    assert f"key '{KEY}.value': expected a finite fraction in [0, 1]" in message
