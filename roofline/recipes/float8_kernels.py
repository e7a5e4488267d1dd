"""Cast-kernel plans of the float8 recipes (tensorwise, rowwise, blockwise): which kernels
each runs and the bytes each moves, built from the pieces of :mod:`roofline.recipes.kernels`
(which holds the block-scaled recipes). The traffic counts follow torchao's roofline
utilities (``torchao/testing/training/roofline_utils.py``, release 0.18); the comments name
the kernels torchao models.
"""

from __future__ import annotations

import sympy

from roofline.recipes.kernels import (
    NUMEL,
    activation_roles,
    amax_kernels,
    bf16_to,
    cast_kernel,
    inference_plan,
    required_block,
    training_gemms,
)
from roofline.recipes.model import (
    BF16,
    FP8,
    FP32_BYTES,
    CastKernel,
    CastKind,
    ModePlan,
    Phase,
    Role,
    Scaling,
)
from roofline.symbols import DIM0

_ROW, _COLUMN = CastKind.ROW, CastKind.COLUMN
_BACKWARD = Phase.BACKWARD
_BF16 = BF16.bytes_per_element
_ZERO = sympy.Integer(0)


def tensorwise_training(scaling: Scaling) -> ModePlan:
    """Amax then cast, per tensor; the weight is cast twice (forward and backward)."""

    def activation(role: Role) -> tuple[CastKernel, ...]:
        return (
            *amax_kernels(role, fusable=True),
            bf16_to(
                role, "x_bf16, amax -> x_fp8 dim0 and dim1", FP8, copies=2, kind=CastKind.COLUMN
            ),
        )

    weight = (
        *amax_kernels(Role.WEIGHT, fusable=True),
        bf16_to(Role.WEIGHT, "w_bf16, amax -> w_fp8 dim0 (forward)", FP8),
        bf16_to(
            Role.WEIGHT,
            "w_bf16, amax -> w_fp8 dim1 (backward)",
            FP8,
            kind=CastKind.COLUMN,
            phase=_BACKWARD,
        ),
    )
    kernels = activation_roles(activation)
    # torchao's launch order: input, weight, grad_output.
    ordered = kernels[:3] + weight + kernels[3:]
    return ModePlan(training_gemms(FP8), ordered)


def rowwise_training(scaling: Scaling) -> ModePlan:
    """Row scales along each dim: a transposed bf16 copy feeds the dim1 cast."""

    def activation(role: Role) -> tuple[CastKernel, ...]:
        # Kernel 1 also writes a bf16 transposed copy; fusing kernels 1 and 2 would need
        # the whole tensor in shared memory.
        return (
            cast_kernel(
                role,
                "x_bf16 dim0 -> x_fp8 dim0, x_bf16 dim1",
                _BF16 * NUMEL,
                (FP8.bytes_per_element + _BF16) * NUMEL,
                fusable=True,
                kind=CastKind.COLUMN,
            ),
            bf16_to(role, "x_bf16 dim1 -> x_fp8 dim1", FP8, phase=_BACKWARD),
        )

    weight = (
        bf16_to(Role.WEIGHT, "w_bf16 dim0 -> w_fp8 dim0 (forward)", FP8, fusable=True),
        cast_kernel(
            Role.WEIGHT,
            "w_bf16 dim0 -> w_bf16 dim1 (transpose)",
            _BF16 * NUMEL,
            _BF16 * NUMEL,
            kind=CastKind.COLUMN,
            phase=_BACKWARD,
        ),
        bf16_to(Role.WEIGHT, "w_bf16 dim1 -> w_fp8 dim1 (backward)", FP8, phase=_BACKWARD),
    )
    kernels = activation_roles(activation)
    return ModePlan(training_gemms(FP8), kernels[:2] + weight + kernels[2:])


def rowwise_gw_hp_training(scaling: Scaling) -> ModePlan:
    """Rowwise, with the grad_weight GEMM in bf16 (activations cast once)."""

    def activation(role: Role) -> tuple[CastKernel, ...]:
        # Backward keeps the bf16 copy for the high-precision grad_weight GEMM.
        return (bf16_to(role, "x_bf16 dim0 -> x_fp8 dim0", FP8, fusable=True),)

    weight = (
        bf16_to(Role.WEIGHT, "w_bf16 -> w_fp8 dim0, w_scale dim0 (forward)", FP8),
        cast_kernel(
            Role.WEIGHT,
            "w_scale dim0 -> w_scale tensorwise (traffic not modelled)",
            _ZERO,
            _ZERO,
            kind=CastKind.REDUCE,
            phase=_BACKWARD,
        ),
        bf16_to(
            Role.WEIGHT,
            "w_bf16, w_scale tensorwise -> w_fp8 dim1 (backward)",
            FP8,
            kind=CastKind.COLUMN,
            phase=_BACKWARD,
        ),
    )
    kernels = activation_roles(activation)
    return ModePlan(training_gemms(FP8, grad_weight=BF16), kernels[:1] + weight + kernels[1:])


def blockwise_training(scaling: Scaling) -> ModePlan:
    """1 x block fp32 scales for activations and gradients, block x block for weights."""
    block = required_block(scaling)
    act = f"1x{block}"
    wgt = f"{block}x{block}"

    def quant(
        role: Role,
        description: str,
        scales: sympy.Expr,
        fusable: bool,
        kind: CastKind,
        phase: Phase | None = None,
    ) -> CastKernel:
        write = FP8.bytes_per_element * NUMEL + FP32_BYTES * scales
        return cast_kernel(role, description, _BF16 * NUMEL, write, fusable, kind, phase=phase)

    act_scales = NUMEL / block
    weight_scales = NUMEL / block**2
    kernels = (
        quant(Role.INPUT, f"x_bf16 -> x_fp8 lhs, {act} fp32 scales", act_scales, True, _ROW),
        quant(
            Role.WEIGHT,
            f"w_bf16 -> w_fp8 transposed rhs, {wgt} scales",
            weight_scales,
            False,
            CastKind.TILE,
        ),
        quant(
            Role.WEIGHT,
            f"w_bf16 -> w_fp8 rhs, {wgt} scales",
            weight_scales,
            False,
            CastKind.TILE,
            _BACKWARD,
        ),
        quant(Role.GRAD_OUTPUT, f"g_bf16 -> g_fp8 lhs, {act} scales", act_scales, True, _ROW),
        quant(
            Role.GRAD_OUTPUT,
            f"g_bf16 -> g_fp8 transposed lhs, {act} scales",
            act_scales,
            False,
            _COLUMN,
        ),
        quant(
            Role.INPUT, f"x_bf16 -> x_fp8 rhs, {act} scales", act_scales, False, _COLUMN, _BACKWARD
        ),
    )
    return ModePlan(training_gemms(FP8), kernels)


def tensorwise_inference(scaling: Scaling) -> ModePlan:
    """Amax, then cast the input."""
    return inference_plan(
        FP8,
        cast_kernel(Role.INPUT, "x_bf16 -> amax", _BF16 * NUMEL, _ZERO),
        bf16_to(Role.INPUT, "x_bf16, amax -> x_fp8", FP8),
    )


def rowwise_inference(scaling: Scaling) -> ModePlan:
    """One cast writing fp8 and an fp32 scale per row."""
    scale_bytes = FP32_BYTES * DIM0
    return inference_plan(
        FP8,
        cast_kernel(
            Role.INPUT,
            "x_bf16 -> x_fp8, fp32 scale per row",
            _BF16 * NUMEL,
            FP8.bytes_per_element * NUMEL + scale_bytes,
        ),
    )
