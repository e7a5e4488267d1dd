"""The torchao-compatible API: same names, signatures and numbers."""

from __future__ import annotations

import random

import pytest
import sympy

import roofline.model.torchao_compat as compat
from roofline import evaluate

M, K, N = sympy.symbols("M K N")  # the caller's own symbols, as torchao scripts make them
SHAPE = {M: 16384, K: 8192, N: 1280}


def _value(expr: sympy.Expr, shape: dict = SHAPE) -> float:
    return float(expr.subs(shape))


def test_constants():
    assert compat.KERNEL_LAUNCH_OVERHEAD_SEC == 2e-6
    assert (compat.BYTES_PER_EL_FLOAT4, compat.BYTES_PER_EL_FLOAT8) == (0.5, 1)
    assert (compat.BYTES_PER_EL_BF16, compat.BYTES_PER_EL_FLOAT32) == (2, 4)
    assert compat.get_specs("NVIDIA H100")["peak_mem_bw_bytes_sec"] == 2.4e12


@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise", "rowwise_with_gw_hp"])
@pytest.mark.parametrize("fusion", [False, True])
def test_training_functions_match_evaluate_with_string_dtypes(recipe, fusion):
    gemm = compat.get_gemm_time_sympy(M, K, N, "float8_e4m3fn", recipe, None, "NVIDIA H100")
    ovhd = compat.get_float8_mem_sympy(M, K, N, recipe, None, fusion, "NVIDIA H100")
    bf16 = compat.get_gemm_time_sympy(M, K, N, "bfloat16", None, None, "NVIDIA H100")
    ours = evaluate("NVIDIA H100", "training", recipe, 16384, 8192, 1280, fusion=fusion)
    assert _value(gemm) == pytest.approx(float(ours["r_fp8_gemm_s"]), rel=1e-12)
    assert _value(ovhd) == pytest.approx(float(ours["r_fp8_ovhd_s"]), rel=1e-12)
    assert _value(bf16) == pytest.approx(float(ours["r_bf16_gemm_s"]), rel=1e-12)


def test_torch_dtypes_are_accepted():
    torch = pytest.importorskip("torch")
    by_torch = compat.get_individual_gemm_time_sympy(
        M, K, N, torch.float4_e2m1fn_x2, "mxfp4_cutlass", "NVIDIA B200"
    )
    by_name = compat.get_individual_gemm_time_sympy(
        M, K, N, "float4_e2m1fn_x2", "mxfp4_cutlass", "NVIDIA B200"
    )
    assert _value(by_torch) == _value(by_name)


def test_unknown_dtype_is_a_clear_error():
    with pytest.raises(Exception, match="unsupported dtype 'int8'"):
        compat.get_individual_gemm_time_sympy(M, K, N, "int8", None, "NVIDIA H100")


def test_get_specs_matches_device_names():
    assert compat.get_specs("NVIDIA H100 80GB HBM3")["peak_mem_bw_bytes_sec"] == 3.35e12


@pytest.fixture(scope="module")
def ref():
    """torchao 0.18's roofline utilities, or a skip when torchao is not installed."""
    pytest.importorskip("torch")
    return pytest.importorskip("torchao.testing.training.roofline_utils")


class TestAgainstInstalledTorchao:
    """Live cross-check with torchao 0.18 when it is installed (the CI installs it)."""

    def _shapes(self, count: int = 2) -> list[dict]:
        rng = random.Random(7)
        return [
            {M: rng.randint(16, 40000), K: rng.randint(16, 40000), N: rng.randint(16, 40000)}
            for _ in range(count)
        ]

    @pytest.mark.parametrize("gpu", ["NVIDIA H100", "NVIDIA B300 SXM6 AC"])
    @pytest.mark.parametrize(
        "recipe", ["tensorwise", "rowwise", "rowwise_with_gw_hp", "mxfp8_cublas"]
    )
    def test_training(self, ref, gpu, recipe):
        import torch

        f8, mx = (None, recipe) if recipe.startswith("mx") else (recipe, None)
        for fusion in (False, True):
            theirs = ref.get_gemm_time_sympy(M, K, N, torch.float8_e4m3fn, f8, mx, gpu) + (
                ref.get_float8_mem_sympy(M, K, N, f8, mx, fusion, gpu)
            )
            ours = compat.get_gemm_time_sympy(M, K, N, torch.float8_e4m3fn, f8, mx, gpu) + (
                compat.get_float8_mem_sympy(M, K, N, f8, mx, fusion, gpu)
            )
            for shape in self._shapes():
                assert _value(ours, shape) == pytest.approx(_value(theirs, shape), rel=1e-12)

    @pytest.mark.parametrize(
        "recipe",
        [
            "tensorwise",
            "rowwise",
            "mxfp8_cublas",
            "mxfp4",
            "nvfp4",
            "nvfp4_static",
            "nvfp4_no_global_scale",
        ],
    )
    def test_inference_overhead(self, ref, recipe):
        theirs = ref.get_inference_float8_mem_sympy(M, K, N, recipe, "NVIDIA B200")
        ours = compat.get_inference_float8_mem_sympy(M, K, N, recipe, "NVIDIA B200")
        for shape in self._shapes():
            assert _value(ours, shape) == pytest.approx(_value(theirs, shape), rel=1e-12)

    def test_blockwise_and_bf16_activation(self, ref):
        for fusion in (False, True):
            theirs = ref.get_blockwise_float8_mem_sympy(M, K, N, fusion, "NVIDIA B200")
            ours = compat.get_blockwise_float8_mem_sympy(M, K, N, fusion, "NVIDIA B200")
            shape = {M: 1000, K: 1280, N: 2560}
            assert _value(ours, shape) == pytest.approx(_value(theirs, shape), rel=1e-12)
        theirs = ref.get_inference_bf16_activation_mem_sympy(M, K, N, "NVIDIA H100")
        ours = compat.get_inference_bf16_activation_mem_sympy(M, K, N, "NVIDIA H100")
        assert _value(ours) == pytest.approx(_value(theirs), rel=1e-12)
