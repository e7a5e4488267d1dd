"""The recipe registry."""

from __future__ import annotations

import pytest
import sympy

from roofline import UnknownNameError
from roofline.recipes import RECIPE_LIST, Gemm, Mode, Role, get_recipe, recipe_names
from roofline.symbols import DIM0, DIM1

TRAINING = [
    "tensorwise",
    "rowwise",
    "rowwise_with_gw_hp",
    "blockwise",
    "mxfp8_emulated",
    "mxfp8_cublas",
    "mxfp8_cublas_rceil",
    "mxfp8_32x32_flexible_gemm_layout",
    "mxfp8_32x32_weight",
    "mxfp4_cutlass",
    "nvfp4",
]


def test_training_coverage():
    assert recipe_names(Mode.TRAINING) == TRAINING


def test_inference_coverage():
    names = set(recipe_names(Mode.INFERENCE))
    assert {"tensorwise", "rowwise", "mxfp8_cublas", "mxfp4_cutlass", "nvfp4"} <= names
    assert {"nvfp4_static", "nvfp4_no_global_scale"} <= names


def test_alias_and_case():
    assert get_recipe("MXFP4", "inference").name == "mxfp4_cutlass"


def test_unknown_recipe_suggests_nearest():
    with pytest.raises(UnknownNameError, match="Did you mean 'rowwise'"):
        get_recipe("rowwse")


def test_mode_the_recipe_lacks():
    with pytest.raises(UnknownNameError, match="modelled for training only"):
        get_recipe("rowwise_with_gw_hp", "inference")


@pytest.mark.parametrize("recipe", RECIPE_LIST, ids=lambda r: r.name)
def test_every_kernel_moves_nonnegative_bytes_in_d0_d1(recipe):
    for mode in recipe.modes:
        plan = recipe.plan(mode)
        assert plan.kernels
        for kernel in plan.kernels:
            total = kernel.bytes_moved(False)
            assert total.free_symbols <= {DIM0, DIM1}
            assert float(total.subs({DIM0: 256, DIM1: 512})) >= 0
            assert kernel.description


def test_training_plans_have_three_gemms_and_cast_every_role():
    for recipe in RECIPE_LIST:
        if Mode.TRAINING in recipe.plans:
            plan = recipe.plan(Mode.TRAINING)
            assert set(plan.gemm_formats) == set(Gemm)
            assert {k.role for k in plan.kernels} == set(Role)


def test_rowwise_with_gw_hp_keeps_grad_weight_in_bf16():
    plan = get_recipe("rowwise_with_gw_hp").plan(Mode.TRAINING)
    assert plan.gemm_formats[Gemm.GRAD_WEIGHT].name == "bf16"
    assert plan.gemm_formats[Gemm.OUTPUT].name == "fp8"


def test_inference_quantizes_only_the_input():
    for recipe in RECIPE_LIST:
        if Mode.INFERENCE in recipe.plans:
            plan = recipe.plan(Mode.INFERENCE)
            assert {k.role for k in plan.kernels} == {Role.INPUT}
            assert list(plan.gemm_formats) == [Gemm.OUTPUT]


def test_nvfp4_dynamic_is_one_kernel_of_amax_plus_cast():
    (kernel,) = get_recipe("nvfp4").plan(Mode.INFERENCE).kernels
    numel = DIM0 * DIM1
    expected = 2 * numel + (2 * numel + numel / 2 + DIM0 * sympy.floor(DIM1 / 16))
    assert sympy.simplify(kernel.bytes_moved(False) - expected) == 0


def test_blockwise_divisibility():
    assert get_recipe("blockwise").divisibility == (("K", 128), ("N", 128))
