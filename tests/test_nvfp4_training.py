"""NVFP4 training (issue #13): the plan's kernels and bytes, fp4 GEMMs, the M5 kernel
measurements, and where the recipe runs natively."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import sympy

from roofline import (
    HypotheticalWarning,
    Support,
    classify,
    evaluate,
    get_recipe,
    load_specs,
)
from roofline.analysis.validation import predict_set
from roofline.calibration.data import load_calibration
from roofline.capability import CapabilityWarning, platform_of, require
from roofline.errors import UnsupportedError
from roofline.evaluate import calibration_of, evaluate_terms
from roofline.measurements import load_measurements
from roofline.model.build import build_model
from roofline.model.terms import Quantity
from roofline.recipes import (
    FP4,
    CastKind,
    Family,
    Gemm,
    Mode,
    NativeFormat,
    Phase,
    Platform,
    Role,
)
from roofline.symbols import DIM0, DIM1

SPECS = load_specs()
MEASUREMENTS = load_measurements(specs=SPECS)
RECIPE = get_recipe("nvfp4", Mode.TRAINING)
PLAN = RECIPE.plan(Mode.TRAINING)
NUMEL = DIM0 * DIM1
# fp4 data (half a byte) + one 1-byte e4m3 scale per 1 x 16 block, for one layout
ONE_LAYOUT = sympy.Rational(1, 2) * NUMEL + NUMEL / 16
BLACKWELL_NVFP4 = ("NVIDIA B200", "NVIDIA GB200", "NVIDIA B300 SXM6 AC", "NVIDIA GB300")


def test_recipe_scales_1x16_e4m3_blocks_with_a_per_tensor_scale():
    assert RECIPE.family is Family.NVFP4
    assert RECIPE.native_format is NativeFormat.NVFP4
    assert set(RECIPE.modes) == {Mode.TRAINING, Mode.INFERENCE}
    scaling = RECIPE.scaling
    assert scaling.block_size == 16 and scaling.scale_dtype == "e4m3"
    assert scaling.gemm_scale_block == 16
    assert "per-tensor" in scaling.layout


def test_all_three_gemms_run_in_fp4():
    assert dict(PLAN.gemm_formats) == {g: FP4 for g in Gemm}
    for calibrated in (False, True):
        model = build_model("training", "nvfp4", calibrated=calibrated)
        lowp = {t.key: t for t in model.terms if t.quantity is Quantity.LOWP_GEMM}
        assert set(lowp) == {f"gemm.{g}.lowp" for g in Gemm}
        for term in lowp.values():
            # timed at the fp4 peak, never the fp8 or bf16 one
            names = {s.name for s in term.expr.free_symbols}
            assert "P_fp4" in names and not names & {"P_fp8", "P_bf16", "P_fp8blk"}, term.key


# (role, kind, phase, read bytes, write bytes, fusable, words in the description)
EXPECTED_KERNELS = [
    (Role.INPUT, CastKind.HADAMARD_AMAX, Phase.FORWARD, 2 * NUMEL, 0, True, ("RHT", "amax")),
    (
        Role.INPUT,
        CastKind.HADAMARD_CAST,
        Phase.FORWARD,
        2 * NUMEL,
        2 * ONE_LAYOUT,
        False,
        ("dim0", "RHT", "dim1", "round to nearest"),
    ),
    (Role.WEIGHT, CastKind.REDUCE, Phase.FORWARD, 2 * NUMEL, 0, False, ("amax",)),
    (
        Role.WEIGHT,
        CastKind.FP4_TILE,
        Phase.FORWARD,
        2 * NUMEL,
        2 * ONE_LAYOUT,
        False,
        ("dim0 and dim1", "16x16"),
    ),
    (
        Role.GRAD_OUTPUT,
        CastKind.HADAMARD_AMAX,
        Phase.BACKWARD,
        2 * NUMEL,
        0,
        True,
        ("RHT", "amax"),
    ),
    (
        Role.GRAD_OUTPUT,
        CastKind.HADAMARD_CAST_SR,
        Phase.BACKWARD,
        2 * NUMEL,
        2 * ONE_LAYOUT,
        False,
        ("dim0", "RHT", "dim1", "stochastic rounding"),
    ),
]


def test_training_plan_kernels_roles_kinds_phases_and_bytes():
    assert len(PLAN.kernels) == len(EXPECTED_KERNELS)
    for kernel, expected in zip(PLAN.kernels, EXPECTED_KERNELS, strict=True):
        role, kind, phase, read, write, fusable, words = expected
        assert (kernel.role, kind, kernel.phase) == (role, kernel.kind, phase), kernel
        assert sympy.simplify(kernel.read_bytes - read) == 0, kernel.description
        assert sympy.simplify(kernel.write_bytes - write) == 0, kernel.description
        assert kernel.read_fusable is fusable, kernel.description
        for word in words:
            assert word in kernel.description, (word, kernel.description)
        # only the activations' amax reads can ride on the op that produced them
        assert kernel.fuses_under_fusion is (fusable and role is not Role.WEIGHT)


def test_weight_is_cast_once_for_both_layouts_and_rht_only_on_activations():
    weight = PLAN.kernels_for(Role.WEIGHT)
    writes = [k for k in weight if k.write_bytes != 0]
    assert len(writes) == 1 and writes[0].kind is CastKind.FP4_TILE
    hadamard = {CastKind.HADAMARD_AMAX, CastKind.HADAMARD_CAST, CastKind.HADAMARD_CAST_SR}
    assert not any(k.kind in hadamard for k in weight)
    # stochastic rounding is for gradients only
    sr = [k for k in PLAN.kernels if k.kind is CastKind.HADAMARD_CAST_SR]
    assert [k.role for k in sr] == [Role.GRAD_OUTPUT]


def test_cast_bytes_at_a_concrete_shape():
    # 8192 x 4096 input: 64 MiB bf16 read, 2 layouts x (16 MiB fp4 + 2 MiB scales) written
    d0, d1 = 8192, 4096
    cast = PLAN.kernels_for(Role.INPUT)[1]
    bytes_moved = cast.bytes_moved(False).subs({DIM0: d0, DIM1: d1})
    assert bytes_moved == 2 * d0 * d1 + 2 * (d0 * d1 // 2 + d0 * d1 // 16)
    amax = PLAN.kernels_for(Role.INPUT)[0]
    assert amax.bytes_moved(True) == 0
    assert amax.bytes_moved(False).subs({DIM0: d0, DIM1: d1}) == 2 * d0 * d1


def test_fp4_gemm_terms_match_a_hand_computation_on_gb200():
    gpu = SPECS["NVIDIA GB200"]
    p = calibration_of(gpu).numbers()
    hw = gpu.hardware_values()
    m, k, n = 16384, 8192, 28672
    flops = 2.0 * m * k * n

    def calibrated(elements: int, out_elements: int) -> float:
        bytes_moved = elements / 2 + elements / 16 + 2 * out_elements
        compute = flops / (p["gemm_efficiency.fp4"] * hw["fp4_peak_tops"])
        memory = bytes_moved / (p["cast_efficiency.row"] * hw["peak_mem_bw_bytes_sec"])
        # an fp4 GEMM pays the fp4 GEMM latency; no rescale kernel in training
        return p["fp4_gemm_fixed_latency_s"] + max(compute, memory)

    def torchao(elements: int, out_elements: int) -> float:
        # torchao counts the scales at the format's half byte
        bytes_moved = (elements + math.floor(elements / 16)) / 2 + 2 * out_elements
        compute = flops / (hw["pct_achievable_gemm_tops"] * hw["fp4_peak_tops"])
        memory = bytes_moved / (hw["pct_achievable_mem_bw"] * hw["peak_mem_bw_bytes_sec"])
        return max(compute, memory, hw["kernel_launch_overhead_s"])

    operands = {
        "output": (m * k + k * n, m * n),
        "grad_input": (m * n + n * k, m * k),
        "grad_weight": (k * m + m * n, k * n),
    }
    cal = evaluate_terms(gpu, "training", "nvfp4", m, k, n, calibration=calibration_of(gpu))
    tao = evaluate_terms(gpu, "training", "nvfp4", m, k, n)
    for gemm, (elements, out) in operands.items():
        key = f"gemm.{gemm}.lowp"
        assert math.isclose(float(cal[key]), calibrated(elements, out), rel_tol=1e-12), key
        assert math.isclose(float(tao[key]), torchao(elements, out), rel_tol=1e-12), key


def test_cast_terms_match_a_hand_computation_on_gb200():
    gpu = SPECS["NVIDIA GB200"]
    p = calibration_of(gpu).numbers()
    bandwidth = gpu.hardware_values()["peak_mem_bw_bytes_sec"]
    m, k, n = 2048, 8192, 4096

    def time(kind: str, latency: str, bytes_moved: float) -> float:
        return p[latency] + bytes_moved / (p[f"cast_efficiency.{kind}"] * bandwidth)

    def written(numel: int) -> float:
        return 2 * (numel / 2 + numel / 16)

    expected = {
        "cast.input.1": time("hadamard_amax", "hadamard_amax_fixed_latency_s", 2 * m * k),
        "cast.input.2": time(
            "hadamard_cast", "hadamard_cast_fixed_latency_s", 2 * m * k + written(m * k)
        ),
        "cast.weight.1": time("reduce", "reduce_fixed_latency_s", 2 * k * n),
        "cast.weight.2": time("fp4_tile", "fp4_tile_fixed_latency_s", 2 * k * n + written(k * n)),
        "cast.grad_output.1": time("hadamard_amax", "hadamard_amax_fixed_latency_s", 2 * m * n),
        "cast.grad_output.2": time(
            "hadamard_cast_sr", "hadamard_cast_sr_fixed_latency_s", 2 * m * n + written(m * n)
        ),
    }
    terms = evaluate_terms(gpu, "training", "nvfp4", m, k, n, calibration=calibration_of(gpu))
    for key, value in expected.items():
        assert math.isclose(float(terms[key]), value, rel_tol=1e-12), key
    # fusion removes the activations' amax passes entirely: no read, no launch
    fused = evaluate_terms(
        gpu, "training", "nvfp4", m, k, n, fusion=True, calibration=calibration_of(gpu)
    )
    assert float(fused["cast.input.1"]) == 0 == float(fused["cast.grad_output.1"])
    assert math.isclose(float(fused["cast.weight.1"]), expected["cast.weight.1"], rel_tol=1e-12)


M5_SETS = [s for s in MEASUREMENTS.sets if s.id.startswith("m5-")]


def test_m5_covers_every_cast_kernel_that_writes():
    measured = {key for s in M5_SETS for key in s.terms}
    assert measured == {"cast.input.1", "cast.input.2", "cast.grad_output.2", "cast.weight.2"}
    assert {s.gpu for s in M5_SETS} == {"NVIDIA GB200"}
    assert {s.recipe for s in M5_SETS} == {"nvfp4"}
    assert {s.mode for s in M5_SETS} == {Mode.TRAINING}


@pytest.mark.parametrize("mset", M5_SETS, ids=lambda s: s.id)
def test_m5_sets_predicted_within_their_thresholds(mset):
    predicted = predict_set(mset, SPECS, load_calibration())
    errors = [abs(v / p.value - 1) for p, v in zip(mset.points, predicted, strict=True)]
    assert mset.max_mean_error is not None
    assert sum(errors) / len(errors) <= mset.max_mean_error, errors


# -- where it runs ----------------------------------------------------------------------


@pytest.mark.parametrize("gpu", list(SPECS.values()), ids=lambda g: g.name)
def test_native_exactly_on_cuda_gpus_with_nvfp4_hardware(gpu):
    verdict = classify(gpu, RECIPE, Mode.TRAINING)
    native = NativeFormat.NVFP4 in gpu.native_formats and platform_of(gpu) is Platform.CUDA
    assert (verdict.support is Support.NATIVE) is native, verdict.reason
    if gpu.value("fp4_peak_tops") is None:
        assert verdict.support is Support.IMPOSSIBLE
    elif not native:
        assert verdict.support is Support.HYPOTHETICAL
    # the same verdict as NVFP4 inference: the hardware and the stack decide, not the mode
    assert verdict.support is classify(gpu, RECIPE, Mode.INFERENCE).support


def test_native_on_blackwell_only():
    native = {
        g.name
        for g in SPECS.values()
        if classify(g, RECIPE, Mode.TRAINING).support is Support.NATIVE
    }
    assert set(BLACKWELL_NVFP4) <= native
    hopper_and_amd = [n for n in SPECS if "H100" in n or "H200" in n or "AMD" in n]
    assert hopper_and_amd and not native & set(hopper_and_amd)


@pytest.mark.parametrize("gpu_name", ["NVIDIA B200", "NVIDIA GB200"])
@pytest.mark.parametrize("calibrated", [False, True], ids=["torchao", "calibrated"])
def test_training_evaluates_on_blackwell_without_warnings(gpu_name, calibrated):
    m = np.array([2048, 16384, 65536])
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapabilityWarning)
        out = evaluate(gpu_name, "training", "nvfp4", m, 8192, 8192, calibrated=calibrated)
    # No torchao training path calls an fp4 grouped GEMM: the grouped layer is hypothetical.
    with pytest.warns(HypotheticalWarning, match="grouped"):
        grouped = evaluate(
            gpu_name, "training", "nvfp4", m, 8192, 8192, calibrated=calibrated, groups=8
        )
    for columns in (out, grouped):
        assert np.all(np.isfinite(columns["r_fp8_gemm_and_ovhd_spdp"]))
        assert np.all(columns["r_fp8_gemm_and_ovhd_spdp"] > 0)
    # fp4 GEMMs beat bf16 on large shapes, and the casts cost less than the GEMMs save
    assert out["r_fp8_gemm_and_ovhd_spdp"][-1] > 1
    assert np.all(out["r_fp8_gemm_s"] < out["r_bf16_gemm_s"])


@pytest.mark.parametrize("other", ["nvfp4_static", "nvfp4_no_global_scale"])
def test_h100_refuses_nvfp4_training_as_it_refuses_nvfp4_inference(other):
    h100 = SPECS["NVIDIA H100 SXM"]
    for recipe, mode in (("nvfp4", "training"), ("nvfp4", "inference"), (other, "inference")):
        with pytest.raises(UnsupportedError, match="fp4"):
            evaluate(h100, mode, recipe, 4096, 4096, 4096)
        with pytest.raises(UnsupportedError):
            require(h100, get_recipe(recipe), Mode(mode))


def test_amd_with_fp4_hardware_warns_hypothetical_as_for_inference():
    mi355 = SPECS["AMD Instinct MI355X"]
    for mode in ("training", "inference"):
        with pytest.warns(HypotheticalWarning, match="nvfp4"):
            out = evaluate(mi355, mode, "nvfp4", 8192, 8192, 8192)
        assert float(out["r_fp8_gemm_and_ovhd_spdp"]) > 0
