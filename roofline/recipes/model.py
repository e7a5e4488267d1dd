"""The types recipes are made of: modes, formats, cast kernels, scaling and the recipe."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy

from roofline.errors import UnknownNameError, unknown
from roofline.symbols import PEAK_BF16, PEAK_FP4, PEAK_FP8, PEAK_FP8_BLOCK, HardwareSymbol


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


class Phase(enum.StrEnum):
    """The pass of a training step a GEMM or kernel runs in."""

    FORWARD = "forward"
    BACKWARD = "backward"


class Platform(enum.StrEnum):
    """The software stack a GPU runs: the libraries that provide a recipe's GEMM kernels."""

    CUDA = "cuda"  # NVIDIA: cuBLAS, CUTLASS, Triton
    ROCM = "rocm"  # AMD: hipBLASLt, Triton

    @property
    def label(self) -> str:
        """The platform as its vendor writes it (CUDA, ROCm)."""
        return {Platform.CUDA: "CUDA", Platform.ROCM: "ROCm"}[self]


@dataclass(frozen=True)
class GroupedStack:
    """The library that runs a recipe's grouped (MoE) GEMMs on a platform, and the GPU
    architectures it runs on (empty: every GPU of the platform)."""

    library: str
    architectures: tuple[str, ...] = ()


class Family(enum.StrEnum):
    """How a recipe scales: one scale per tensor/row, or per block of elements."""

    FLOAT8 = "float8"
    BLOCKWISE = "blockwise"
    MX = "mx"
    NVFP4 = "nvfp4"


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

    @property
    def phase(self) -> Phase:
        """The pass this GEMM runs in: the output GEMM forward, the others backward."""
        return Phase.FORWARD if self is Gemm.OUTPUT else Phase.BACKWARD


class NativeFormat(enum.StrEnum):
    """A hardware feature a recipe can need natively; spec files list them by value."""

    FP8 = "fp8"
    MXFP8 = "mxfp8"
    MXFP4 = "mxfp4"
    NVFP4 = "nvfp4"


@dataclass(frozen=True)
class Format:
    """A GEMM operand format: storage bytes per element and the peak that runs it."""

    name: str
    bytes_per_element: sympy.Rational
    peak: HardwareSymbol


BF16 = Format("bf16", sympy.Integer(2), PEAK_BF16)
FP8 = Format("fp8", sympy.Integer(1), PEAK_FP8)
FP4 = Format("fp4", sympy.Rational(1, 2), PEAK_FP4)
#: fp8 operands with hardware block scales (MXFP8: E8M0 per 32, FP32 accumulate): the same
#: bytes as FP8, but timed at the block-scaled peak (which falls back to the fp8 peak).
FP8_BLOCK = Format("fp8", sympy.Integer(1), PEAK_FP8_BLOCK)
#: The formats by name; FP8_BLOCK shares FP8's name and storage, so it is not listed.
FORMATS: dict[str, Format] = {f.name: f for f in (BF16, FP8, FP4)}

# Bytes per element of the other dtypes kernels move.
SCALE_E8M0_BYTES = sympy.Integer(1)
FP32_BYTES = sympy.Integer(4)


class CastKind(enum.StrEnum):
    """How a cast kernel walks memory; the calibrated model gives each kind its own
    measured bandwidth fraction (torchao's model treats all kinds alike)."""

    ROW = "row"  # reads rows contiguously, scales along a row (dim0)
    COLUMN = "column"  # scales down columns or writes a transposed copy (dim1)
    TILE = "tile"  # two-dimensional blocks (e.g. 128 x 128 weight scales)
    REDUCE = "reduce"  # an amax reduction: reads the tensor, writes almost nothing
    # Kernels only grouped (MoE) layers or NVFP4 training run, each its own measured kind:
    REARRANGE = "rearrange"  # block scales -> a grouped GEMM's per-group swizzled layout
    REARRANGE_K = "rearrange_k"  # the same for a 2D-2D GEMM, whose groups run along K
    HADAMARD_AMAX = "hadamard_amax"  # random Hadamard transform + amax (reads only)
    HADAMARD_CAST = "hadamard_cast"  # NVFP4 row + RHT'd column casts, round to nearest
    HADAMARD_CAST_SR = "hadamard_cast_sr"  # the same with stochastic rounding (gradients)
    FP4_TILE = "fp4_tile"  # NVFP4 16 x 16 weight blocks, row and column outputs


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
    kind: CastKind = CastKind.ROW
    # Kernels launched in practice for this entry (the calibrated model pays a fixed
    # latency per launch); torchao counts some two-kernel steps as one.
    launches: int = 1
    # The pass that runs it: forward casts feed the output GEMM (or run there to save
    # the tensor for backward), backward casts feed only grad_input / grad_weight.
    phase: Phase = Phase.FORWARD
    # False for a kernel torch.compile cannot fuse a producer into (an opaque Triton
    # kernel such as torchao's NVFP4 quantize): with inference fusion the activation then
    # runs as its own pass and writes its output, which the calibrated model pays for.
    takes_prologue: bool = True

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
    """Scale granularity: ``layout`` in words, the scale dtype and the block size.

    ``block_size`` is the number of elements one scale covers along a row (None for
    per-tensor and per-row scales); the kernel builders size their scale writes from it.
    ``gemm_reads_scales`` says whether the model counts the GEMMs' one-byte scale reads.
    ``output_rescale`` says whether an inference GEMM's bf16 output is multiplied by the
    operands' per-tensor scales in a kernel of its own after the GEMM (torchao's NVFP4
    path: ``torch._scaled_mm`` takes no ``scale_result`` for fp4, so
    ``_addmm_nvfp4_dispatch`` runs ``result * scale_result`` as a separate op).
    """

    layout: str
    scale_dtype: str
    block_size: int | None = None
    gemm_reads_scales: bool = False
    output_rescale: bool = False

    @property
    def gemm_scale_block(self) -> int | None:
        """Operand elements per one-byte scale the GEMM reads; None when not modelled."""
        return self.block_size if self.gemm_reads_scales else None

    @property
    def blocks_text(self) -> str:
        """``1x32 e8m0 scales``: the block shape and scale dtype, for summaries."""
        return f"1x{self.block_size} {self.scale_dtype} scales"


@dataclass(frozen=True, eq=False)
class Recipe:
    """A low-precision recipe as torchao names it, with its plan per mode."""

    name: str
    family: Family
    summary: str
    native_format: NativeFormat  # the hardware feature it needs natively
    scaling: Scaling
    plans: Mapping[Mode, ModePlan]
    aliases: tuple[str, ...] = ()
    # (shape symbol name, multiple): shapes must divide evenly, e.g. blockwise K and N by 128.
    divisibility: tuple[tuple[str, int], ...] = ()
    notes: str = ""
    deviations: tuple[str, ...] = field(default=())
    # The library that runs the recipe's low-precision GEMMs on each platform, as torchao
    # 0.18 calls it; a platform absent here has no such kernel (kernel_gaps says why).
    kernels: Mapping[Platform, str] = field(default_factory=dict)
    kernel_gaps: Mapping[Platform, str] = field(default_factory=dict)
    # True when the recipe runs its low-precision GEMMs as bf16 GEMMs on dequantized data
    # (torchao's KernelPreference.EMULATED): it runs on any GPU, at the bf16 rate.
    emulated: bool = False
    # The grouped (MoE) GEMM kernels per platform; a platform absent (or an architecture
    # not listed) has none, and grouped_gap says why.
    grouped_kernels: Mapping[Platform, GroupedStack] = field(default_factory=dict)
    grouped_gap: str = "no grouped GEMM kernel runs it"

    @property
    def modes(self) -> tuple[Mode, ...]:
        """The modes this recipe is modelled in."""
        return tuple(self.plans)

    def plan(self, mode: Mode) -> ModePlan:
        """The plan for ``mode``; errors when the recipe is not modelled there."""
        mode = Mode.parse(mode)
        if mode not in self.plans:
            raise not_modelled(self, mode)
        return self.plans[mode]

    def formats(self, mode: Mode) -> tuple[Format, ...]:
        """The GEMM formats this recipe needs in ``mode`` (bf16 baseline excluded)."""
        return tuple(dict.fromkeys(self.plan(mode).gemm_formats.values()))


#: The registry's recipes in its order. :mod:`roofline.recipes.registry` imports this module
#: and hands them over once (:func:`register`), so a recipe's own "not modelled in this
#: mode" error can list the recipes that are, without this module importing the registry.
_REGISTERED: list[Recipe] = []


def register(recipes: tuple[Recipe, ...]) -> None:
    """Make ``recipes`` (the registry, in its order) the list :func:`not_modelled` names."""
    _REGISTERED[:] = recipes


def not_modelled(recipe: Recipe, mode: Mode) -> UnknownNameError:
    """The error for ``recipe`` asked for in ``mode``, which it is not modelled in: it names
    the modes it is modelled in and the registry's recipes that are modelled in ``mode``."""
    modelled = ", ".join(m.value for m in recipe.modes)
    names = [r.name for r in _REGISTERED if mode in r.plans]
    return UnknownNameError(
        f"recipe {recipe.name} is modelled for {modelled} only; {mode.value} recipes: "
        f"{', '.join(names)}"
    )
