"""Cast-kernel plans: which kernels each recipe runs and the bytes each moves.

Every plan builder takes the recipe's :class:`Scaling` first, so block sizes (scale
bytes, kernel descriptions) come from the one value in the registry. Kernel bytes are
sympy expressions in the cast tensor's two dimensions ``d_0 x d_1``. The traffic counts
follow torchao's roofline utilities (``torchao/testing/training/roofline_utils.py``,
release 0.18); the comments name the kernels torchao models.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy

from roofline.recipes.model import (
    BF16,
    FP4,
    FP8,
    FP8_BLOCK,
    FP32_BYTES,
    SCALE_E8M0_BYTES,
    CastKernel,
    CastKind,
    Format,
    Gemm,
    ModePlan,
    Phase,
    Role,
    Scaling,
)
from roofline.symbols import DIM0, DIM1

NUMEL = DIM0 * DIM1
_ROW, _COLUMN = CastKind.ROW, CastKind.COLUMN
_BACKWARD = Phase.BACKWARD
_BF16 = BF16.bytes_per_element
_ZERO = sympy.Integer(0)

# Descriptions name the cast tensor x_...; each role's kernels show its own letter.
_TENSOR_LETTER = {Role.INPUT: "x_", Role.WEIGHT: "w_", Role.GRAD_OUTPUT: "g_"}


def _kernel(
    role: Role,
    description: str,
    read: sympy.Expr,
    write: sympy.Expr,
    fusable: bool = False,
    kind: CastKind = CastKind.ROW,
    launches: int = 1,
    phase: Phase | None = None,
) -> CastKernel:
    """One kernel; its phase defaults to backward for grad_output, forward otherwise."""
    text = description.replace("x_", _TENSOR_LETTER[role])
    if phase is None:
        phase = Phase.BACKWARD if role is Role.GRAD_OUTPUT else Phase.FORWARD
    return CastKernel(
        role, text, sympy.sympify(read), sympy.sympify(write), fusable, kind, launches, phase
    )


def _bf16_to(
    role: Role,
    description: str,
    out: Format,
    copies: int = 1,
    fusable: bool = False,
    kind: CastKind = CastKind.ROW,
    phase: Phase | None = None,
) -> CastKernel:
    """Read the bf16 tensor once, write ``copies`` low-precision copies."""
    write = copies * out.bytes_per_element * NUMEL
    return _kernel(role, description, _BF16 * NUMEL, write, fusable, kind, phase=phase)


def _amax(role: Role, fusable: bool) -> tuple[CastKernel, CastKernel]:
    """Tensorwise amax: stage 1 reads the tensor, stage 2 reduces partials (not modelled)."""
    return (
        _kernel(
            role,
            "x_bf16 -> amax partials (stage 1)",
            _BF16 * NUMEL,
            _ZERO,
            fusable,
            CastKind.REDUCE,
        ),
        _kernel(
            role,
            "amax partials -> amax (stage 2, traffic not modelled)",
            _ZERO,
            _ZERO,
            kind=CastKind.REDUCE,
        ),
    )


def _activation_roles(build: Callable[[Role], tuple[CastKernel, ...]]) -> tuple[CastKernel, ...]:
    """Kernels for input and grad_output, whose first read can fuse with the producer."""
    return tuple(k for role in (Role.INPUT, Role.GRAD_OUTPUT) for k in build(role))


def _training_gemms(fmt: Format, grad_weight: Format | None = None) -> dict[Gemm, Format]:
    return {Gemm.OUTPUT: fmt, Gemm.GRAD_INPUT: fmt, Gemm.GRAD_WEIGHT: grad_weight or fmt}


def _inference(fmt: Format, *kernels: CastKernel) -> ModePlan:
    return ModePlan({Gemm.OUTPUT: fmt}, tuple(kernels))


def _block(scaling: Scaling) -> int:
    """The block size of a block-scaled recipe (its plans cannot be built without one)."""
    if scaling.block_size is None:
        raise ValueError(f"scaling {scaling.layout!r} has no block size")
    return scaling.block_size


# -- float8 recipes ----------------------------------------------------------------


def tensorwise_training(scaling: Scaling) -> ModePlan:
    """Amax then cast, per tensor; the weight is cast twice (forward and backward)."""

    def activation(role: Role) -> tuple[CastKernel, ...]:
        return (
            *_amax(role, fusable=True),
            _bf16_to(
                role, "x_bf16, amax -> x_fp8 dim0 and dim1", FP8, copies=2, kind=CastKind.COLUMN
            ),
        )

    weight = (
        *_amax(Role.WEIGHT, fusable=True),
        _bf16_to(Role.WEIGHT, "w_bf16, amax -> w_fp8 dim0 (forward)", FP8),
        _bf16_to(
            Role.WEIGHT,
            "w_bf16, amax -> w_fp8 dim1 (backward)",
            FP8,
            kind=CastKind.COLUMN,
            phase=_BACKWARD,
        ),
    )
    kernels = _activation_roles(activation)
    # torchao's launch order: input, weight, grad_output.
    ordered = kernels[:3] + weight + kernels[3:]
    return ModePlan(_training_gemms(FP8), ordered)


def rowwise_training(scaling: Scaling) -> ModePlan:
    """Row scales along each dim: a transposed bf16 copy feeds the dim1 cast."""

    def activation(role: Role) -> tuple[CastKernel, ...]:
        # Kernel 1 also writes a bf16 transposed copy; fusing kernels 1 and 2 would need
        # the whole tensor in shared memory.
        return (
            _kernel(
                role,
                "x_bf16 dim0 -> x_fp8 dim0, x_bf16 dim1",
                _BF16 * NUMEL,
                (FP8.bytes_per_element + _BF16) * NUMEL,
                fusable=True,
                kind=CastKind.COLUMN,
            ),
            _bf16_to(role, "x_bf16 dim1 -> x_fp8 dim1", FP8, phase=_BACKWARD),
        )

    weight = (
        _bf16_to(Role.WEIGHT, "w_bf16 dim0 -> w_fp8 dim0 (forward)", FP8, fusable=True),
        _kernel(
            Role.WEIGHT,
            "w_bf16 dim0 -> w_bf16 dim1 (transpose)",
            _BF16 * NUMEL,
            _BF16 * NUMEL,
            kind=CastKind.COLUMN,
            phase=_BACKWARD,
        ),
        _bf16_to(Role.WEIGHT, "w_bf16 dim1 -> w_fp8 dim1 (backward)", FP8, phase=_BACKWARD),
    )
    kernels = _activation_roles(activation)
    return ModePlan(_training_gemms(FP8), kernels[:2] + weight + kernels[2:])


def rowwise_gw_hp_training(scaling: Scaling) -> ModePlan:
    """Rowwise, with the grad_weight GEMM in bf16 (activations cast once)."""

    def activation(role: Role) -> tuple[CastKernel, ...]:
        # Backward keeps the bf16 copy for the high-precision grad_weight GEMM.
        return (_bf16_to(role, "x_bf16 dim0 -> x_fp8 dim0", FP8, fusable=True),)

    weight = (
        _bf16_to(Role.WEIGHT, "w_bf16 -> w_fp8 dim0, w_scale dim0 (forward)", FP8),
        _kernel(
            Role.WEIGHT,
            "w_scale dim0 -> w_scale tensorwise (traffic not modelled)",
            _ZERO,
            _ZERO,
            kind=CastKind.REDUCE,
            phase=_BACKWARD,
        ),
        _bf16_to(
            Role.WEIGHT,
            "w_bf16, w_scale tensorwise -> w_fp8 dim1 (backward)",
            FP8,
            kind=CastKind.COLUMN,
            phase=_BACKWARD,
        ),
    )
    kernels = _activation_roles(activation)
    return ModePlan(_training_gemms(FP8, grad_weight=BF16), kernels[:1] + weight + kernels[1:])


def blockwise_training(scaling: Scaling) -> ModePlan:
    """1 x block fp32 scales for activations and gradients, block x block for weights."""
    block = _block(scaling)
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
        return _kernel(role, description, _BF16 * NUMEL, write, fusable, kind, phase=phase)

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
    return ModePlan(_training_gemms(FP8), kernels)


def tensorwise_inference(scaling: Scaling) -> ModePlan:
    """Amax, then cast the input."""
    return _inference(
        FP8,
        _kernel(Role.INPUT, "x_bf16 -> amax", _BF16 * NUMEL, _ZERO),
        _bf16_to(Role.INPUT, "x_bf16, amax -> x_fp8", FP8),
    )


def rowwise_inference(scaling: Scaling) -> ModePlan:
    """One cast writing fp8 and an fp32 scale per row."""
    scale_bytes = FP32_BYTES * DIM0
    return _inference(
        FP8,
        _kernel(
            Role.INPUT,
            "x_bf16 -> x_fp8, fp32 scale per row",
            _BF16 * NUMEL,
            FP8.bytes_per_element * NUMEL + scale_bytes,
        ),
    )


# -- block-scaled (MX / NV) recipes ------------------------------------------------


def _scale_bytes(block: int) -> sympy.Expr:
    """One-byte scales per ``block`` elements along d_1 (rows padded down, as torchao)."""
    return SCALE_E8M0_BYTES * DIM0 * sympy.floor(DIM1 / block)


def mx_two_pass_training(scaling: Scaling, fmt: Format) -> ModePlan:
    """1 x block scaling along both dims: each tensor is cast twice, once per dim.

    ``fmt`` is the GEMMs' format (FP8_BLOCK for a block-scaled fp8 GEMM); the casts write
    its bytes per element.
    """

    def casts(role: Role, fusable: bool) -> tuple[CastKernel, ...]:
        return (
            _bf16_to(role, f"x_bf16 -> x_mx{fmt.name} dim0", fmt, fusable=fusable),
            _bf16_to(
                role, f"x_bf16 -> x_mx{fmt.name} dim1", fmt, kind=CastKind.COLUMN, phase=_BACKWARD
            ),
        )

    kernels = tuple(
        k for role in (Role.INPUT, Role.WEIGHT, Role.GRAD_OUTPUT) for k in casts(role, True)
    )
    return ModePlan(_training_gemms(fmt), kernels)


def mx_flexible_layout_training(scaling: Scaling) -> ModePlan:
    """Square blocks make one cast serve both dims, given a GEMM that takes any layout."""
    block = _block(scaling)
    kernels = tuple(
        _bf16_to(
            role,
            f"x_bf16 -> x_mxfp8 ({block}x{block} blocks)",
            FP8,
            fusable=True,
            kind=CastKind.TILE,
        )
        for role in (Role.INPUT, Role.WEIGHT, Role.GRAD_OUTPUT)
    )
    return ModePlan(_training_gemms(FP8_BLOCK), kernels)


def mx_square_weight_training(scaling: Scaling) -> ModePlan:
    """Square weight blocks (cast once, transposed in fp8), 1 x block activation blocks."""
    block = _block(scaling)

    def activation(role: Role) -> tuple[CastKernel, ...]:
        return (
            _bf16_to(role, "x_bf16 -> x_mxfp8 dim0", FP8, fusable=True),
            _bf16_to(role, "x_bf16 -> x_mxfp8 dim1", FP8, kind=CastKind.COLUMN, phase=_BACKWARD),
        )

    weight = (
        _bf16_to(
            Role.WEIGHT,
            f"w_bf16 -> w_mxfp8 dim0 ({block}x{block} blocks)",
            FP8,
            kind=CastKind.TILE,
        ),
        _kernel(
            Role.WEIGHT,
            "w_mxfp8 dim0 -> w_mxfp8 dim1 (transpose)",
            FP8.bytes_per_element * NUMEL,
            FP8.bytes_per_element * NUMEL,
            kind=CastKind.COLUMN,
            phase=_BACKWARD,
        ),
    )
    kernels = _activation_roles(activation)
    return ModePlan(_training_gemms(FP8_BLOCK), kernels[:2] + weight + kernels[2:])


def block_inference(scaling: Scaling, fmt: Format, target: str) -> ModePlan:
    """One cast writing ``target`` (e.g. mxfp8) and a scale per block."""
    block = _block(scaling)
    write = fmt.bytes_per_element * NUMEL + _scale_bytes(block)
    description = f"x_bf16 -> x_{target}, {scaling.scale_dtype} scale per {block}"
    return _inference(fmt, _kernel(Role.INPUT, description, _BF16 * NUMEL, write))


def nvfp4_dynamic_inference(scaling: Scaling) -> ModePlan:
    """Amax and cast, counted as one kernel."""
    # torchao 0.18 sums the amax pass and the cast into one kernel's traffic, so the
    # launch floor applies once; in practice the amax is its own reduction kernel, which
    # the calibrated model pays for as a second launch.
    read = 2 * _BF16 * NUMEL
    write = FP4.bytes_per_element * NUMEL + _scale_bytes(_block(scaling))
    description = "x_bf16 -> amax; x_bf16, amax -> x_nvfp4 (one kernel)"
    return _inference(FP4, _kernel(Role.INPUT, description, read, write, launches=2))


def nvfp4_training(scaling: Scaling) -> ModePlan:
    """NVFP4 training (NVIDIA's recipe, as Transformer Engine and torchao's prototype run it).

    Every GEMM runs in fp4 with 1 x 16 e4m3 block scales and a per-tensor fp32 scale. The
    weight uses 16 x 16 two-dimensional blocks, so one cast serves both of its layouts. The
    grad_weight GEMM's operands (input and grad_output along the token dimension) pass
    through a random Hadamard transform (RHT) first, which needs the transformed tensor's
    amax for its per-tensor scale; gradients are cast with stochastic rounding. Kernels
    follow torchao's NVFP4 training kernels (measured on GB200): an RHT + amax pass and one
    cast writing the row copy and the RHT'd column copy of each activation.
    """
    block = _block(scaling)
    fp4_with_scales = FP4.bytes_per_element * NUMEL + SCALE_E8M0_BYTES * NUMEL / block
    both_layouts = 2 * fp4_with_scales  # a row copy and a column copy

    def activation(role: Role, rounding: str, kind: CastKind) -> tuple[CastKernel, ...]:
        return (
            _kernel(
                role,
                "x_bf16 -> amax(x_bf16), amax(RHT(x_bf16))",
                _BF16 * NUMEL,
                _ZERO,
                fusable=True,
                kind=CastKind.HADAMARD_AMAX,
            ),
            _kernel(
                role,
                f"x_bf16 -> x_nvfp4 dim0, RHT(x_bf16) -> x_nvfp4 dim1 ({rounding})",
                _BF16 * NUMEL,
                both_layouts,
                kind=kind,
            ),
        )

    weight = (
        _kernel(Role.WEIGHT, "w_bf16 -> amax", _BF16 * NUMEL, _ZERO, kind=CastKind.REDUCE),
        _kernel(
            Role.WEIGHT,
            f"w_bf16, amax -> w_nvfp4 dim0 and dim1 ({block}x{block} blocks)",
            _BF16 * NUMEL,
            both_layouts,
            kind=CastKind.FP4_TILE,
        ),
    )
    kernels = (
        *activation(Role.INPUT, "round to nearest", CastKind.HADAMARD_CAST),
        *weight,
        *activation(Role.GRAD_OUTPUT, "stochastic rounding", CastKind.HADAMARD_CAST_SR),
    )
    return ModePlan(_training_gemms(FP4), kernels)
