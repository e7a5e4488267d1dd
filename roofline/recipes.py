"""The recipe registry: every low-precision recipe as a value, not a branch.

A recipe says which format each GEMM runs in, how the GEMMs read block scales, and,
per tensor role, which cast kernels run and how many bytes each moves. Kernel bytes are
sympy expressions in the cast tensor's two dimensions ``d_0 x d_1`` (see
:mod:`roofline.symbols`), so the model, the CLI and the site read the same numbers and
adding a recipe is adding one value to :data:`RECIPES`.

The traffic counts follow torchao's roofline utilities (``torchao/testing/training/
roofline_utils.py``, release 0.18); the comments name the kernels torchao models.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy

from roofline.errors import UnknownNameError, unknown
from roofline.symbols import DIM0, DIM1, PEAK_BF16, PEAK_FP4, PEAK_FP8, HardwareSymbol


class Mode(enum.StrEnum):
    """Training runs three GEMMs (forward and backward); inference runs the forward one."""

    TRAINING = "training"
    INFERENCE = "inference"

    @classmethod
    def parse(cls, name: str | Mode) -> Mode:
        """The mode named ``name`` (case-insensitive); errors list the valid modes."""
        try:
            return cls(str(name).lower())
        except ValueError:
            raise unknown("mode", str(name), [m.value for m in cls]) from None


class Role(enum.StrEnum):
    """The tensor a cast kernel converts."""

    INPUT = "input"
    WEIGHT = "weight"
    GRAD_OUTPUT = "grad_output"


class Gemm(enum.StrEnum):
    """The three GEMMs of a linear layer, named for what they produce."""

    OUTPUT = "output"  # input @ weight_t: M x K @ K x N
    GRAD_INPUT = "grad_input"  # grad_output @ weight: M x N @ N x K
    GRAD_WEIGHT = "grad_weight"  # input_t @ grad_output: K x M @ M x N


@dataclass(frozen=True)
class Format:
    """A GEMM operand format: storage bytes per element and the peak that runs it."""

    name: str
    bytes_per_element: sympy.Rational
    peak: HardwareSymbol


BF16 = Format("bf16", sympy.Integer(2), PEAK_BF16)
FP8 = Format("fp8", sympy.Integer(1), PEAK_FP8)
FP4 = Format("fp4", sympy.Rational(1, 2), PEAK_FP4)
FORMATS: dict[str, Format] = {f.name: f for f in (BF16, FP8, FP4)}

# Bytes per element of the other dtypes kernels move.
SCALE_E8M0_BYTES = sympy.Integer(1)
FP32_BYTES = sympy.Integer(4)


class Family(enum.StrEnum):
    """How a recipe scales: one scale per tensor/row, or per block of elements."""

    FLOAT8 = "float8"
    BLOCKWISE = "blockwise"
    MX = "mx"
    NVFP4 = "nvfp4"


@dataclass(frozen=True)
class CastKernel:
    """One cast kernel: bytes read and written for a ``d_0 x d_1`` tensor.

    ``read_fusable`` marks a kernel whose bf16 read can be fused into the op that
    produced the tensor; with fusion modelling on, its read costs nothing. The model
    fuses only activations (input, grad_output): a weight has no producer op in the step.
    """

    role: Role
    description: str
    read_bytes: sympy.Expr
    write_bytes: sympy.Expr
    read_fusable: bool = False

    @property
    def fuses_under_fusion(self) -> bool:
        """True when fusion modelling removes this kernel's read (activations only)."""
        return self.read_fusable and self.role is not Role.WEIGHT

    def bytes_moved(self, fused: bool) -> sympy.Expr:
        """Bytes this kernel moves, in ``d_0, d_1``, with or without fusion."""
        read = sympy.Integer(0) if fused and self.read_fusable else self.read_bytes
        return read + self.write_bytes


@dataclass(frozen=True, eq=False)
class ModePlan:
    """What a recipe runs in one mode: each GEMM's format and the cast kernels."""

    gemm_formats: Mapping[Gemm, Format]
    kernels: tuple[CastKernel, ...]

    def kernels_for(self, role: Role) -> tuple[CastKernel, ...]:
        """The cast kernels that convert ``role``, in launch order."""
        return tuple(k for k in self.kernels if k.role is role)


@dataclass(frozen=True)
class Scaling:
    """Scale granularity: ``layout`` in words, the scale dtype, and GEMM scale reads.

    ``gemm_scale_block`` is the number of operand elements per one-byte scale the GEMM
    reads (32 for MX, 16 for NV formats); None when the model ignores scale reads.
    """

    layout: str
    scale_dtype: str
    block_size: int | None = None
    gemm_scale_block: int | None = None


@dataclass(frozen=True, eq=False)
class Recipe:
    """A low-precision recipe as torchao names it, with its plan per mode."""

    name: str
    family: Family
    summary: str
    native_format: str  # the hardware feature it needs natively: fp8, mxfp8, mxfp4, nvfp4
    scaling: Scaling
    plans: Mapping[Mode, ModePlan]
    aliases: tuple[str, ...] = ()
    # (shape symbol name, multiple): shapes must divide evenly, e.g. blockwise K and N by 128.
    divisibility: tuple[tuple[str, int], ...] = ()
    notes: str = ""
    deviations: tuple[str, ...] = field(default=())

    @property
    def modes(self) -> tuple[Mode, ...]:
        """The modes this recipe is modelled in."""
        return tuple(self.plans)

    def plan(self, mode: Mode) -> ModePlan:
        """The plan for ``mode``; errors when the recipe is not modelled there."""
        return get_recipe(self, mode).plans[mode]

    def formats(self, mode: Mode) -> tuple[Format, ...]:
        """The GEMM formats this recipe needs in ``mode`` (bf16 baseline excluded)."""
        return tuple(dict.fromkeys(self.plan(mode).gemm_formats.values()))


# -- kernel helpers ----------------------------------------------------------------

NUMEL = DIM0 * DIM1
_BF16 = BF16.bytes_per_element
_ZERO = sympy.Integer(0)


# Descriptions name the cast tensor x_...; each role's kernels show its own letter.
_TENSOR_LETTER = {Role.INPUT: "x_", Role.WEIGHT: "w_", Role.GRAD_OUTPUT: "g_"}


def _kernel(
    role: Role, description: str, read: sympy.Expr, write: sympy.Expr, fusable: bool = False
) -> CastKernel:
    text = description.replace("x_", _TENSOR_LETTER[role])
    return CastKernel(role, text, sympy.sympify(read), sympy.sympify(write), fusable)


def _bf16_to(
    role: Role, description: str, out: Format, copies: int = 1, fusable: bool = False
) -> CastKernel:
    """Read the bf16 tensor once, write ``copies`` low-precision copies."""
    return _kernel(
        role, description, _BF16 * NUMEL, copies * out.bytes_per_element * NUMEL, fusable
    )


def _amax(role: Role, fusable: bool) -> tuple[CastKernel, CastKernel]:
    """Tensorwise amax: stage 1 reads the tensor, stage 2 reduces partials (not modelled)."""
    return (
        _kernel(role, "x_bf16 -> amax partials (stage 1)", _BF16 * NUMEL, _ZERO, fusable),
        _kernel(role, "amax partials -> amax (stage 2, traffic not modelled)", _ZERO, _ZERO),
    )


def _activation_roles(build) -> tuple[CastKernel, ...]:
    """Kernels for input and grad_output, whose first read can fuse with the producer."""
    return tuple(k for role in (Role.INPUT, Role.GRAD_OUTPUT) for k in build(role))


def _training_gemms(fmt: Format, grad_weight: Format | None = None) -> dict[Gemm, Format]:
    return {Gemm.OUTPUT: fmt, Gemm.GRAD_INPUT: fmt, Gemm.GRAD_WEIGHT: grad_weight or fmt}


def _inference(fmt: Format, *kernels: CastKernel) -> ModePlan:
    return ModePlan({Gemm.OUTPUT: fmt}, tuple(kernels))


# -- float8 recipes ----------------------------------------------------------------


def _tensorwise_training() -> ModePlan:
    def activation(role: Role) -> tuple[CastKernel, ...]:
        return (
            *_amax(role, fusable=True),
            _bf16_to(role, "x_bf16, amax -> x_fp8 dim0 and dim1", FP8, copies=2),
        )

    weight = (
        *_amax(Role.WEIGHT, fusable=True),
        _bf16_to(Role.WEIGHT, "w_bf16, amax -> w_fp8 dim0 (forward)", FP8),
        _bf16_to(Role.WEIGHT, "w_bf16, amax -> w_fp8 dim1 (backward)", FP8),
    )
    kernels = _activation_roles(activation)
    # torchao's launch order: input, weight, grad_output.
    ordered = kernels[:3] + weight + kernels[3:]
    return ModePlan(_training_gemms(FP8), ordered)


def _rowwise_training() -> ModePlan:
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
            ),
            _bf16_to(role, "x_bf16 dim1 -> x_fp8 dim1", FP8),
        )

    weight = (
        _bf16_to(Role.WEIGHT, "w_bf16 dim0 -> w_fp8 dim0 (forward)", FP8, fusable=True),
        _kernel(
            Role.WEIGHT, "w_bf16 dim0 -> w_bf16 dim1 (transpose)", _BF16 * NUMEL, _BF16 * NUMEL
        ),
        _bf16_to(Role.WEIGHT, "w_bf16 dim1 -> w_fp8 dim1 (backward)", FP8),
    )
    kernels = _activation_roles(activation)
    return ModePlan(_training_gemms(FP8), kernels[:2] + weight + kernels[2:])


def _rowwise_gw_hp_training() -> ModePlan:
    def activation(role: Role) -> tuple[CastKernel, ...]:
        # Backward keeps the bf16 copy for the high-precision grad_weight GEMM.
        return (_bf16_to(role, "x_bf16 dim0 -> x_fp8 dim0", FP8, fusable=True),)

    weight = (
        _bf16_to(Role.WEIGHT, "w_bf16 -> w_fp8 dim0, w_scale dim0 (forward)", FP8),
        _kernel(
            Role.WEIGHT, "w_scale dim0 -> w_scale tensorwise (traffic not modelled)", _ZERO, _ZERO
        ),
        _bf16_to(Role.WEIGHT, "w_bf16, w_scale tensorwise -> w_fp8 dim1 (backward)", FP8),
    )
    kernels = _activation_roles(activation)
    return ModePlan(_training_gemms(FP8, grad_weight=BF16), kernels[:1] + weight + kernels[1:])


def _blockwise_training() -> ModePlan:
    block = 128

    def quant(role: Role, description: str, scales: sympy.Expr, fusable: bool) -> CastKernel:
        write = FP8.bytes_per_element * NUMEL + FP32_BYTES * scales
        return _kernel(role, description, _BF16 * NUMEL, write, fusable)

    act_scales = NUMEL / block
    weight_scales = NUMEL / block**2
    kernels = (
        quant(Role.INPUT, "x_bf16 -> x_fp8 lhs, 1x128 fp32 scales", act_scales, True),
        quant(Role.WEIGHT, "w_bf16 -> w_fp8 transposed rhs, 128x128 scales", weight_scales, False),
        quant(Role.WEIGHT, "w_bf16 -> w_fp8 rhs, 128x128 scales", weight_scales, False),
        quant(Role.GRAD_OUTPUT, "g_bf16 -> g_fp8 lhs, 1x128 scales", act_scales, True),
        quant(Role.GRAD_OUTPUT, "g_bf16 -> g_fp8 transposed lhs, 1x128 scales", act_scales, False),
        quant(Role.INPUT, "x_bf16 -> x_fp8 rhs, 1x128 scales", act_scales, False),
    )
    return ModePlan(_training_gemms(FP8), kernels)


def _tensorwise_inference() -> ModePlan:
    return _inference(
        FP8,
        _kernel(Role.INPUT, "x_bf16 -> amax", _BF16 * NUMEL, _ZERO),
        _bf16_to(Role.INPUT, "x_bf16, amax -> x_fp8", FP8),
    )


def _rowwise_inference() -> ModePlan:
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


def _mx_two_pass_training(fmt: Format) -> ModePlan:
    """1x32 scaling along both dims: each tensor is cast twice, once per dim."""

    def casts(role: Role, fusable: bool) -> tuple[CastKernel, ...]:
        return (
            _bf16_to(role, f"x_bf16 -> x_mx{fmt.name} dim0", fmt, fusable=fusable),
            _bf16_to(role, f"x_bf16 -> x_mx{fmt.name} dim1", fmt),
        )

    kernels = tuple(
        k for role in (Role.INPUT, Role.WEIGHT, Role.GRAD_OUTPUT) for k in casts(role, True)
    )
    return ModePlan(_training_gemms(fmt), kernels)


def _mx_flexible_layout_training() -> ModePlan:
    # 32x32 scale blocks make one cast serve both dims, given a GEMM that takes any layout.
    kernels = tuple(
        _bf16_to(role, "x_bf16 -> x_mxfp8 (32x32 blocks)", FP8, fusable=True)
        for role in (Role.INPUT, Role.WEIGHT, Role.GRAD_OUTPUT)
    )
    return ModePlan(_training_gemms(FP8), kernels)


def _mx_32x32_weight_training() -> ModePlan:
    def activation(role: Role) -> tuple[CastKernel, ...]:
        return (
            _bf16_to(role, "x_bf16 -> x_mxfp8 dim0", FP8, fusable=True),
            _bf16_to(role, "x_bf16 -> x_mxfp8 dim1", FP8),
        )

    weight = (
        _bf16_to(Role.WEIGHT, "w_bf16 -> w_mxfp8 dim0 (32x32 blocks)", FP8),
        _kernel(
            Role.WEIGHT,
            "w_mxfp8 dim0 -> w_mxfp8 dim1 (transpose)",
            FP8.bytes_per_element * NUMEL,
            FP8.bytes_per_element * NUMEL,
        ),
    )
    kernels = _activation_roles(activation)
    return ModePlan(_training_gemms(FP8), kernels[:2] + weight + kernels[2:])


def _block_inference(fmt: Format, block: int, description: str) -> ModePlan:
    write = fmt.bytes_per_element * NUMEL + _scale_bytes(block)
    return _inference(fmt, _kernel(Role.INPUT, description, _BF16 * NUMEL, write))


def _nvfp4_dynamic_inference() -> ModePlan:
    # torchao 0.18 sums the amax pass and the cast into one kernel's traffic, so the
    # launch floor applies once.
    read = 2 * _BF16 * NUMEL
    write = FP4.bytes_per_element * NUMEL + _scale_bytes(16)
    return _inference(
        FP4,
        _kernel(Role.INPUT, "x_bf16 -> amax; x_bf16, amax -> x_nvfp4 (one kernel)", read, write),
    )


_MX_SCALING = Scaling("1x32 blocks", "e8m0", block_size=32, gemm_scale_block=32)
_NV_SCALING = Scaling(
    "1x16 blocks (+ fp32 per-tensor scale)", "e4m3", block_size=16, gemm_scale_block=16
)
_NV_STATIC_SCALING = Scaling(
    "1x16 blocks (+ calibrated per-tensor scale)", "e4m3", block_size=16, gemm_scale_block=16
)


def _mxfp8_inference() -> ModePlan:
    return _block_inference(FP8, 32, "x_bf16 -> x_mxfp8, e8m0 scale per 32")


def _mxfp8(name: str, summary: str, training: ModePlan, notes: str = "") -> Recipe:
    return Recipe(
        name=name,
        family=Family.MX,
        summary=summary,
        native_format="mxfp8",
        scaling=_MX_SCALING,
        plans={Mode.TRAINING: training, Mode.INFERENCE: _mxfp8_inference()},
        notes=notes,
    )


RECIPE_LIST: tuple[Recipe, ...] = (
    Recipe(
        name="tensorwise",
        family=Family.FLOAT8,
        summary="float8 with one fp32 scale per tensor (dynamic amax)",
        native_format="fp8",
        scaling=Scaling("one scale per tensor", "fp32"),
        plans={Mode.TRAINING: _tensorwise_training(), Mode.INFERENCE: _tensorwise_inference()},
    ),
    Recipe(
        name="rowwise",
        family=Family.FLOAT8,
        summary="float8 with one fp32 scale per row",
        native_format="fp8",
        scaling=Scaling("one scale per row", "fp32"),
        plans={Mode.TRAINING: _rowwise_training(), Mode.INFERENCE: _rowwise_inference()},
    ),
    Recipe(
        name="rowwise_with_gw_hp",
        family=Family.FLOAT8,
        summary="rowwise float8, but the grad_weight GEMM stays in bf16",
        native_format="fp8",
        scaling=Scaling("one scale per row", "fp32"),
        plans={Mode.TRAINING: _rowwise_gw_hp_training()},
    ),
    Recipe(
        name="blockwise",
        family=Family.BLOCKWISE,
        summary="float8 with 1x128 scales for activations and gradients, 128x128 for weights",
        native_format="fp8",
        scaling=Scaling("1x128 activations, 128x128 weights", "fp32", block_size=128),
        plans={Mode.TRAINING: _blockwise_training()},
        divisibility=(("K", 128), ("N", 128)),
        notes="Scale reads inside the GEMMs are ignored, as in torchao.",
    ),
    _mxfp8("mxfp8_emulated", "MXFP8 (1x32 e8m0 scales), emulated GEMM", _mx_two_pass_training(FP8)),
    _mxfp8("mxfp8_cublas", "MXFP8 (1x32 e8m0 scales), cuBLAS GEMM", _mx_two_pass_training(FP8)),
    _mxfp8(
        "mxfp8_cublas_rceil",
        "MXFP8 (1x32 e8m0 scales, round-up scale), cuBLAS GEMM",
        _mx_two_pass_training(FP8),
    ),
    _mxfp8(
        "mxfp8_32x32_flexible_gemm_layout",
        "MXFP8 with 32x32 blocks everywhere and a GEMM taking any layout (hypothetical)",
        _mx_flexible_layout_training(),
        notes="Models a GEMM with TN, NT, TT and NN layouts, which PyTorch lacks today.",
    ),
    _mxfp8(
        "mxfp8_32x32_weight",
        "MXFP8 with 32x32 weight blocks, 1x32 activation blocks",
        _mx_32x32_weight_training(),
    ),
    Recipe(
        name="mxfp4_cutlass",
        family=Family.MX,
        summary="MXFP4 (1x32 e8m0 scales), CUTLASS fp4 GEMM",
        native_format="mxfp4",
        scaling=_MX_SCALING,
        plans={
            Mode.TRAINING: _mx_two_pass_training(FP4),
            Mode.INFERENCE: _block_inference(FP4, 32, "x_bf16 -> x_mxfp4, e8m0 scale per 32"),
        },
        aliases=("mxfp4",),
    ),
    Recipe(
        name="nvfp4",
        family=Family.NVFP4,
        summary="NVFP4 (1x16 e4m3 scales) with a dynamic per-tensor scale",
        native_format="nvfp4",
        scaling=_NV_SCALING,
        plans={Mode.INFERENCE: _nvfp4_dynamic_inference()},
        deviations=(
            "Follows torchao 0.18: an amax read plus the cast, modelled as one kernel; the "
            "2025-11 reference modelled one cast that wrote an extra 4-byte scale.",
        ),
    ),
    Recipe(
        name="nvfp4_static",
        family=Family.NVFP4,
        summary="NVFP4 (1x16 e4m3 scales) with a calibrated static per-tensor scale",
        native_format="nvfp4",
        scaling=_NV_STATIC_SCALING,
        plans={Mode.INFERENCE: _block_inference(FP4, 16, "x_bf16 -> x_nvfp4, e4m3 scale per 16")},
    ),
    Recipe(
        name="nvfp4_no_global_scale",
        family=Family.NVFP4,
        summary="NVFP4 (1x16 e4m3 scales) without a per-tensor scale",
        native_format="nvfp4",
        scaling=Scaling("1x16 blocks", "e4m3", block_size=16, gemm_scale_block=16),
        plans={Mode.INFERENCE: _block_inference(FP4, 16, "x_bf16 -> x_nvfp4, e4m3 scale per 16")},
    ),
)

RECIPES: dict[str, Recipe] = {r.name: r for r in RECIPE_LIST}
_ALIASES: dict[str, str] = {a: r.name for r in RECIPE_LIST for a in r.aliases}

#: The hardware features a recipe can need natively, in display order.
NATIVE_FORMATS: tuple[str, ...] = ("fp8", "mxfp8", "mxfp4", "nvfp4")


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
        modelled = ", ".join(m.value for m in recipe.modes)
        raise UnknownNameError(
            f"recipe {recipe.name} is modelled for {modelled} only; {mode.value} recipes: "
            f"{', '.join(recipe_names(mode))}"
        )
    return recipe


def recipe_names(mode: Mode | None = None) -> list[str]:
    """Registry names (no aliases), optionally only those modelled in ``mode``."""
    return [r.name for r in RECIPE_LIST if mode is None or mode in r.plans]
