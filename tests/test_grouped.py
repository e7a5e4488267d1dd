"""Grouped (mixture-of-experts) layers: G = 1 is the dense model, G > 1 matches terms
computed by hand, and the grouped model meets the M3/M4 kernel measurements (properties and
bad input: tests/test_grouped_invariants.py)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from model_cases import waves_by_hand

from roofline import Support, classify, evaluate, load_specs
from roofline.analysis.validation import predict_set
from roofline.calibration.data import load_calibration
from roofline.capability import CapabilityWarning
from roofline.evaluate import calibration_of, evaluate_terms
from roofline.measurements import load_measurements
from roofline.model.build import build_model
from roofline.model.terms import Quantity
from roofline.recipes import RECIPE_LIST

SPECS = load_specs()
MEASUREMENTS = load_measurements(specs=SPECS)
B200 = SPECS["NVIDIA B200"]
H100 = SPECS["NVIDIA H100 SXM"]
# Every (GPU, recipe, mode) the formulas can compute: a grouped layer must cover them all.
CASES = [
    (gpu, recipe, mode)
    for gpu in SPECS.values()
    for recipe in RECIPE_LIST
    for mode in recipe.modes
    if classify(gpu, recipe, mode).support is not Support.IMPOSSIBLE
]
REL = 1e-12


def _aligned(recipe, m: int, k: int, n: int) -> tuple[int, int, int]:
    """Round each dimension up to the recipe's required multiple."""
    dims = {"M": m, "K": k, "N": n}
    for dim, multiple in recipe.divisibility:
        dims[dim] = -(-dims[dim] // multiple) * multiple
    return dims["M"], dims["K"], dims["N"]


def _quiet_evaluate(gpu, mode, recipe, m, k, n, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CapabilityWarning)
        return evaluate(gpu, mode, recipe, m, k, n, **kwargs)


def _close(a, b, rel: float = REL) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.all(np.abs(a - b) <= rel * np.maximum(np.abs(a), np.abs(b))))


# -- G = 1 is the dense model -----------------------------------------------------------

GRID_SHAPES = (
    np.array([1, 17, 128, 4096, 32768, 131072, 2**31 - 1]),
    np.array([128, 7168, 256, 4096, 7168, 5120, 128]),
    np.array([128, 2048, 1280, 4096, 2048, 8192, 384]),
)


@pytest.mark.parametrize("calibrated", [False, True], ids=["torchao", "calibrated"])
@pytest.mark.parametrize("fusion", [False, True], ids=["unfused", "fused"])
@pytest.mark.parametrize(
    ("recipe", "mode"),
    [(r, m) for r in RECIPE_LIST for m in r.modes],
    ids=lambda v: getattr(v, "name", None) or str(v),
)
def test_one_group_equals_the_dense_model_on_a_grid(recipe, mode, fusion, calibrated):
    gpus = [g for g, r, m in CASES if r is recipe and m is mode]
    assert gpus
    aligned = [_aligned(recipe, *map(int, dims)) for dims in zip(*GRID_SHAPES, strict=True)]
    m, k, n = (np.array(column) for column in zip(*aligned, strict=True))
    for gpu in gpus[:: max(1, len(gpus) // 4)]:
        dense = _quiet_evaluate(gpu, mode, recipe, m, k, n, fusion=fusion, calibrated=calibrated)
        one = _quiet_evaluate(
            gpu, mode, recipe, m, k, n, fusion=fusion, calibrated=calibrated, groups=1
        )
        assert dense.keys() == one.keys()
        for column in dense:
            assert _close(dense[column], one[column]), (gpu.name, column)


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(CASES),
    st.integers(1, 1 << 18),
    st.integers(1, 1 << 16),
    st.integers(1, 1 << 16),
    st.booleans(),
    st.booleans(),
)
def test_one_group_equals_the_dense_model_term_by_term(case, m, k, n, fusion, calibrated):
    gpu, recipe, mode = case
    m, k, n = _aligned(recipe, m, k, n)
    calibration = calibration_of(gpu) if calibrated else None
    kwargs = {"fusion": fusion, "calibration": calibration}
    dense = evaluate_terms(gpu, mode, recipe, m, k, n, **kwargs)
    one = evaluate_terms(gpu, mode, recipe, m, k, n, groups=1, **kwargs)
    rearranged = {key for key in one if key.startswith("rearrange.")}
    assert set(one) - rearranged == set(dense)
    for key in rearranged:
        assert float(one[key]) == 0.0, key
    for key, value in dense.items():
        assert _close(value, one[key]), key
    options = {"fusion": fusion, "calibrated": calibrated}
    columns = _quiet_evaluate(gpu, mode, recipe, m, k, n, **options)
    one_columns = _quiet_evaluate(gpu, mode, recipe, m, k, n, groups=1, **options)
    assert columns.keys() == one_columns.keys()
    for column, value in columns.items():
        assert _close(value, one_columns[column]), column


def test_groups_none_is_the_dense_model_and_groups_broadcast():
    m = np.array([4096, 131072])
    dense = evaluate(B200, "training", "mxfp8_cublas", m, 7168, 2048)
    default = evaluate(B200, "training", "mxfp8_cublas", m, 7168, 2048, groups=None)
    assert all(np.array_equal(dense[c], default[c]) for c in dense)
    both = evaluate(B200, "training", "mxfp8_cublas", m, 7168, 2048, groups=[[1], [8]])
    assert both["r_fp8_gemm_and_ovhd_s"].shape == (2, 2)
    assert _close(both["r_fp8_gemm_and_ovhd_s"][0], dense["r_fp8_gemm_and_ovhd_s"])
    eight = evaluate(B200, "training", "mxfp8_cublas", m, 7168, 2048, groups=8)
    assert _close(both["r_fp8_gemm_and_ovhd_s"][1], eight["r_fp8_gemm_and_ovhd_s"])


# -- G > 1 against terms computed by hand ----------------------------------------------


def _calibrated_gemm(p, hw, flops, bytes_moved, peak_key, eta_key, rho_key, beta=1.0, out=(1, 1)):
    """t_gemm + max(FLOPs / (rho beta w eta P), bytes / (eta_row B)); ``w``: the waves of
    the layer's dense ``out`` (rows x cols) output."""
    waves = waves_by_hand(*out, hw.get("sm_count", 1e12))
    compute = flops / (p[rho_key] * beta * waves * p[eta_key] * hw[peak_key])
    memory = bytes_moved / (p["cast_efficiency.row"] * hw["peak_mem_bw_bytes_sec"])
    return p["gemm_fixed_latency_s"] + max(compute, memory)


def _calibrated_cast(p, hw, bytes_moved, kind, latency_key="cast_fixed_latency_s"):
    """t_kind + bytes / (eta_kind B)."""
    eta = p[f"cast_efficiency.{kind}"]
    return p[latency_key] + bytes_moved / (eta * hw["peak_mem_bw_bytes_sec"])


def _torchao_time(hw, bytes_moved, flops=0.0, peak_key="bf16_peak_tops"):
    """max(FLOPs / (eta_gemm P), bytes / (eta_mem B), launch floor)."""
    compute = flops / (hw["pct_achievable_gemm_tops"] * hw[peak_key])
    memory = bytes_moved / (hw["pct_achievable_mem_bw"] * hw["peak_mem_bw_bytes_sec"])
    return max(compute, memory, hw["kernel_launch_overhead_s"])


def _bf16_gemms(p, hw, m, k, n, g):
    """The three bf16 grouped GEMMs (2 bytes per element in and out), calibrated:
    torch._grouped_mm is its own kernel at rho_bf16 of the dense bf16 rate in the 2D-3D
    layout, and at rho_bf16 rho_2D2D / rho_2D3D in the 2D-2D one."""
    flops = 2.0 * m * k * n
    beta = p["grouped_efficiency.bf16"] / p["grouped_efficiency.2d3d"]  # over the layout's rho
    return {
        # tokens x K @ G x K x N: G weights read
        "gemm.output.bf16": _calibrated_gemm(
            p,
            hw,
            flops,
            2 * (m * k + g * k * n) + 2 * m * n,
            "bf16_peak_tops",
            "gemm_efficiency.bf16",
            "grouped_efficiency.2d3d",
            beta,
            out=(m, n),
        ),
        # tokens x N @ G x N x K
        "gemm.grad_input.bf16": _calibrated_gemm(
            p,
            hw,
            flops,
            2 * (m * n + g * n * k) + 2 * m * k,
            "bf16_peak_tops",
            "gemm_efficiency.bf16",
            "grouped_efficiency.2d3d",
            beta,
            out=(m, k),
        ),
        # K x tokens @ tokens x N -> G x K x N: G weight gradients written
        "gemm.grad_weight.bf16": _calibrated_gemm(
            p,
            hw,
            flops,
            2 * (k * m + m * n) + 2 * g * k * n,
            "bf16_peak_tops",
            "gemm_efficiency.bf16",
            "grouped_efficiency.2d2d",
            beta,
            out=(k, n),
        ),
    }


M4_SHAPE = (131072, 7168, 2048, 8)  # DeepSeek-V3 expert FFN, 8 experts per device


def test_mxfp8_grouped_terms_match_a_hand_computation_calibrated():
    m, k, n, g = M4_SHAPE
    p = calibration_of(B200).numbers()
    hw = B200.hardware_values()
    block = 32
    flops = 2.0 * m * k * n

    def lowp(elements: float, out_elements: float, rho: str, out: tuple[int, int]) -> float:
        # fp8 operands (1 byte) + one 1-byte e8m0 scale per 32 elements, bf16 output
        bytes_moved = elements + elements / block + 2 * out_elements
        return _calibrated_gemm(
            p,
            hw,
            flops,
            bytes_moved,
            "fp8_block_scaled_peak_tops",
            "gemm_efficiency.fp8_block",
            rho,
            out=out,
        )

    def rearrange(scales: float) -> float:  # read + write one byte per scale
        return _calibrated_cast(p, hw, 2 * scales, "rearrange", "rearrange_fixed_latency_s")

    def rearrange_k(scales: float) -> float:  # plus t_step per 4-scale-column step of M/G
        steps = math.ceil(m / (4 * block * g))  # whole steps
        base = _calibrated_cast(p, hw, 2 * scales, "rearrange_k")
        return base + p["rearrange_k_step_latency_s"] * steps

    weight = g * k * n  # the G experts' weights, cast as one G K x N tensor
    expected = {
        **_bf16_gemms(p, hw, m, k, n, g),
        "gemm.output.lowp": lowp(m * k + weight, m * n, "grouped_efficiency.2d3d", (m, n)),
        "gemm.grad_input.lowp": lowp(m * n + weight, m * k, "grouped_efficiency.2d3d", (m, k)),
        "gemm.grad_weight.lowp": lowp(k * m + m * n, weight, "grouped_efficiency.2d2d", (k, n)),
        # each cast reads bf16 (2 bytes) and writes fp8 (1 byte): dim0 rows, dim1 columns
        "cast.input.1": _calibrated_cast(p, hw, 3 * m * k, "row"),
        "cast.input.2": _calibrated_cast(p, hw, 3 * m * k, "column"),
        "cast.weight.1": _calibrated_cast(p, hw, 3 * weight, "row"),
        "cast.weight.2": _calibrated_cast(p, hw, 3 * weight, "column"),
        "cast.grad_output.1": _calibrated_cast(p, hw, 3 * m * n, "row"),
        "cast.grad_output.2": _calibrated_cast(p, hw, 3 * m * n, "column"),
        "rearrange.output.lhs": rearrange(m * k / block),
        "rearrange.output.rhs": rearrange(weight / block),
        "rearrange.grad_input.lhs": rearrange(m * n / block),
        "rearrange.grad_input.rhs": rearrange(weight / block),
        "rearrange.grad_weight.lhs": rearrange_k(k * m / block),
        "rearrange.grad_weight.rhs": rearrange_k(m * n / block),
    }
    terms = evaluate_terms(
        B200, "training", "mxfp8_cublas", m, k, n, calibration=calibration_of(B200), groups=g
    )
    assert set(terms) == set(expected)
    for key, value in expected.items():
        assert _close(terms[key], value), (key, float(terms[key]), value)
    # the serial steps dominate the K-group rearrangements at this shape (M4: ~200 us)
    assert 150e-6 < expected["rearrange.grad_weight.rhs"] < 250e-6


def test_mxfp8_grouped_terms_match_a_hand_computation_torchao():
    m, k, n, g = M4_SHAPE
    hw = B200.hardware_values()
    flops = 2.0 * m * k * n
    weight = g * k * n

    def lowp(elements: int, out_elements: int) -> float:
        # torchao counts the scales at the format's bytes: floor of elements / 32
        bytes_moved = elements + math.floor(elements / 32) + 2 * out_elements
        return _torchao_time(hw, bytes_moved, flops, "fp8_block_scaled_peak_tops")

    def bf16(elements: int, out_elements: int) -> float:
        return _torchao_time(hw, 2 * elements + 2 * out_elements, flops)

    expected = {
        "gemm.output.bf16": bf16(m * k + weight, m * n),
        "gemm.grad_input.bf16": bf16(m * n + weight, m * k),
        "gemm.grad_weight.bf16": bf16(k * m + m * n, weight),
        "gemm.output.lowp": lowp(m * k + weight, m * n),
        "gemm.grad_input.lowp": lowp(m * n + weight, m * k),
        "gemm.grad_weight.lowp": lowp(k * m + m * n, weight),
        "cast.input.1": _torchao_time(hw, 3 * m * k),
        "cast.input.2": _torchao_time(hw, 3 * m * k),
        "cast.weight.1": _torchao_time(hw, 3 * weight),
        "cast.weight.2": _torchao_time(hw, 3 * weight),
        "cast.grad_output.1": _torchao_time(hw, 3 * m * n),
        "cast.grad_output.2": _torchao_time(hw, 3 * m * n),
        "rearrange.output.lhs": _torchao_time(hw, 2 * m * k / 32),
        "rearrange.output.rhs": _torchao_time(hw, 2 * weight / 32),
        "rearrange.grad_input.lhs": _torchao_time(hw, 2 * m * n / 32),
        "rearrange.grad_input.rhs": _torchao_time(hw, 2 * weight / 32),
        "rearrange.grad_weight.lhs": _torchao_time(hw, 2 * k * m / 32),
        "rearrange.grad_weight.rhs": _torchao_time(hw, 2 * m * n / 32),
    }
    terms = evaluate_terms(B200, "training", "mxfp8_cublas", m, k, n, groups=g)
    assert set(terms) == set(expected)
    for key, value in expected.items():
        assert _close(terms[key], value), (key, float(terms[key]), value)


def test_blockwise_grouped_terms_match_a_hand_computation_on_h100():
    m, k, n, g = 32768, 7168, 2048, 8  # the M3 DeepGEMM benchmark
    p = calibration_of(H100).numbers()
    hw = H100.hardware_values()
    flops = 2.0 * m * k * n
    weight = g * k * n

    def lowp(elements: float, out_elements: float, rho: str, out: tuple[int, int]) -> float:
        # DeepGEMM's fp32 scales are not counted in the GEMM (as torchao's model)
        return _calibrated_gemm(
            p,
            hw,
            flops,
            elements + 2 * out_elements,
            "fp8_peak_tops",
            "gemm_efficiency.fp8_block",
            rho,
            out=out,
        )

    def cast(elements: float, scales: float, kind: str) -> float:
        # read bf16, write fp8 + fp32 scales
        return _calibrated_cast(p, hw, 2 * elements + elements + 4 * scales, kind)

    expected = {
        **_bf16_gemms(p, hw, m, k, n, g),
        "gemm.output.lowp": lowp(m * k + weight, m * n, "grouped_efficiency.2d3d", (m, n)),
        "gemm.grad_input.lowp": lowp(m * n + weight, m * k, "grouped_efficiency.2d3d", (m, k)),
        "gemm.grad_weight.lowp": lowp(k * m + m * n, weight, "grouped_efficiency.2d2d", (k, n)),
        "cast.input.1": cast(m * k, m * k / 128, "row"),
        "cast.input.2": cast(m * k, m * k / 128, "column"),
        "cast.weight.1": cast(weight, weight / 128**2, "tile"),
        "cast.weight.2": cast(weight, weight / 128**2, "tile"),
        "cast.grad_output.1": cast(m * n, m * n / 128, "row"),
        "cast.grad_output.2": cast(m * n, m * n / 128, "column"),
    }
    terms = evaluate_terms(
        H100, "training", "blockwise", m, k, n, calibration=calibration_of(H100), groups=g
    )
    assert set(terms) == set(expected)  # no rearrangement: DeepGEMM reads fp32 scales as they are
    for key, value in expected.items():
        assert _close(terms[key], value), (key, float(terms[key]), value)


def test_bf16_baseline_is_the_same_grouped_gemms_in_every_recipe():
    m, k, n, g = M4_SHAPE
    p = calibration_of(B200).numbers()
    hw = B200.hardware_values()
    expected = _bf16_gemms(p, hw, m, k, n, g)
    for recipe in ("mxfp8_cublas", "tensorwise", "rowwise", "mxfp4_cutlass", "nvfp4"):
        terms = evaluate_terms(
            B200, "training", recipe, m, k, n, calibration=calibration_of(B200), groups=g
        )
        for key, value in expected.items():
            assert _close(terms[key], value), (recipe, key)
    # rowwise_with_gw_hp keeps grad_weight in bf16: its "lowp" grad_weight is the bf16 GEMM
    hp = evaluate_terms(
        B200, "training", "rowwise_with_gw_hp", m, k, n, calibration=calibration_of(B200), groups=g
    )
    assert _close(hp["gemm.grad_weight.lowp"], expected["gemm.grad_weight.bf16"])


# -- the measurements -------------------------------------------------------------------


def _sets(prefix: str, grouped_only: bool = False):
    found = [
        s
        for s in MEASUREMENTS.sets
        if s.id.startswith(prefix) and (s.groups is not None or not grouped_only)
    ]
    assert found, prefix
    return found


@pytest.mark.parametrize("mset", _sets("m4-"), ids=lambda s: s.id)
def test_every_m4_kernel_time_within_15_percent(mset):
    # Issue #13: the MXFP8 grouped model reproduces each M4 kernel time within 15%.
    predicted = predict_set(mset, SPECS, load_calibration())
    for point, value in zip(mset.points, predicted, strict=True):
        assert abs(value / point.value - 1) <= 0.15, (point.label, value, point.value)


def test_m4_covers_every_kernel_of_the_grouped_layer():
    # Every GEMM, cast and rearrangement of the grouped mxfp8 layer is measured in M4.
    model = build_model("training", "mxfp8_cublas", grouped=True)
    measured = {key for s in _sets("m4-") for key in s.terms}
    lowp = {t.key for t in model.terms if t.quantity is not Quantity.BF16_GEMM}
    assert lowp == measured
    assert {s.groups for s in _sets("m4-", grouped_only=True)} == {8}


@pytest.mark.parametrize("mset", _sets("m3-", grouped_only=True), ids=lambda s: s.id)
def test_m3_grouped_sets_within_their_thresholds(mset):
    predicted = predict_set(mset, SPECS, load_calibration())
    errors = [abs(v / p.value - 1) for p, v in zip(mset.points, predicted, strict=True)]
    assert mset.max_mean_error is not None
    assert sum(errors) / len(errors) <= mset.max_mean_error


def test_the_measured_grouped_configurations_evaluate_without_capability_warnings():
    # M4 (MXFP8 on B200) and M3 (DeepGEMM blockwise on H100) ran on real grouped kernels.
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapabilityWarning)
        for gpu, recipe in ((B200, "mxfp8_cublas"), (H100, "blockwise")):
            for calibrated in (False, True):
                out = evaluate(
                    gpu, "training", recipe, 32768, 7168, 2048, calibrated=calibrated, groups=8
                )
                assert float(out["r_fp8_gemm_and_ovhd_spdp"]) > 1
