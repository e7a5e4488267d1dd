"""Grouped (mixture-of-experts) layers, properties: times are finite and non-negative,
more experts never cost less (bar the serial walks over M / G tokens, which get shorter),
scale rearrangements run only for block-scaled recipes with several groups, the forward
and backward phases partition the terms, and bad group counts are refused by name."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline import Support, classify, evaluate, get_recipe, load_specs
from roofline.errors import ShapeError
from roofline.evaluate import calibration_of, evaluate_columns, evaluate_terms
from roofline.model.build import build_model
from roofline.model.calibrated import GEMM_TILE_K
from roofline.model.compiled import compile_model
from roofline.model.terms import Quantity
from roofline.recipes import RECIPE_LIST, Family, Mode, Phase
from roofline.symbols import T_KSTEP

SPECS = load_specs()
B200 = SPECS["NVIDIA B200"]
H100 = SPECS["NVIDIA H100 SXM"]
CASES = [
    (gpu, recipe, mode)
    for gpu in SPECS.values()
    for recipe in RECIPE_LIST
    for mode in recipe.modes
    if classify(gpu, recipe, mode).support is not Support.IMPOSSIBLE
]
# Recipes whose low-precision GEMMs read block scales: their grouped GEMMs need the scales
# rearranged per group. Per-tensor/per-row float8 and 1x128 blockwise (fp32 scales) do not,
# nor does an emulated recipe (its grouped GEMMs run in bf16 on dequantized data).
BLOCK_SCALED = [r for r in RECIPE_LIST if r.scaling.gemm_scale_block and not r.emulated]
NOT_BLOCK_SCALED = [r for r in RECIPE_LIST if r not in BLOCK_SCALED]
REL = 1e-12


def _aligned(recipe, m: int, k: int, n: int) -> tuple[int, int, int]:
    """Round each dimension up to the recipe's required multiple."""
    dims = {"M": m, "K": k, "N": n}
    for dim, multiple in recipe.divisibility:
        dims[dim] = -(-dims[dim] // multiple) * multiple
    return dims["M"], dims["K"], dims["N"]


# -- invariants -------------------------------------------------------------------------

GROUPS = st.integers(1, 4096)


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(CASES),
    st.integers(1, 1 << 18),
    st.integers(1, 1 << 15),
    st.integers(1, 1 << 15),
    GROUPS,
    st.booleans(),
    st.booleans(),
)
def test_grouped_times_are_finite_and_nonnegative(case, m, k, n, g, fusion, calibrated):
    gpu, recipe, mode = case
    m, k, n = _aligned(recipe, m, k, n)
    calibration = calibration_of(gpu) if calibrated else None
    terms = evaluate_terms(
        gpu, mode, recipe, m, k, n, fusion=fusion, calibration=calibration, groups=g
    )
    for key, value in terms.items():
        assert math.isfinite(float(value)) and float(value) >= 0, key
    columns = evaluate_columns(
        gpu, mode, recipe, m, k, n, fusion=fusion, calibration=calibration, groups=g
    )
    assert float(columns["r_fp8_gemm_and_ovhd_spdp"]) > 0


def _rearrange_k_keys(terms) -> set[str]:
    return {key for key in terms if key.startswith("rearrange.grad_weight.")}


def _wgrad_walk_shortening_s(calibration, m: int, g_before: int, g_after: int) -> float:
    """How much shorter the calibrated weight-gradient GEMM's serial K walk gets with
    ``g_after`` groups than with ``g_before``: its reduction runs over the M tokens, and a
    2D-2D grouped GEMM's groups each walk their own M / G of them side by side (with one
    group it is the dense GEMM, walking all M), so in the walk-bound regime more groups
    take less time there, by at most the steps saved."""
    if calibration is None:
        return 0.0
    step_s = calibration.numbers()[T_KSTEP.spec_key]
    steps = [math.ceil(m / g / GEMM_TILE_K) for g in (g_before, g_after)]
    return step_s * (steps[0] - steps[1])


@settings(max_examples=120, deadline=None)
@given(
    st.sampled_from(CASES),
    st.integers(1, 1 << 18),
    st.integers(1, 1 << 15),
    st.integers(1, 1 << 15),
    GROUPS,
    st.integers(1, 512),
    st.booleans(),
    st.booleans(),
)
def test_more_experts_never_take_less_time(case, m, k, n, g, more, fusion, calibrated):
    # More experts at the same M, K, N = more weight bytes (operands, casts, scales).
    gpu, recipe, mode = case
    m, k, n = _aligned(recipe, m, k, n)
    calibration = calibration_of(gpu) if calibrated else None
    kwargs = {"fusion": fusion, "calibration": calibration}
    before = evaluate_terms(gpu, mode, recipe, m, k, n, groups=g, **kwargs)
    after = evaluate_terms(gpu, mode, recipe, m, k, n, groups=g + more, **kwargs)
    # The calibrated K-group rearrangement walks M / G tokens serially per group: more
    # groups, shorter walks (torchao's Triton kernel), so it alone may get faster.
    exempt = _rearrange_k_keys(before) if calibrated and g > 1 else set()
    shortening_s = _wgrad_walk_shortening_s(calibration, m, g, g + more)
    for key in set(before) - exempt:
        slack_s = shortening_s if key.startswith("gemm.grad_weight.") else 0.0
        assert float(after[key]) >= float(before[key]) * (1 - REL) - slack_s, key
    for key in exempt:
        assert float(after[key]) <= float(before[key]) * (1 + REL), key
    if not calibrated:  # torchao's model: every total grows with G
        old = evaluate_columns(gpu, mode, recipe, m, k, n, groups=g, fusion=fusion)
        new = evaluate_columns(gpu, mode, recipe, m, k, n, groups=g + more, fusion=fusion)
        for column in ("r_bf16_gemm_s", "r_fp8_gemm_s", "r_fp8_ovhd_s"):
            assert float(new[column]) >= float(old[column]) * (1 - REL), column


def test_calibrated_k_group_rearrangement_gets_faster_with_more_groups():
    m, k, n = 131072, 7168, 2048
    calibration = calibration_of(B200)
    times = [
        float(
            evaluate_terms(
                B200, "training", "mxfp8_cublas", m, k, n, calibration=calibration, groups=g
            )["rearrange.grad_weight.lhs"]
        )
        for g in (2, 4, 8, 16)
    ]
    assert times == sorted(times, reverse=True) and times[-1] < times[0]


def test_calibrated_weight_gradient_walk_gets_shorter_with_more_groups():
    # Hypothesis's counterexample: on MI300X (a fitted K step) 129 tokens take two K
    # steps in one dense walk and one per group with two groups, and nothing else of
    # this tiny GEMM outweighs the saved step.
    mi300x = SPECS["AMD Instinct MI300X"]
    calibration = calibration_of(mi300x)
    times = [
        float(
            evaluate_terms(
                mi300x, "training", "tensorwise", 129, 16, 16, calibration=calibration, groups=g
            )["gemm.grad_weight.lowp"]
        )
        for g in (1, 2)
    ]
    saved_s = _wgrad_walk_shortening_s(calibration, 129, 1, 2)
    assert saved_s > 0 and times[1] < times[0]
    assert times[1] >= times[0] - saved_s * (1 + REL)


@pytest.mark.parametrize("recipe", BLOCK_SCALED, ids=lambda r: r.name)
@pytest.mark.parametrize("calibrated", [False, True], ids=["torchao", "calibrated"])
def test_block_scaled_recipes_rearrange_scales_only_with_several_groups(recipe, calibrated):
    calibration = calibration_of(B200) if calibrated else None
    for mode in recipe.modes:
        one = evaluate_terms(
            B200, mode, recipe, 4096, 4096, 4096, calibration=calibration, groups=1
        )
        many = evaluate_terms(
            B200, mode, recipe, 4096, 4096, 4096, calibration=calibration, groups=[2, 8, 64]
        )
        keys = {key for key in one if key.startswith("rearrange.")}
        # training: each GEMM's two operands; inference: the activation's only
        expected = 6 if mode is Mode.TRAINING else 1
        assert len(keys) == expected, (mode, keys)
        for key in keys:
            assert float(one[key]) == 0.0, key
            assert np.all(many[key] > 0), key


@pytest.mark.parametrize("recipe", NOT_BLOCK_SCALED, ids=lambda r: r.name)
def test_recipes_without_block_scales_have_no_rearrangement(recipe):
    assert recipe.family in (Family.FLOAT8, Family.BLOCKWISE) or recipe.emulated
    for mode in recipe.modes:
        for calibrated in (False, True):
            model = build_model(mode, recipe, calibrated=calibrated, grouped=True)
            assert not [t.key for t in model.terms if t.key.startswith("rearrange.")]


@pytest.mark.parametrize(
    ("recipe", "mode"),
    [(r, m) for r in RECIPE_LIST for m in r.modes],
    ids=lambda v: getattr(v, "name", None) or str(v),
)
def test_forward_and_backward_phases_partition_the_terms(recipe, mode):
    for calibrated in (False, True):
        for fusion in (False, True):
            model = build_model(mode, recipe, fusion, calibrated=calibrated, grouped=True)
            forward = {t.key for t in model.terms if t.phase is Phase.FORWARD}
            backward = {t.key for t in model.terms if t.phase is Phase.BACKWARD}
            assert not forward & backward
            assert forward | backward == {t.key for t in model.terms}
            if mode is Mode.INFERENCE:
                assert not backward
                continue
            # grad_output exists only in the backward pass, and so do its GEMMs' operands
            assert all(not key.startswith("cast.grad_output.") for key in forward)
            gemm_keys = {t.key for t in model.terms if t.is_gemm}
            assert {k for k in gemm_keys if k in forward} == {
                "gemm.output.bf16",
                "gemm.output.lowp",
            }
            for key in forward | backward:
                if key.startswith("rearrange."):
                    assert (key in forward) == key.startswith("rearrange.output."), key
            # the forward cast kernels feed the output GEMM: input and weight
            assert any(k.startswith("cast.input.") for k in forward)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([c for c in CASES if c[2] is Mode.TRAINING]),
    st.integers(1, 1 << 17),
    st.integers(1, 1 << 14),
    st.integers(1, 1 << 14),
    GROUPS,
    st.booleans(),
)
def test_phase_times_add_up_to_the_low_precision_total(case, m, k, n, g, calibrated):
    gpu, recipe, mode = case
    m, k, n = _aligned(recipe, m, k, n)
    calibration = calibration_of(gpu) if calibrated else None
    compiled = compile_model(mode, recipe, calibrated=calibrated, grouped=True)
    terms = evaluate_terms(gpu, mode, recipe, m, k, n, calibration=calibration, groups=g)
    columns = evaluate_columns(gpu, mode, recipe, m, k, n, calibration=calibration, groups=g)
    lowp = [t for t in compiled.model.terms if t.quantity is not Quantity.BF16_GEMM]
    by_phase = {
        phase: sum(float(terms[t.key]) for t in lowp if t.phase is phase) for phase in Phase
    }
    total = float(columns["r_fp8_gemm_and_ovhd_s"])
    assert by_phase[Phase.FORWARD] > 0 and by_phase[Phase.BACKWARD] > 0
    assert math.isclose(by_phase[Phase.FORWARD] + by_phase[Phase.BACKWARD], total, rel_tol=1e-12)


# -- bad input --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "groups",
    [0, -1, 1.5, "8", float("nan"), float("inf"), 2**40, 10**30, True, [8, 0], [[1], 2]],
    ids=repr,
)
def test_bad_group_counts_are_shape_errors_naming_g(groups):
    calls = (
        lambda: evaluate(B200, "training", "mxfp8_cublas", 4096, 4096, 4096, groups=groups),
        lambda: evaluate_terms(B200, "training", "mxfp8_cublas", 4096, 4096, 4096, groups=groups),
        lambda: evaluate_columns(
            B200,
            Mode.TRAINING,
            get_recipe("mxfp8_cublas"),
            4096,
            4096,
            4096,
            calibration=calibration_of(B200),
            groups=groups,
        ),
    )
    for call in calls:
        with pytest.raises(ShapeError, match=r"\bG\b"):
            call()


def test_group_counts_that_do_not_broadcast_name_g():
    with pytest.raises(ShapeError, match=r"M, K, N, G do not broadcast.*\(3,\).*\(2,\)"):
        evaluate(B200, "training", "mxfp8_cublas", [1024, 2048, 4096], 4096, 4096, groups=[2, 8])
    with pytest.raises(ShapeError, match=r"\bG\b"):
        evaluate_terms(H100, "training", "blockwise", 4096, [128, 256], 4096, groups=[[1, 2, 3]])


def test_a_compiled_grouped_model_needs_its_group_count():
    compiled = compile_model("training", "mxfp8_cublas", grouped=True)
    one = np.array([4096.0])
    with pytest.raises(ValueError, match="group count G"):
        compiled.term_times(B200, one, one, one)
