"""Symbolic formulas and their LaTeX (exact strings)."""

from __future__ import annotations

import sympy

from roofline import load_specs
from roofline.model.build import MODEL_VERSION, build_model
from roofline.model.terms import Quantity
from roofline.model.torchao import gemm_time
from roofline.publish.latex import format_number_latex, instantiated, symbolic
from roofline.recipes import BF16, FP8_BLOCK
from roofline.symbols import HARDWARE_SYMBOLS, K, M, N


def test_bf16_gemm_latex_reads_like_a_paper():
    expr = gemm_time(M, K, N, BF16, None).total
    assert symbolic(expr) == (
        r"\max\left(t_{\mathrm{launch}}, \frac{2 K M + 2 K N + 2 M N}"
        r"{B_{\mathrm{mem}} \eta_{\mathrm{mem}}}, "
        r"\frac{2 K M N}{P_{\mathrm{bf16}} \eta_{\mathrm{gemm}}}\right)"
    )


def test_mx_gemm_latex_shows_the_floored_scale_reads():
    expr = gemm_time(M, K, N, FP8_BLOCK, 32).total
    assert r"\left\lfloor{\frac{K M}{32} + \frac{K N}{32}}\right\rfloor" in symbolic(expr)


def test_mx_gemm_latex_uses_the_block_scaled_peak():
    mx = symbolic(build_model("training", "mxfp8_cublas").total(Quantity.LOWP_GEMM))
    assert r"P_{\mathrm{fp8,blk}} \eta_{\mathrm{gemm}}" in mx and r"P_{\mathrm{fp8}}" not in mx
    tensorwise = symbolic(build_model("training", "tensorwise").total(Quantity.LOWP_GEMM))
    assert r"P_{\mathrm{fp8}} \eta_{\mathrm{gemm}}" in tensorwise and "blk" not in tensorwise
    # The emulated recipe's GEMMs are not block-scaled hardware GEMMs: torchao's fp8 peak.
    emulated = symbolic(build_model("training", "mxfp8_emulated").total(Quantity.LOWP_GEMM))
    assert "blk" not in emulated


def test_mx_gemm_instantiates_with_the_fallback_peak():
    gpu = load_specs()["NVIDIA H100"]  # no block-scaled peak: the fp8 peak stands in
    expr = build_model("inference", "mxfp8_cublas").total(Quantity.LOWP_GEMM)
    assert r"1.979 \cdot 10^{15}" in instantiated(expr, gpu)


def test_structured_speedup():
    training = build_model("training", "tensorwise")
    assert symbolic(training.structured_speedup) == (
        r"\frac{T_{\mathrm{gemm}}^{\mathrm{bf16}}}{T_{\mathrm{cast}} + T_{\mathrm{gemm}}^{\mathrm{lowp}}}"
    )
    fused = build_model("inference", "rowwise", True)
    assert symbolic(fused.structured_speedup).startswith(
        r"\frac{T_{\mathrm{act}}^{\mathrm{bf16}} + T_{\mathrm{gemm}}^{\mathrm{bf16}}}"
    )


def test_rowwise_inference_overhead_latex():
    expr = build_model("inference", "rowwise").total(Quantity.OVERHEAD)
    assert symbolic(expr) == (
        r"\max\left(t_{\mathrm{launch}}, \frac{3 K M + 4 M}{B_{\mathrm{mem}} \eta_{\mathrm{mem}}}\right)"
    )


def test_instantiated_keeps_figures_apart_with_short_numbers():
    gpu = load_specs()["NVIDIA H100"]
    expr = build_model("inference", "rowwise").total(Quantity.OVERHEAD)
    assert instantiated(expr, gpu) == (
        r"\max\left(2 \cdot 10^{-6}, \frac{3 K M + 4 M}{2.4 \cdot 10^{12} \cdot 0.92}\right)"
    )


def test_number_format():
    assert format_number_latex(2.4e12) == r"2.4 \cdot 10^{12}"
    assert format_number_latex(7672320000000.0) == r"7.672 \cdot 10^{12}"
    assert format_number_latex(1e-6) == r"10^{-6}"
    assert format_number_latex(0.78) == "0.78"


def test_models_are_built_once():
    assert build_model("training", "rowwise") is build_model("training", "ROWWISE")


def test_fusion_lowers_training_overhead():
    gpu = load_specs()["NVIDIA H100"].hardware_values()
    numbers = {h.symbol: gpu[h.spec_key] for h in HARDWARE_SYMBOLS if h.spec_key in gpu}
    shape = {M: 4096, K: 4096, N: 4096}

    def overhead_s(fusion: bool) -> float:
        expr = build_model("training", "tensorwise", fusion).total(Quantity.OVERHEAD)
        return float(expr.subs(numbers).subs(shape))

    # Fusion drops the amax reads of input and grad_output (2 x 2 x 4096^2 bytes); the
    # two emptied kernels still pay the launch floor.
    saved_bytes = 2 * 2 * 4096 * 4096
    bandwidth = gpu["peak_mem_bw_bytes_sec"] * gpu["pct_achievable_mem_bw"]
    expected_s = saved_bytes / bandwidth - 2 * gpu["kernel_launch_overhead_s"]
    assert abs((overhead_s(False) - overhead_s(True)) - expected_s) < 1e-15


def test_model_version_is_a_string():
    assert isinstance(MODEL_VERSION, str) and MODEL_VERSION
    # r2: MX fp8 GEMMs at the block-scaled peak; r3: grouped layers, nvfp4 training, phases;
    # r4: the calibrated model's kernels and families; r5: fp4 GEMM and reduce latencies,
    # the bf16 grouped GEMM at a rate of its own (rho_bf16, no longer a factor over rho)
    assert MODEL_VERSION == "torchao-0.18/r5"


def test_inference_without_fusion_has_no_bf16_overhead():
    model = build_model("inference", "tensorwise")
    assert Quantity.BF16_OVERHEAD not in model.quantities()
    assert model.total(Quantity.BF16_OVERHEAD) == sympy.Integer(0)
