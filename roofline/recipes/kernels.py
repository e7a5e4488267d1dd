"""Cast-kernel plans: which kernels each recipe runs and the bytes each moves; this module
holds the pieces every plan is built from and the block-scaled (MX / NV) recipes' plans,
:mod:`roofline.recipes.float8_kernels` the float8 recipes'.

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
_BACKWARD = Phase.BACKWARD
_BF16 = BF16.bytes_per_element
_ZERO = sympy.Integer(0)

# Descriptions name the cast tensor x_...; each role's kernels show its own letter.
_TENSOR_LETTER = {Role.INPUT: "x_", Role.WEIGHT: "w_", Role.GRAD_OUTPUT: "g_"}


def cast_kernel(
    role: Role,
    description: str,
    read: sympy.Expr,
    write: sympy.Expr,
    fusable: bool = False,
    kind: CastKind = CastKind.ROW,
    launches: int = 1,
    phase: Phase | None = None,
    takes_prologue: bool = True,
) -> CastKernel:
    """One kernel; its phase defaults to backward for grad_output, forward otherwise."""
    text = description.replace("x_", _TENSOR_LETTER[role])
    if phase is None:
        phase = Phase.BACKWARD if role is Role.GRAD_OUTPUT else Phase.FORWARD
    read_bytes, write_bytes = sympy.sympify(read), sympy.sympify(write)
    return CastKernel(
        role, text, read_bytes, write_bytes, fusable, kind, launches, phase, takes_prologue
    )


def bf16_to(
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
    return cast_kernel(role, description, _BF16 * NUMEL, write, fusable, kind, phase=phase)


def amax_kernels(role: Role, fusable: bool) -> tuple[CastKernel, CastKernel]:
    """Tensorwise amax: stage 1 reads the tensor, stage 2 reduces partials (not modelled)."""
    return (
        cast_kernel(
            role,
            "x_bf16 -> amax partials (stage 1)",
            _BF16 * NUMEL,
            _ZERO,
            fusable,
            CastKind.REDUCE,
        ),
        cast_kernel(
            role,
            "amax partials -> amax (stage 2, traffic not modelled)",
            _ZERO,
            _ZERO,
            kind=CastKind.REDUCE,
        ),
    )


def activation_roles(build: Callable[[Role], tuple[CastKernel, ...]]) -> tuple[CastKernel, ...]:
    """Kernels for input and grad_output, whose first read can fuse with the producer."""
    return tuple(k for role in (Role.INPUT, Role.GRAD_OUTPUT) for k in build(role))


def training_gemms(fmt: Format, grad_weight: Format | None = None) -> dict[Gemm, Format]:
    """The three training GEMMs in ``fmt`` (the weight gradient in ``grad_weight`` if given)."""
    return {Gemm.OUTPUT: fmt, Gemm.GRAD_INPUT: fmt, Gemm.GRAD_WEIGHT: grad_weight or fmt}


def inference_plan(fmt: Format, *kernels: CastKernel) -> ModePlan:
    """The inference plan: the one output GEMM in ``fmt`` and ``kernels``."""
    return ModePlan({Gemm.OUTPUT: fmt}, tuple(kernels))


def required_block(scaling: Scaling) -> int:
    """The block size of a block-scaled recipe (its plans cannot be built without one)."""
    if scaling.block_size is None:
        raise ValueError(f"scaling {scaling.layout!r} has no block size")
    return scaling.block_size


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
            bf16_to(role, f"x_bf16 -> x_mx{fmt.name} dim0", fmt, fusable=fusable),
            bf16_to(
                role, f"x_bf16 -> x_mx{fmt.name} dim1", fmt, kind=CastKind.COLUMN, phase=_BACKWARD
            ),
        )

    kernels = tuple(
        k for role in (Role.INPUT, Role.WEIGHT, Role.GRAD_OUTPUT) for k in casts(role, True)
    )
    return ModePlan(training_gemms(fmt), kernels)


def mx_flexible_layout_training(scaling: Scaling) -> ModePlan:
    """Square blocks make one cast serve both dims, given a GEMM that takes any layout."""
    block = required_block(scaling)
    kernels = tuple(
        bf16_to(
            role,
            f"x_bf16 -> x_mxfp8 ({block}x{block} blocks)",
            FP8,
            fusable=True,
            kind=CastKind.TILE,
        )
        for role in (Role.INPUT, Role.WEIGHT, Role.GRAD_OUTPUT)
    )
    return ModePlan(training_gemms(FP8_BLOCK), kernels)


def mx_square_weight_training(scaling: Scaling) -> ModePlan:
    """Square weight blocks (cast once, transposed in fp8), 1 x block activation blocks."""
    block = required_block(scaling)

    def activation(role: Role) -> tuple[CastKernel, ...]:
        return (
            bf16_to(role, "x_bf16 -> x_mxfp8 dim0", FP8, fusable=True),
            bf16_to(role, "x_bf16 -> x_mxfp8 dim1", FP8, kind=CastKind.COLUMN, phase=_BACKWARD),
        )

    weight = (
        bf16_to(
            Role.WEIGHT,
            f"w_bf16 -> w_mxfp8 dim0 ({block}x{block} blocks)",
            FP8,
            kind=CastKind.TILE,
        ),
        cast_kernel(
            Role.WEIGHT,
            "w_mxfp8 dim0 -> w_mxfp8 dim1 (transpose)",
            FP8.bytes_per_element * NUMEL,
            FP8.bytes_per_element * NUMEL,
            kind=CastKind.COLUMN,
            phase=_BACKWARD,
        ),
    )
    kernels = activation_roles(activation)
    return ModePlan(training_gemms(FP8_BLOCK), kernels[:2] + weight + kernels[2:])


def block_inference(scaling: Scaling, fmt: Format, target: str) -> ModePlan:
    """One cast writing ``target`` (e.g. mxfp8) and a scale per block."""
    block = required_block(scaling)
    write = fmt.bytes_per_element * NUMEL + _scale_bytes(block)
    description = f"x_bf16 -> x_{target}, {scaling.scale_dtype} scale per {block}"
    return inference_plan(fmt, cast_kernel(Role.INPUT, description, _BF16 * NUMEL, write))


def nvfp4_dynamic_inference(scaling: Scaling) -> ModePlan:
    """Amax and cast, counted as one kernel."""
    # torchao 0.18 sums the amax pass and the cast into one kernel's traffic, so the
    # launch floor applies once; in practice the amax is its own reduction kernel, which
    # the calibrated model pays for as a second launch. The cast is torchao's Triton
    # NVFP4 quantize kernel (NVFP4DynamicActivationNVFP4WeightConfig's default
    # use_triton_kernel=True), which torch.compile cannot fuse an activation into
    # (torchao's inference.md names this 'lack of fusion for some recipes').
    read = 2 * _BF16 * NUMEL
    write = FP4.bytes_per_element * NUMEL + _scale_bytes(required_block(scaling))
    description = "x_bf16 -> amax; x_bf16, amax -> x_nvfp4 (one kernel)"
    kernel = cast_kernel(Role.INPUT, description, read, write, launches=2, takes_prologue=False)
    return inference_plan(FP4, kernel)


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
    block = required_block(scaling)
    fp4_with_scales = FP4.bytes_per_element * NUMEL + SCALE_E8M0_BYTES * NUMEL / block
    both_layouts = 2 * fp4_with_scales  # a row copy and a column copy

    def activation(role: Role, rounding: str, kind: CastKind) -> tuple[CastKernel, ...]:
        return (
            cast_kernel(
                role,
                "x_bf16 -> amax(x_bf16), amax(RHT(x_bf16))",
                _BF16 * NUMEL,
                _ZERO,
                fusable=True,
                kind=CastKind.HADAMARD_AMAX,
            ),
            cast_kernel(
                role,
                f"x_bf16 -> x_nvfp4 dim0, RHT(x_bf16) -> x_nvfp4 dim1 ({rounding})",
                _BF16 * NUMEL,
                both_layouts,
                kind=kind,
            ),
        )

    weight = (
        cast_kernel(Role.WEIGHT, "w_bf16 -> amax", _BF16 * NUMEL, _ZERO, kind=CastKind.REDUCE),
        cast_kernel(
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
    return ModePlan(training_gemms(FP4), kernels)
