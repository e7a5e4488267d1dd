"""The recipe registry: every low-precision recipe as a value, not a branch (data table).

Each entry states its scaling once; its plans are built from that scaling value
(:mod:`roofline.recipes.kernels`, :mod:`roofline.recipes.float8_kernels`), so a block size
lives in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from roofline.errors import unknown
from roofline.recipes import float8_kernels as f8
from roofline.recipes import kernels as k
from roofline.recipes import stacks as st
from roofline.recipes.model import (
    FP4,
    FP8,
    FP8_BLOCK,
    Family,
    Mode,
    ModePlan,
    NativeFormat,
    Recipe,
    Scaling,
    not_modelled,
    register,
)

PlanBuilder = Callable[[Scaling], ModePlan]

_MX = Scaling("1x32 blocks", "e8m0", block_size=32, gemm_reads_scales=True)
_NV_BLOCK = 16
_NV = Scaling(
    f"1x{_NV_BLOCK} blocks (+ fp32 per-tensor scale)",
    "e4m3",
    _NV_BLOCK,
    gemm_reads_scales=True,
    output_rescale=True,
)
_NV_STATIC = Scaling(
    f"1x{_NV_BLOCK} blocks (+ calibrated per-tensor scale)",
    "e4m3",
    _NV_BLOCK,
    gemm_reads_scales=True,
    output_rescale=True,
)
_NV_NO_GLOBAL = Scaling(f"1x{_NV_BLOCK} blocks", "e4m3", _NV_BLOCK, gemm_reads_scales=True)
_BLOCKWISE_BLOCK = 128
_BLOCKWISE = Scaling(
    f"1x{_BLOCKWISE_BLOCK} activations, {_BLOCKWISE_BLOCK}x{_BLOCKWISE_BLOCK} weights",
    "fp32",
    block_size=_BLOCKWISE_BLOCK,
)
# Native MX fp8 GEMMs run at the block-scaled fp8 peak; the emulated recipe's GEMMs are
# timed as torchao times them, at the plain fp8 peak.
_MX_INFERENCE: dict[NativeFormat, PlanBuilder] = {
    NativeFormat.MXFP8: partial(k.block_inference, fmt=FP8_BLOCK, target="mxfp8"),
    NativeFormat.MXFP4: partial(k.block_inference, fmt=FP4, target="mxfp4"),
}


def _recipe(
    name: str,
    family: Family,
    summary: str,
    native: NativeFormat,
    scaling: Scaling,
    plans: Mapping[Mode, PlanBuilder],
    **extra: Any,
) -> Recipe:
    """A registry entry whose plans are built from its own ``scaling``."""
    built = {mode: build(scaling) for mode, build in plans.items()}
    return Recipe(name, family, summary, native, scaling, built, **extra)


def _mxfp8(
    name: str,
    summary: str,
    training: PlanBuilder,
    notes: str = "",
    inference: PlanBuilder = _MX_INFERENCE[NativeFormat.MXFP8],
    **extra: Any,
) -> Recipe:
    plans = {Mode.TRAINING: training, Mode.INFERENCE: inference}
    extra.setdefault("kernels", st.MXFP8_KERNELS)
    extra.setdefault("kernel_gaps", st.MXFP8_GAPS)
    extra.setdefault("grouped_kernels", st.MXFP8_GROUPED)
    return _recipe(name, Family.MX, summary, NativeFormat.MXFP8, _MX, plans, notes=notes, **extra)


def _nvfp4(
    name: str,
    summary: str,
    scaling: Scaling,
    inference: PlanBuilder,
    training: PlanBuilder | None = None,
    **extra: Any,
) -> Recipe:
    summary = f"NVFP4 ({scaling.blocks_text}) {summary}"
    plans = {Mode.TRAINING: training, Mode.INFERENCE: inference} if training else {}
    plans = plans or {Mode.INFERENCE: inference}
    extra.update(
        kernels=st.NVFP4_KERNELS, kernel_gaps=st.NVFP4_GAPS, grouped_gap=st.GROUPED_GAPS["fp4"]
    )
    return _recipe(name, Family.NVFP4, summary, NativeFormat.NVFP4, scaling, plans, **extra)


_MX_SQUARE = f"{_MX.block_size}x{_MX.block_size}"
_TWO_PASS_FP8 = partial(k.mx_two_pass_training, fmt=FP8_BLOCK)
_EMULATED_TRAINING = partial(k.mx_two_pass_training, fmt=FP8)
_EMULATED_INFERENCE = partial(k.block_inference, fmt=FP8, target="mxfp8")
_NV_CAST = partial(k.block_inference, fmt=FP4, target="nvfp4")

RECIPE_LIST: tuple[Recipe, ...] = (
    _recipe(
        "tensorwise",
        Family.FLOAT8,
        "float8 with one fp32 scale per tensor (dynamic amax)",
        NativeFormat.FP8,
        Scaling("one scale per tensor", "fp32"),
        {Mode.TRAINING: f8.tensorwise_training, Mode.INFERENCE: f8.tensorwise_inference},
        kernels=st.TENSORWISE_KERNELS,
        grouped_gap=st.GROUPED_GAPS["tensorwise"],
    ),
    _recipe(
        "rowwise",
        Family.FLOAT8,
        "float8 with one fp32 scale per row",
        NativeFormat.FP8,
        Scaling("one scale per row", "fp32"),
        {Mode.TRAINING: f8.rowwise_training, Mode.INFERENCE: f8.rowwise_inference},
        kernels=st.ROWWISE_KERNELS,
        grouped_kernels=st.ROWWISE_GROUPED,
    ),
    _recipe(
        "rowwise_with_gw_hp",
        Family.FLOAT8,
        "rowwise float8, but the grad_weight GEMM stays in bf16",
        NativeFormat.FP8,
        Scaling("one scale per row", "fp32"),
        {Mode.TRAINING: f8.rowwise_gw_hp_training},
        kernels=st.ROWWISE_KERNELS,
        grouped_kernels=st.ROWWISE_GROUPED,
    ),
    _recipe(
        "blockwise",
        Family.BLOCKWISE,
        f"float8 with 1x{_BLOCKWISE_BLOCK} scales for activations and gradients, "
        f"{_BLOCKWISE_BLOCK}x{_BLOCKWISE_BLOCK} for weights",
        NativeFormat.FP8,
        _BLOCKWISE,
        {Mode.TRAINING: f8.blockwise_training},
        divisibility=(("K", _BLOCKWISE_BLOCK), ("N", _BLOCKWISE_BLOCK)),
        notes="Scale reads inside the GEMMs are ignored, as in torchao.",
        kernels=st.BLOCKWISE_KERNELS,
        kernel_gaps=st.BLOCKWISE_GAPS,
        grouped_kernels=st.BLOCKWISE_GROUPED,
    ),
    _mxfp8(
        "mxfp8_emulated",
        f"MXFP8 ({_MX.blocks_text}), emulated GEMM",
        _EMULATED_TRAINING,
        inference=_EMULATED_INFERENCE,
        kernels=st.EMULATED_KERNELS,
        kernel_gaps={},
        emulated=True,
        grouped_kernels=st.EMULATED_GROUPED,
    ),
    _mxfp8("mxfp8_cublas", f"MXFP8 ({_MX.blocks_text}), cuBLAS GEMM", _TWO_PASS_FP8),
    _mxfp8(
        "mxfp8_cublas_rceil",
        f"MXFP8 ({_MX.blocks_text}, round-up scale), cuBLAS GEMM",
        _TWO_PASS_FP8,
    ),
    _mxfp8(
        "mxfp8_32x32_flexible_gemm_layout",
        f"MXFP8 with {_MX_SQUARE} blocks everywhere and a GEMM taking any layout (hypothetical)",
        k.mx_flexible_layout_training,
        notes="Models a GEMM with TN, NT, TT and NN layouts, which PyTorch lacks today.",
        kernels={},
        kernel_gaps=st.FLEXIBLE_LAYOUT_GAPS,
    ),
    _mxfp8(
        "mxfp8_32x32_weight",
        f"MXFP8 with {_MX_SQUARE} weight blocks, 1x{_MX.block_size} activation blocks",
        k.mx_square_weight_training,
        kernels={},
        kernel_gaps=st.SQUARE_WEIGHT_GAPS,
    ),
    _recipe(
        "mxfp4_cutlass",
        Family.MX,
        f"MXFP4 ({_MX.blocks_text}), CUTLASS fp4 GEMM",
        NativeFormat.MXFP4,
        _MX,
        {
            Mode.TRAINING: partial(k.mx_two_pass_training, fmt=FP4),
            Mode.INFERENCE: _MX_INFERENCE[NativeFormat.MXFP4],
        },
        aliases=("mxfp4",),
        kernels=st.MXFP4_KERNELS,
        kernel_gaps=st.MXFP4_GAPS,
        grouped_gap=st.GROUPED_GAPS["fp4"],
    ),
    _nvfp4(
        "nvfp4",
        "with a dynamic per-tensor scale",
        _NV,
        k.nvfp4_dynamic_inference,
        training=k.nvfp4_training,
        deviations=(
            "Follows torchao 0.18: an amax read plus the cast, modelled as one kernel; the "
            "2025-11 reference modelled one cast that wrote an extra 4-byte scale.",
        ),
    ),
    _nvfp4("nvfp4_static", "with a calibrated static per-tensor scale", _NV_STATIC, _NV_CAST),
    _nvfp4("nvfp4_no_global_scale", "without a per-tensor scale", _NV_NO_GLOBAL, _NV_CAST),
)

register(RECIPE_LIST)
RECIPES: dict[str, Recipe] = {r.name: r for r in RECIPE_LIST}
_ALIASES: dict[str, str] = {a: r.name for r in RECIPE_LIST for a in r.aliases}

#: The hardware features a recipe can need natively, in display order.
NATIVE_FORMATS: tuple[NativeFormat, ...] = tuple(NativeFormat)


def get_recipe(name: str | Recipe, mode: Mode | str | None = None) -> Recipe:
    """The recipe called ``name`` (or an alias); with ``mode``, it must be modelled there.

    Errors list the valid names (for that mode) and suggest the nearest one.
    """
    if isinstance(name, Recipe):
        recipe = name
    else:
        key = _ALIASES.get(name.lower(), name.lower())
        recipe = RECIPES.get(key)
    if mode is not None:
        mode = Mode.parse(mode)
    if recipe is None:
        choices = recipe_names(mode)
        raise unknown(f"{mode.value} recipe" if mode else "recipe", str(name), choices)
    if mode is not None and mode not in recipe.plans:
        raise not_modelled(recipe, mode)
    return recipe


def recipe_names(mode: Mode | None = None) -> list[str]:
    """Registry names (no aliases), optionally only those modelled in ``mode``."""
    return [r.name for r in RECIPE_LIST if mode is None or mode in r.plans]
